import cliProgress from 'cli-progress';
import type { CliIO } from './command.js';
import { onInterrupt } from './interrupt.js';

/** Progress of a command over its cases. */
export interface Progress {
  update: (done: number, total: number) => void;
  stop: () => void;
}

const clock = (ms: number) => {
  const s = Math.round(ms / 1000);
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
    : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

/** `eta 1:05` once a case has finished (no guess from nothing: no `eta NFs` on the first frame). */
function eta(done: number, total: number, elapsedMs: number): string {
  return done > 0 && done < total ? ` · eta ${clock((elapsedMs / done) * (total - done))}` : '';
}

export interface ProgressOptions {
  /** Without a terminal: one line per this many ms at most (default 5000). */
  everyMs?: number;
  /** Injectable clock for tests. */
  now?: () => number;
}

/**
 * A progress bar on stderr when it is a terminal; otherwise (CI logs) a plain line every few
 * seconds through io.err, so a long run still shows it is alive.
 */
export function progressBar(io: CliIO, label: string, opts: ProgressOptions = {}): Progress {
  const now = opts.now ?? Date.now;
  const start = now();
  if (!io.isTTY) {
    const every = opts.everyMs ?? 5000;
    let last = start;
    return {
      update(done, total) {
        const t = now();
        if (t - last < every || done >= total) return;
        last = t;
        io.err(
          `${label}: ${done}/${total} cases (${Math.floor((done / Math.max(total, 1)) * 100)} %) · ${clock(t - start)}${eta(done, total, t - start)}\n`,
        );
      },
      stop: () => undefined,
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {value}/{total} cases · {duration_formatted}{eta_text}`,
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let unregister: (() => void) | undefined;
  const stop = () => {
    if (started) bar.stop();
    started = false;
    unregister?.();
  };
  return {
    update(done, total) {
      const payload = { eta_text: eta(done, total, now() - start) };
      if (!started) {
        bar.start(total, 0, payload);
        started = true;
        unregister = onInterrupt(stop);
      }
      bar.update(done, payload);
    },
    stop,
  };
}

import cliProgress from 'cli-progress';
import type { CliIO } from './command.js';

/** A progress bar on stderr when it is a terminal; silent otherwise (CI logs stay readable). */
export function progressBar(io: CliIO, label: string): { update: (done: number, total: number) => void; stop: () => void } {
  if (!io.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} cases · {duration_formatted} · eta {eta_formatted}`, stream: process.stderr, hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.update(done);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

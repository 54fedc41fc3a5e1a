/**
 * Ctrl-C: `ragaudit run` (the built CLI, as a child process) receives SIGINT while a request is
 * in flight, after some cases are in its ledger. It exits 130 at once, the finished cases are
 * in the ledger, stderr says how to resume, and the resume finishes the run without asking
 * for a finished case again. Without a terminal, progress is a plain line every few seconds.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interruptMessage, RESTORE_TERMINAL, resumeHint, setResumeHint } from '../src/cli/interrupt.js';
import { progressBar } from '../src/cli/progress.js';
import { Ledger } from '../src/store/ledger.js';
import { CHAT } from './servers/openai-server.js';
import { hang } from './servers/provider-server.js';
import { rerankServer } from './servers/rerank-server.js';
import {
  CASES,
  chatServer,
  FIXTURES,
  ledgerOf,
  removeWorkDirs,
  runCli,
  spawnCli,
  startAll,
  workDir,
  zoneScore,
} from './fixtures/audit/harness.js';

const ARGS = ['run', '--config', join(FIXTURES, 'demo-remote.yml'), '--concurrency', '1'];
const K = 2;

describe('Ctrl-C during ragaudit run', { timeout: 120_000 }, () => {
  let child: ChildProcess | undefined;
  let arrivals = 0;
  // The (K+1)th request is never answered: SIGINT arrives while it is in flight.
  const chat = chatServer({
    override: () => {
      if (++arrivals !== K + 1 || !child) return undefined;
      child.kill('SIGINT');
      return hang();
    },
  });
  const tei = rerankServer({ maxBatch: 8, score: zoneScore });
  let close: () => Promise<void>;
  let env: Record<string, string>;
  const dir = workDir('interrupt');

  beforeAll(async () => {
    const started = await startAll(chat, tei);
    close = started.close;
    env = {
      GEN_PROVIDER: 'openai',
      GEN_MODEL: 'test-model',
      GEN_URL: `${started.urls[0]}/v1`,
      RERANK_URL: started.urls[1]!,
      OPENAI_API_KEY: 'sk-test-interrupt-0123456789',
    };
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await close?.();
    removeWorkDirs();
  });

  it('exits 130 with the finished cases in the ledger and the resume command printed; the resume completes', async () => {
    const started = spawnCli(ARGS, { cwd: dir, env });
    child = started.child;
    const { stderr, ...exit } = await started.exited;
    expect(exit, stderr).toEqual({ code: 130, signal: null });
    const ledger = ledgerOf(stderr)!;
    expect([...Ledger.open(ledger).done.keys()]).toEqual(CASES.slice(0, K).map((c) => c.id));
    expect(stderr).toContain(
      `interrupted: finished cases are kept in ${ledger}; resume with: ragaudit run --resume ${ledger}`,
    );

    const before = chat.count(CHAT);
    const resumed = await runCli([...ARGS, '--resume', ledger], { cwd: dir, env });
    expect(resumed.code, resumed.err).toBe(0);
    // Only the cases not in the ledger are asked (some may be gated or abstain without a call).
    expect(chat.count(CHAT) - before).toBeLessThanOrEqual(CASES.length - K);
  });
});

describe('the terminal after an interrupt, and progress without one', () => {
  it('a terminal gets its cursor and line wrapping back; the hint names the ledger', () => {
    setResumeHint(resumeHint('run', '/r/x.ledger.jsonl'));
    expect(interruptMessage(true)).toBe(
      `\r${RESTORE_TERMINAL}\ninterrupted: finished cases are kept in /r/x.ledger.jsonl; resume with: ragaudit run --resume /r/x.ledger.jsonl (and the same --config)\n`,
    );
    setResumeHint(undefined);
    expect(interruptMessage(false)).toBe('\ninterrupted (nothing to resume: run the command again)\n');
  });

  it('no TTY: a line at most every few seconds on stderr, with an eta only once a case is done', () => {
    const err: string[] = [];
    let t = 0;
    const bar = progressBar(
      { out: () => undefined, err: (s) => void err.push(s), isTTY: false, cwd: '.', env: {} },
      'run',
      { everyMs: 5000, now: () => t },
    );
    bar.update(0, 10); // t=0: too soon
    t = 6000;
    bar.update(0, 10);
    t = 7000;
    bar.update(2, 10); // 1 s after the last line: too soon
    t = 12_000;
    bar.update(3, 10);
    t = 20_000;
    bar.update(10, 10); // done: the command's own summary follows
    bar.stop();
    expect(err).toEqual(['run: 0/10 cases (0 %) · 0:06\n', 'run: 3/10 cases (30 %) · 0:12 · eta 0:28\n']);
  });
});

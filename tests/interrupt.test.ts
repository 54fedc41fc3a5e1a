/**
 * Ctrl-C: `ragaudit run` (the built CLI, as a child process) receives SIGINT while a request is
 * in flight, after some cases are in its ledger. It exits 130 at once, the finished cases are
 * in the ledger, stderr says how to resume, and the resume command, run exactly as printed,
 * finishes the run on the same cases without asking for a finished case again (the config names
 * no cases: they came from --cases, which the ledger keeps). Without a terminal, progress is a
 * plain line every few seconds.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
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
  resultsOf,
  runCli,
  spawnCli,
  startAll,
  workDir,
  zoneScore,
} from './fixtures/audit/harness.js';

const K = 2;

/** The words of a printed command, as a POSIX shell reads them (continued lines, plain words and '…' quoting). */
function shellWords(text: string): string[] {
  const joined = text.replace(/ \\\n/g, ' ');
  return (joined.match(/(?:[^\s']+|'[^']*')+/g) ?? []).map((w) => w.replace(/'([^']*)'/g, '$1'));
}

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
  // The fixture config without its cases: the run gets them from --cases only.
  const config = join(dir, 'no-cases.yml');
  writeFileSync(config, readFileSync(join(FIXTURES, 'demo-remote.yml'), 'utf8').replace(/^cases: .*\n/m, ''));
  const ARGS = ['run', '--config', 'no-cases.yml', '--cases', join(FIXTURES, 'questions.yml'), '--concurrency', '1'];

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
    // The hint names the config as an absolute path and leaves --cases to the ledger.
    const hint = /^interrupted: finished cases are kept in (\S+); resume with:\n((?:.*\n)+)/m.exec(stderr);
    expect(hint?.[1]).toBe(ledger);
    expect(hint?.[2]).toBe(`  ragaudit run --config ${config} --concurrency 1 --resume ${ledger}\n`);
    expect(Ledger.open(ledger).header.selection).toEqual({ cases: [join(FIXTURES, 'questions.yml')] });

    // The printed command, word for word (ragaudit is the CLI under test), from another directory.
    const [bin, ...argv] = shellWords(hint![2]!);
    expect(bin).toBe('ragaudit');
    const before = chat.count(CHAT);
    const resumed = await runCli(argv, { cwd: workDir('interrupt-elsewhere'), env });
    expect(resumed.code, resumed.err).toBe(0);
    // Only the cases not in the ledger are asked (some may be gated or abstain without a call).
    expect(chat.count(CHAT) - before).toBeLessThanOrEqual(CASES.length - K);
    expect(
      resultsOf(resumed)
        .cases.map((c) => c.id)
        .sort(),
    ).toEqual(CASES.map((c) => c.id).sort());
  });
});

describe('the terminal after an interrupt, and progress without one', () => {
  it('a terminal gets its cursor and line wrapping back; the hint names the ledger', () => {
    setResumeHint(resumeHint('run', '/r/x.ledger.jsonl', ['--config', '/c/a.yml']));
    expect(interruptMessage(true)).toBe(
      `\r${RESTORE_TERMINAL}\ninterrupted: finished cases are kept in /r/x.ledger.jsonl; resume with:\n  ragaudit run --config /c/a.yml --resume /r/x.ledger.jsonl\n`,
    );
    // On a narrow terminal every line fits, the command continued with ' \' so it pastes as one.
    const narrow = interruptMessage(false, 40);
    expect(narrow).toBe(
      [
        '',
        'interrupted: finished cases are kept in',
        '  /r/x.ledger.jsonl; resume with:',
        '  ragaudit run --config /c/a.yml \\',
        '    --resume /r/x.ledger.jsonl',
        '',
      ].join('\n'),
    );
    expect(shellWords(narrow.split('resume with:\n')[1]!)).toEqual([
      'ragaudit',
      'run',
      '--config',
      '/c/a.yml',
      '--resume',
      '/r/x.ledger.jsonl',
    ]);
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

/**
 * `--resume` finishes the job: the cases that ended in error are asked again (before, a resume
 * made 0 requests and kept the same errors), and the case set is checked against the one the run
 * started with — a changed question is asked again, a removed case is dropped, and both are said.
 * Requests are counted at a local OpenAI-compatible server.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CASES,
  chatQuestion,
  chatServer,
  ledgerOf,
  removeWorkDirs,
  resultsOf,
  remoteConfig,
  runCli,
  startAll,
  workDir,
} from './fixtures/audit/harness.js';
import { CHAT } from './servers/openai-server.js';
import { status } from './servers/provider-server.js';

/** The cases the faulty server fails (500 on every attempt). */
const FAILED = [CASES[1]!.id, CASES[4]!.id];
let faulty = true;

const config = (cases: string) =>
  remoteConfig({ name: 'resume-errors', cases, generator: 'concurrency: 2', judge: '{ provider: none }' });

describe('ragaudit run --resume after a faulty server', { timeout: 180_000 }, () => {
  const chat = chatServer({
    override: (req) => {
      const id = CASES.find((c) => c.question === chatQuestion(req))?.id;
      return faulty && id && FAILED.includes(id) ? status(500, { error: { message: 'overloaded' } }) : undefined;
    },
  });
  let close: () => Promise<void>;
  let cwd: string;
  let env: Record<string, string>;
  let ledger: string;
  const asked = (from: number) => chat.requestsTo(CHAT).slice(from).map(chatQuestion);

  beforeAll(async () => {
    const started = await startAll(chat);
    close = started.close;
    cwd = workDir('resume-errors');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    writeFileSync(join(cwd, 'ragaudit.yml'), config(join(cwd, 'cases.yml')));
    env = { GEN_URL: `${started.urls[0]}/v1`, OPENAI_API_KEY: 'sk-test-resume-errors-0123' };
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('the faulty run ends with two error records and exit 1', async () => {
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report'], { cwd, env });
    expect(run.code, run.err).toBe(1);
    const result = resultsOf(run);
    expect(
      result.cases
        .filter((c) => c.status === 'error')
        .map((c) => c.id)
        .sort(),
    ).toEqual([...FAILED].sort());
    ledger = ledgerOf(run.err)!;
  });

  it('the resume against a healthy server asks exactly the failed cases, and says so', async () => {
    faulty = false;
    const before = chat.count(CHAT);
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--resume', ledger], { cwd, env });
    expect(run.code, run.err).toBe(0);
    expect(asked(before).sort()).toEqual(
      CASES.filter((c) => FAILED.includes(c.id))
        .map((c) => c.question)
        .sort(),
    );
    expect(run.err).toContain(`warning: ${ledger}: 2 cases that ended in error run again (`);
    expect(resultsOf(run).cases.map((c) => [c.id, c.status])).toEqual(CASES.map((c) => [c.id, 'ok']));
  });

  it('a changed case set is said: a changed question is asked again, a removed case is dropped', async () => {
    const changed = { ...CASES[0]!, question: `${CASES[0]!.question} (asked again)` };
    const kept = [changed, ...CASES.slice(1, -1)];
    const removed = CASES.at(-1)!.id;
    writeFileSync(join(cwd, 'smaller.yml'), stringify(kept));
    const before = chat.count(CHAT);
    const run = await runCli(
      ['run', '--config', 'ragaudit.yml', '--no-report', '--cases', 'smaller.yml', '--resume', ledger],
      { cwd, env },
    );
    expect(run.code, run.err).toBe(0);
    expect(asked(before)).toEqual([changed.question]);
    expect(run.err).toContain(
      `warning: ${ledger}: the case set changed since this run started: 6 cases when the run started, 5 now; 1 finished case is no longer in the case files and dropped from the results (${removed}); 1 case changed question or expectations and run again (${changed.id})`,
    );
    const result = resultsOf(run);
    expect(result.cases.map((c) => c.id)).toEqual(kept.map((c) => c.id));
    expect(result.cases[0]!.question).toBe(changed.question);
    expect(result.warnings.some((w) => w.includes('the case set changed'))).toBe(true);
  });
});

/**
 * Resume: `ragaudit run` (the built CLI, as a child process) is killed with SIGKILL after three
 * cases, then `--resume LEDGER` finishes it. The results equal an uninterrupted run's, no finished
 * case is sent again, and a re-run of the unchanged config is answered from the cache alone.
 */
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/store/ledger.js';
import { CHAT } from './servers/openai-server.js';
import { hang } from './servers/provider-server.js';
import { rerankServer, TEI_RERANK } from './servers/rerank-server.js';
import { PREFLIGHT_QUERY } from '../src/rerank/http-rerankers.js';
import {
  CASES,
  chatQuestion,
  chatServer,
  comparable,
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

const ARGS = ['run', '--config', join(FIXTURES, 'demo-remote.yml'), '--concurrency', '1'];
/** Cases finished before the kill: the child is killed when the next case's request arrives. */
const K = 3;

describe('ragaudit run --resume after SIGKILL', { timeout: 120_000 }, () => {
  let child: ChildProcess | undefined;
  let arrivals = 0;
  /** Requests that were never answered (the one in flight when the child was killed). */
  const unanswered: string[] = [];
  // Every answer takes ~150 ms; the (K+1)th request kills the child before it is answered.
  const chat = chatServer({
    delayMs: 150,
    override: (req) => {
      if (++arrivals !== K + 1 || !child) return undefined;
      child.kill('SIGKILL');
      unanswered.push(chatQuestion(req));
      return hang();
    },
  });
  const tei = rerankServer({ maxBatch: 8, score: zoneScore });
  let close: () => Promise<void>;
  let env: Record<string, string>;
  const dir = workDir('resume');
  let ledger: string;
  /** The records the killed run had written. */
  let finished: Map<string, unknown>;
  let resumed: ReturnType<typeof resultsOf>;

  beforeAll(async () => {
    const started = await startAll(chat, tei);
    close = started.close;
    env = {
      GEN_PROVIDER: 'openai',
      GEN_MODEL: 'test-model',
      GEN_URL: `${started.urls[0]}/v1`,
      RERANK_URL: started.urls[1]!,
      OPENAI_API_KEY: 'sk-test-resume-0123456789',
    };
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await close?.();
    removeWorkDirs();
  });

  it('is killed mid-way with finished cases in its ledger', async () => {
    const started = spawnCli(ARGS, { cwd: dir, env });
    child = started.child;
    const { stderr, ...exit } = await started.exited;
    expect(exit, stderr).toEqual({ code: null, signal: 'SIGKILL' });
    expect(chat.count(CHAT)).toBe(K + 1);
    ledger = ledgerOf(stderr)!;
    expect(ledger).toMatch(/\/out\/\d{8}-\d{6}-audit-remote\.ledger\.jsonl$/);
    const open = Ledger.open(ledger);
    finished = new Map([...open.done.keys()].map((id) => [id, open.record(id)]));
    expect([...finished.keys()]).toEqual(CASES.slice(0, K).map((c) => c.id));
    expect(unanswered).toEqual([CASES[K]!.question]);
    // A write torn by the kill: the resume must drop it, not glue the next record onto it.
    appendFileSync(ledger, '{"case":{"id":"vamp-folds-too-long","question":"Deep fo');
  });

  it('resumes from the ledger without asking for any finished case again', async () => {
    const teiBefore = tei.requestsTo(TEI_RERANK).length;
    const run = await runCli([...ARGS, '--resume', ledger], { cwd: dir, env });
    expect(run.code, run.err).toBe(0);
    expect(ledgerOf(run.err)).toBe(ledger);
    resumed = resultsOf(run);
    expect(resumed.cases.map((c) => [c.id, c.status])).toEqual(CASES.map((c) => [c.id, 'ok']));
    // Finished cases come from the ledger as they were written, untouched.
    for (const c of CASES.slice(0, K)) expect(resumed.cases.find((r) => r.id === c.id)).toEqual(finished.get(c.id));
    // Per question, over the killed and the resumed run: finished cases were sent once; the one
    // in flight at the kill was never answered and was sent once more; every question answered once.
    const requests = chat.requestsTo(CHAT).map(chatQuestion);
    expect(requests).toHaveLength(CASES.length + 1);
    for (const c of CASES) {
      const sent = requests.filter((q) => q === c.question).length;
      const answered = sent - unanswered.filter((q) => q === c.question).length;
      expect([c.id, answered]).toEqual([c.id, 1]);
      if (CASES.indexOf(c) < K) expect([c.id, sent]).toEqual([c.id, 1]);
    }
    // Retrieval was not redone either: the resumed run asked TEI nothing for a finished question
    // (and took no latency sample: a resumed run reports no batch figures).
    const reranked = tei
      .requestsTo(TEI_RERANK)
      .slice(teiBefore)
      .map((r) => (r.body as { query: string }).query)
      .filter((q) => q !== PREFLIGHT_QUERY);
    for (const c of CASES.slice(0, K)) expect(reranked).not.toContain(c.question);
    expect(new Set(reranked)).toEqual(new Set(CASES.slice(K).map((c) => c.question)));
    // The torn line is gone and the ledger reads back whole.
    expect([...Ledger.open(ledger).done.keys()].sort()).toEqual(CASES.map((c) => c.id).sort());
    expect(readFileSync(ledger, 'utf8')).not.toContain('"question":"Deep fo{');
  });

  it('gives the same results as an uninterrupted run', async () => {
    const before = chat.count(CHAT);
    const run = await runCli(ARGS, { cwd: workDir('uninterrupted'), env });
    expect(run.code, run.err).toBe(0);
    expect(chat.count(CHAT) - before).toBe(CASES.length); // a fresh cache: every case asked
    const whole = resultsOf(run);
    // The killed run was the built CLI (dist/): rebuild it if src/ changed since.
    expect(whole.cases.map(comparable), 'killed run used dist/: is it built from the current src/?').toEqual(
      resumed.cases.map(comparable),
    );
    expect(whole.summary.generation).toEqual({
      ...(resumed.summary.generation as object),
      latency_ms: expect.anything(),
    });
    expect(whole.config_digest).not.toBe('');
  });

  it('re-runs an unchanged config without any model call', async () => {
    const before = chat.count(CHAT);
    const run = await runCli(ARGS, { cwd: dir, env });
    expect(run.code, run.err).toBe(0);
    expect(chat.count(CHAT)).toBe(before);
    const again = resultsOf(run);
    expect(again.file).not.toBe(resumed.file);
    expect(again.cases.every((c) => c.cached)).toBe(true);
    expect(again.cases.map(comparable)).toEqual(resumed.cases.map(comparable));
    expect(again.summary.generation).toMatchObject({ cached: CASES.length, answered: CASES.length });
  });
});

/**
 * The judge wired into `ragaudit run` and `ragaudit judge`, end to end on the embedded demo forum:
 * the generator behind one local OpenAI-compatible server, the judge (--judge openai:judge-model)
 * behind a second. A judge server that keeps failing makes that case an error record (never a
 * score); re-judging the stored results makes no generator call and names the file it re-judged.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../src/model/results.js';
import type { JudgeSummary } from '../src/model/summary.js';
import {
  CASES,
  chatServer,
  resultsOf,
  remoteConfig,
  runCli,
  startAll,
  verdictServer,
  workDir,
  type CliRun,
} from './fixtures/audit/harness.js';
import { CHAT, status, type ChatRequestBody } from './servers/index.js';

const FAILING = 'How do I reverse a linked list in Python?';
const SUBSET = CASES.filter(
  (c) => ['loake-vs-cj-price-gap', 'vamp-folds-too-long'].includes(c.id) || c.question === FAILING,
);
let judgeDown = true;

/** Valid verdicts; 500 for the FAILING question while judgeDown. */
const judgeServer = verdictServer((system) =>
  judgeDown && system.includes(FAILING) ? status(500, { error: { message: 'judge overloaded' } }) : undefined,
);
const generator = chatServer();

const config = (cases: string) =>
  remoteConfig({
    name: 'judge-wire',
    cases,
    generator: 'concurrency: 3',
    judge: `
  provider: offline
  model: heuristic
  base_url: "\${JUDGE_URL}"
  retries: 1
  prices: { judge-model: { input: 2, output: 8 } }`,
  });

describe('ragaudit run --judge and ragaudit judge', () => {
  let close: () => Promise<void>;
  let cwd = '';
  let env: Record<string, string> = {};
  let run: CliRun;
  let result: RunResult & { file: string };
  beforeAll(async () => {
    const started = await startAll(generator, judgeServer);
    close = started.close;
    cwd = workDir('judge-cli');
    // Three of the audit fixtures' cases keep the run short: two in-domain, the off-topic FAILING one.
    writeFileSync(join(cwd, 'cases.yml'), stringify(SUBSET));
    writeFileSync(join(cwd, 'ragaudit.yml'), config(join(cwd, 'cases.yml')));
    env = { GEN_URL: `${started.urls[0]}/v1`, JUDGE_URL: `${started.urls[1]}/v1` };
    run = await runCli(['run', '--config', 'ragaudit.yml', '--judge', 'openai:judge-model'], { cwd, env });
    result = resultsOf(run);
  });
  afterAll(async () => close?.());

  it('judges every answer with the separate judge model, labelled in the components', () => {
    expect(SUBSET).toHaveLength(3);
    expect(result.components.judge).toEqual({ id: 'openai:judge-model', offline: false, label: 'openai:judge-model' });
    expect(result.config).toMatchObject({ judge: { provider: 'openai', model: 'judge-model' } });
    const judgeModels = new Set(judgeServer.requestsTo(CHAT).map((r) => (r.body as ChatRequestBody).model));
    expect(judgeModels).toEqual(new Set(['judge-model']));
    expect(generator.requestsTo(CHAT).every((r) => (r.body as ChatRequestBody).model === 'gen-model')).toBe(true);
    const ok = result.cases.filter((c) => c.status === 'ok');
    expect(ok).toHaveLength(SUBSET.length - 1);
    for (const c of ok)
      expect(c.scores.map((s) => s.name)).toEqual(
        expect.arrayContaining(['faithfulness', 'judge_stance', 'correct_abstention', 'citation_relevance']),
      );
    expect(run.out).toMatch(/judge\s+openai:judge-model/);
    expect(readFileSync(result.file.replace(/\.json$/, '.md'), 'utf8')).toContain('## Judge');
  });

  it('makes a case whose judge server keeps failing an error record, not a score', () => {
    expect(run.code).toBe(1);
    const failed = result.cases.find((c) => c.question === FAILING)!;
    expect(failed.status).toBe('error');
    expect(failed.error).toMatchObject({ stage: 'judge', message: expect.stringContaining('500') });
    expect(failed.scores.some((s) => ['faithfulness', 'judge_stance', 'judge_error'].includes(s.name))).toBe(false);
    const j = result.summary.judge as JudgeSummary;
    expect(j.judge_errors).toBe(0);
    expect(j.judged).toBe(SUBSET.length - 1);
    // 1000 prompt + 100 completion tokens per judge call: cost = (in × 2 + out × 8) / 1e6.
    expect(j.tokens.input).toBe(j.tokens.output * 10);
    expect(j.cost_usd).toBeCloseTo((j.tokens.input * 2 + j.tokens.output * 8) / 1e6, 12);
  });

  it('re-judges the stored answers without a generator call and names the file it re-judged', async () => {
    const generatorCalls = generator.count(CHAT);
    const judgeCalls = judgeServer.count(CHAT);
    judgeDown = false;
    const again = await runCli(['judge', result.file, '--out', 'rejudged'], {
      cwd,
      env: { JUDGE_URL: env.JUDGE_URL! },
    });
    expect(again.code, again.err).toBe(0);
    expect(generator.count(CHAT)).toBe(generatorCalls);
    const rejudged = resultsOf(again);
    expect(rejudged.file).toContain(join(cwd, 'rejudged'));
    expect(rejudged).toMatchObject({
      kind: 'judge',
      rejudged_from: result.file,
      components: { judge: { id: 'openai:judge-model' } },
    });
    // The failed case is judged now; the others come from the judge's cache (same prompts, same evidence).
    const failed = rejudged.cases.find((c) => c.question === FAILING)!;
    expect(failed.status).toBe('ok');
    const calls = judgeServer.requestsTo(CHAT).slice(judgeCalls);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((r) => JSON.stringify(r.body).includes(FAILING.replace(/\?/g, '')))).toBe(true);
    expect(rejudged.cases.filter((c) => c.question !== FAILING).map((c) => c.scores)).toEqual(
      result.cases.filter((c) => c.question !== FAILING).map((c) => c.scores),
    );
    // Retrieval is not redone: the per-query latency stays the run's sample, not its records' batch shares.
    expect(result.summary.retrieval_batch?.latency_sample).toBeGreaterThan(0);
    expect(rejudged.summary.retrieval.latency).toEqual(result.summary.retrieval.latency);
    expect(rejudged.summary.retrieval_batch).toEqual(result.summary.retrieval_batch);
  });

  it('re-judges with the offline heuristic when asked, still without the generator', async () => {
    const generatorCalls = generator.count(CHAT);
    const again = await runCli(
      ['judge', result.file, '--judge', 'offline:heuristic', '--repeat', '2', '--out', 'heuristic'],
      { cwd, env: {} },
    );
    expect(again.code, again.err).toBe(0);
    expect(generator.count(CHAT)).toBe(generatorCalls);
    const rejudged = resultsOf(again);
    expect(rejudged.components.judge).toEqual({
      id: 'offline:heuristic',
      offline: true,
      label: 'offline:heuristic (OFFLINE STAND-IN, not a language model judge)',
    });
    expect(rejudged.summary.judge).toMatchObject({
      judge: 'offline:heuristic',
      offline: true,
      tokens: { input: 0, output: 0 },
      cost_usd: null,
    });
    expect(again.err).toContain('OFFLINE STAND-IN');
    // --repeat 2: the heuristic is deterministic, so it never disagrees with itself.
    expect((rejudged.summary.judge as JudgeSummary).self_consistency!.stance).toEqual({
      items: SUBSET.length,
      disagreeing_items: 0,
      share: 0,
    });
  });

  it('reports flip rate and spread beside each judged figure: judge --repeat N and run --judge-repeat N', async () => {
    judgeDown = false;
    // The scripted judge server gives the same verdict every time: nothing flips, spread is one point.
    const again = await runCli(['judge', result.file, '--repeat', '2', '--out', 'repeat'], {
      cwd,
      env: { JUDGE_URL: env.JUDGE_URL! },
    });
    expect(again.code, again.err).toBe(0);
    const j = resultsOf(again).summary.judge as JudgeSummary;
    expect(j.faithfulness).toMatchObject({ flip_rate: 0, repeats: 2, flip_n: SUBSET.length });
    expect(j.faithfulness.spread).toEqual({ min: j.faithfulness.mean, max: j.faithfulness.mean });
    expect(j.correct_abstention).toMatchObject({ flip_rate: 0, repeats: 2 });
    expect(again.out).toMatch(/flip rate: faithfulness\s+0\.0 ?% of 3 cases, 2 judgments each/);
    // One pass: the audit judges each answer twice (the generator's answers come from its cache).
    const one = await runCli(
      ['run', '--config', 'ragaudit.yml', '--judge', 'offline:heuristic', '--judge-repeat', '2', '--out', 'run-repeat'],
      { cwd, env },
    );
    expect(one.code, one.err).toBe(0);
    const r = resultsOf(one).summary.judge as JudgeSummary;
    expect(r.faithfulness).toMatchObject({ flip_rate: 0, repeats: 2 });
    expect(readFileSync(resultsOf(one).file.replace(/\.json$/, '.md'), 'utf8')).toContain('flip rate: faithfulness');
    const clash = await runCli(['judge', result.file, '--repeat', '2', '--judge-repeat', '3'], { cwd, env: {} });
    expect(clash).toMatchObject({ code: 2, err: expect.stringContaining('--repeat 2 and --judge-repeat 3 disagree') });
  });

  it('rejects --judge with --no-judge, and a bad --repeat', async () => {
    const both = await runCli(['judge', result.file, '--judge', 'offline:heuristic', '--no-judge'], { cwd, env: {} });
    expect(both).toMatchObject({
      code: 2,
      err: expect.stringContaining('--judge and --no-judge cannot be given together'),
    });
    const bad = await runCli(['judge', result.file, '--repeat', '0'], { cwd, env: {} });
    expect(bad).toMatchObject({ code: 2, err: expect.stringContaining('--repeat: expected a positive integer') });
  });
});

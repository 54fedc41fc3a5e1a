/**
 * `run --dry-run` and `judge RESULTS --dry-run` on the embedded demo forum, the generator and
 * the judge behind local OpenAI-compatible servers: a dry run sends them nothing (not even the
 * check before the first case), exits 0, and prints per component the requests, the cached ones,
 * the estimated tokens and the cost at the configured prices. The generator's input tokens are
 * those of the prompts the real run then sends (characters / 4); after the real run every
 * request is found in the response cache.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CASES,
  chatServer,
  remoteConfig,
  removeWorkDirs,
  resultsOf,
  runCli,
  startAll,
  verdictServer,
  workDir,
  type CliRun,
} from './fixtures/audit/harness.js';
import { CHAT, type ChatRequestBody } from './servers/index.js';
import { rerankServer, TEI_RERANK } from './servers/rerank-server.js';
import { PREFLIGHT_QUERY } from '../src/rerank/http-rerankers.js';

const SUBSET = CASES.filter((c) => ['loake-vs-cj-price-gap', 'vamp-folds-too-long'].includes(c.id));
const generator = chatServer();
const judge = verdictServer();

const CONFIG = (cases: string) =>
  remoteConfig({
    name: 'dry',
    cases,
    generator: 'max_tokens: 500, prices: { gen-model: { input: 1, output: 2 } }',
    judge: `
  provider: openai
  model: judge-model
  base_url: "\${JUDGE_URL}"
  max_tokens: 1000
  prices: { judge-model: { input: 0, output: 1 } }`,
  });

/** A component's row of the plan table: its cells, split at the column gaps. */
function planRow(out: string, role: string): string[] {
  const line = out.split('\n').find((l) => l.startsWith(`${role} `));
  if (!line) throw new Error(`no ${role} row in:\n${out}`);
  return line.trim().split(/\s{2,}/);
}

const COLUMNS = { role: 0, model: 1, requests: 2, cached: 3, send: 4, batch: 5, input: 6, output: 7, cost: 8 };
const cell = (out: string, role: string, col: keyof typeof COLUMNS) => planRow(out, role)[COLUMNS[col]]!;

describe('a dry run', { timeout: 180_000 }, () => {
  let close: () => Promise<void>;
  let cwd = '';
  let env: Record<string, string> = {};
  let dry: CliRun;
  let real: CliRun;
  let again: CliRun;
  let judgeDry: CliRun;
  let sentToGenerator: ChatRequestBody[] = [];
  let sentToJudge = 0;
  beforeAll(async () => {
    const started = await startAll(generator, judge);
    close = started.close;
    cwd = workDir('dry-run');
    writeFileSync(join(cwd, 'cases.yml'), stringify(SUBSET));
    writeFileSync(join(cwd, 'ragaudit.yml'), CONFIG(join(cwd, 'cases.yml')));
    // COLUMNS 120: the plan must fit a 120-column console.
    env = { GEN_URL: `${started.urls[0]}/v1`, JUDGE_URL: `${started.urls[1]}/v1`, COLUMNS: '120' };
    dry = await runCli(['run', '--config', 'ragaudit.yml', '--dry-run'], { cwd, env });
    expect(generator.requests).toHaveLength(0);
    expect(judge.requests).toHaveLength(0);
    real = await runCli(['run', '--config', 'ragaudit.yml'], { cwd, env });
    sentToGenerator = generator.requestsTo(CHAT).map((r) => r.body as ChatRequestBody);
    sentToJudge = judge.requestsTo(CHAT).length;
    generator.requests.length = 0;
    judge.requests.length = 0;
    again = await runCli(['run', '--config', 'ragaudit.yml', '--dry-run'], { cwd, env });
    judgeDry = await runCli(['judge', resultsOf(real).file, '--dry-run'], { cwd, env });
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('sends no request to the generator or the judge and exits 0', () => {
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out).toContain('dry run of run: nothing was sent');
    expect(dry.out).toContain('cases 2 · stopped by the input gate 0 · ended before generation 0 · answered 2');
    expect(dry.out).not.toMatch(/^results:/m);
    // Checked right after the dry run (beforeAll); after the last dry runs too.
    expect(generator.requests).toHaveLength(0);
    expect(judge.requests).toHaveLength(0);
  });

  it('prints the counts and the cost per component from the config', () => {
    // Generator: 2 answers, nothing cached; output at max_tokens 500 each = 1000 tokens.
    expect(cell(dry.out, 'generator', 'requests')).toBe('2');
    expect(cell(dry.out, 'generator', 'cached')).toBe('0');
    expect(cell(dry.out, 'generator', 'send')).toBe('2');
    expect(cell(dry.out, 'generator', 'batch')).toBe('no');
    expect(cell(dry.out, 'generator', 'output')).toBe('1000');
    // Cost = (input × $1 + 1000 × $2) / 1e6.
    const input = Number(cell(dry.out, 'generator', 'input'));
    expect(cell(dry.out, 'generator', 'cost')).toBe(`$${((input * 1 + 1000 * 2) / 1e6).toFixed(4)}`);
    // Judge: 3 verdicts per answer (faithfulness, stance, citations: both cases show sources, so
    // the assumed answer cites) = 6 requests at max_tokens 1000 = 6000 tokens × $1 / 1e6 = $0.0060.
    expect(cell(dry.out, 'judge', 'requests')).toBe('6');
    expect(cell(dry.out, 'judge', 'output')).toBe('6000');
    expect(cell(dry.out, 'judge', 'cost')).toBe('$0.0060');
    // Offline embedder and reranker: local, nothing sent.
    expect(cell(dry.out, 'embedder', 'cost')).toBe('offline: nothing sent');
    expect(cell(dry.out, 'reranker', 'model')).toBe('offline:lexical');
    expect(cell(dry.out, 'total', 'requests')).toBe('8');
    expect(dry.out).toContain('characters / 4');
    expect(dry.out).toContain("2 answers are not in the cache: the judge's prompts for them hold a placeholder");
  });

  it('estimates the generator input from the prompts the real run then sends', () => {
    expect(real.code, real.err).toBe(0);
    expect(sentToGenerator).toHaveLength(2);
    // characters / 4, rounded up per request, of the system prompt and the messages sent.
    const expected = sentToGenerator.reduce(
      (a, b) => a + Math.ceil(b.messages.reduce((n, m) => n + String(m.content).length, 0) / 4),
      0,
    );
    expect(Number(cell(dry.out, 'generator', 'input'))).toBe(expected);
    expect(sentToJudge).toBe(6);
  });

  it('finds every request of an unchanged run in the response cache', () => {
    expect(again.code, again.err).toBe(0);
    expect(planRow(again.out, 'generator').slice(2, 8)).toEqual(['2', '2', '0', 'no', '0', '0']);
    // The judge now sees the real (cached) answers: the same 6 requests, all cached.
    expect(planRow(again.out, 'judge').slice(2, 5)).toEqual(['6', '6', '0']);
    expect(cell(again.out, 'total', 'cost')).toBe('$0.0000');
    expect(generator.requests).toHaveLength(0);
    expect(judge.requests).toHaveLength(0);
  });

  it('plans a re-judge of stored answers without asking the judge', () => {
    expect(judgeDry.code, judgeDry.err).toBe(0);
    expect(judgeDry.out).toContain('cases 2 · answers to judge again 2');
    expect(planRow(judgeDry.out, 'judge').slice(2, 5)).toEqual(['6', '6', '0']);
    expect(judge.requests).toHaveLength(0);
  });

  it('fits 120 columns', () => {
    for (const out of [dry.out, again.out, judgeDry.out])
      for (const line of out.split('\n')) expect(line.length, line).toBeLessThanOrEqual(120);
  });
});

describe('a dry run with a remote cross-encoder', { timeout: 180_000 }, () => {
  const chat = chatServer();
  const tei = rerankServer({ maxBatch: 8 });
  let close: () => Promise<void>;
  let dry: CliRun;
  let real: CliRun;
  let teiRequests = 0;
  beforeAll(async () => {
    const started = await startAll(chat, tei);
    close = started.close;
    const cwd = workDir('dry-run-tei');
    writeFileSync(join(cwd, 'cases.yml'), stringify(SUBSET));
    const config = remoteConfig({
      name: 'dry-tei',
      cases: join(cwd, 'cases.yml'),
      judge: '{ provider: none }',
    }).replace(
      /^rerank: .*$/m,
      'rerank: { node: hybrid, candidates: 25, provider: tei, model: ce-model, url: "${RERANK_URL}", max_batch: 8, ' +
        'prices: { ce-model: { input: 1, output: 0 } } }',
    );
    writeFileSync(join(cwd, 'ragaudit.yml'), config);
    const env = { GEN_URL: `${started.urls[0]}/v1`, RERANK_URL: started.urls[1]!, COLUMNS: '120' };
    dry = await runCli(['run', '--config', 'ragaudit.yml', '--dry-run'], { cwd, env });
    expect(tei.requests).toHaveLength(0);
    expect(chat.requests).toHaveLength(0);
    real = await runCli(['run', '--config', 'ragaudit.yml'], { cwd, env });
    // The real run's rerank requests, without its one check before the first case.
    teiRequests = tei
      .requestsTo(TEI_RERANK)
      .filter((r) => (r.body as { query: string }).query !== PREFLIGHT_QUERY).length;
  });
  afterAll(async () => close?.());

  it('counts the requests the cross-encoder would get, sends it none, and says prompts come from stand-ins', () => {
    expect(dry.code, dry.err).toBe(0);
    expect(real.code, real.err).toBe(0);
    // 25 candidates in batches of 8 = 4 requests per question, per retrieval of it (the batch and
    // the latency sample): what the real run sent.
    expect(teiRequests % 4).toBe(0);
    expect(cell(dry.out, 'reranker', 'requests')).toBe(String(teiRequests));
    expect(cell(dry.out, 'reranker', 'output')).toBe('0');
    // $1 per million input tokens.
    const input = Number(cell(dry.out, 'reranker', 'input'));
    expect(input).toBeGreaterThan(0);
    expect(cell(dry.out, 'reranker', 'cost')).toBe(`$${(input / 1e6).toFixed(4)}`);
    expect(dry.out).toContain('offline stand-ins in place of the remote embedder/reranker');
    // No judge: no judge row, and no word of placeholder answers in judge prompts.
    expect(dry.out).not.toMatch(/^judge /m);
    expect(dry.out).not.toContain('not in the cache');
    // The generator has no price: said so, and the total says what it leaves out.
    expect(cell(dry.out, 'generator', 'cost')).toBe('no price configured');
    expect(cell(dry.out, 'total', 'cost')).toBe(`$${(input / 1e6).toFixed(4)} *`);
    expect(dry.out).toContain('* without generator: no price configured');
  });
});

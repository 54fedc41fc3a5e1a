/**
 * `ragaudit run --batch` against local fakes of the OpenAI Batch API and Anthropic Message
 * Batches: every case ends answered or as an explicit error naming its stage (a request that
 * failed, was invalid or expired in its batch never becomes a score); a run killed while its
 * batch is in flight resumes by polling that batch, and the fake counts one batch creation, not
 * two; sets larger than max_requests go up as several batches; the judge's cost is batch-priced.
 */
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchCustomId, caseSlug } from '../src/llm/batch/index.js';
import { loadConfig } from '../src/config/load.js';
import { resumeDigest } from '../src/runs/audit-run.js';
import { Ledger } from '../src/store/ledger.js';
import {
  CASES,
  answerFor,
  ledgerOf,
  removeWorkDirs,
  remoteConfig,
  resultsOf,
  runCli,
  spawnCli,
  workDir,
} from './fixtures/audit/harness.js';
import { AnthropicBatchServer } from './servers/anthropic-batch-server.js';
import { MODEL_INFO } from './servers/anthropic-server.js';
import { BATCHES, OpenAIBatchServer } from './servers/openai-batch-server.js';
import { MODELS, modelList, type ChatRequestBody } from './servers/openai-server.js';
import { reply } from './servers/provider-server.js';

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
const FAST_POLLS = 'batch: { poll_min_ms: 5, poll_max_ms: 20 }\n';

const systemOf = (body: ChatRequestBody) => body.messages.find((m) => m.role === 'system')?.content ?? '';

/** A valid verdict for each judge schema: claims supported, stance answered, every citation supporting. */
function verdict(schema: string | undefined, system: string): unknown {
  if (schema === 'faithfulness_verdict') return { claims: [{ claim: 'c', label: 'supported', source: 1 }] };
  if (schema === 'stance_verdict') return { stance: 'answered', asserts_unsupported_facts: false, reason: 'r' };
  return {
    citations: Array.from({ length: (system.match(/^Citation \d+:/gm) ?? []).length }, (_, i) => ({
      item: i + 1,
      supports: true,
      reason: 'r',
    })),
  };
}

/** The OpenAI fake answering like the audit harness's chat and verdict servers. */
function openAIFake(): OpenAIBatchServer {
  const server = new OpenAIBatchServer({
    answer: (body) =>
      body.response_format
        ? JSON.stringify(verdict(body.response_format.json_schema?.name, systemOf(body)))
        : answerFor(systemOf(body)),
  });
  server.on(MODELS, () => reply(modelList(['gen-model', 'judge-model'])));
  return server;
}

const caseIdOf = (customId: string) => CASES.find((c) => customId.startsWith(`${c.id}-`))?.id;

describe('custom_ids', () => {
  it('derive from the case id, sanitised with a short hash when the id does not fit', () => {
    const key = 'ab'.repeat(32);
    expect(batchCustomId('loake-vs-cj-price-gap', 'g', key)).toBe(`loake-vs-cj-price-gap-g-${key.slice(0, 10)}`);
    const odd = ['a b', 'a/b', 'é', 'x'.repeat(80), `${'y'.repeat(40)}z`];
    const ids = odd.map((id) => batchCustomId(id, 'j', key));
    for (const id of ids) expect(id).toMatch(CUSTOM_ID);
    expect(new Set(ids).size).toBe(ids.length);
    // The sanitised form of 'a b' is not the id 'a_b' itself.
    expect(caseSlug('a b')).not.toBe(caseSlug('a_b'));
  });
});

describe('batch settings', () => {
  it('change how a run is carried out, not what it measures: a run resumes with or without --batch', () => {
    const plain = loadConfig(undefined, {}).config;
    const batched = loadConfig(undefined, {}, [{ path: ['batch', 'enabled'], flag: '--batch', value: true }]).config;
    expect(batched.batch).toMatchObject({ enabled: true, discount: 0.5 });
    expect(plain.batch).toBeUndefined();
    expect(resumeDigest(batched)).toBe(resumeDigest(plain));
  });
});

describe('the ledger keeps batch lines and skips line kinds it does not know', () => {
  it('reads cases, batch lines and an unknown kind', () => {
    const dir = workDir('batch-ledger');
    const ledger = Ledger.create(dir, 'x', {
      ledger: 1,
      kind: 'run',
      config_digest: 'd',
      created_at: '2026-01-01T00:00:00Z',
      cases: 1,
    });
    ledger.appendBatch({ state: 'submitted', role: 'generator', client: 'openai:m', id: 'batch_1', custom_ids: ['a'] });
    appendFileSync(ledger.file, `${JSON.stringify({ retrieval_ahead: { n: 1 } })}\n`);
    const again = Ledger.open(ledger.file);
    expect(again.batches).toEqual([
      { state: 'submitted', role: 'generator', client: 'openai:m', id: 'batch_1', custom_ids: ['a'] },
    ]);
    expect(again.done.size).toBe(0);
    expect(again.warnings).toEqual([]);
  });
});

describe('ragaudit run --batch (OpenAI Batch API, generator and judge)', { timeout: 180_000 }, () => {
  const server = openAIFake();
  let close: () => Promise<void>;
  let cwd: string;
  let env: Record<string, string>;
  const [judgeFails, gen500, gen400] = [CASES[0]!.id, CASES[1]!.id, CASES[2]!.id];

  beforeAll(async () => {
    const started = await server.start();
    close = started.close;
    cwd = workDir('batch-openai');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    const judge = `{ provider: openai, model: judge-model, base_url: "\${GEN_URL}", retries: 0, prices: { judge-model: { input: 1, output: 2 } } }`;
    writeFileSync(
      join(cwd, 'ragaudit.yml'),
      remoteConfig({ name: 'batch-openai', cases: join(cwd, 'cases.yml'), judge }) + FAST_POLLS,
    );
    env = { GEN_URL: `${started.url}/v1`, OPENAI_API_KEY: 'sk-test-batch-run-0123456789' };
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('answers every case or ends it as an explicit error naming the stage; the judge is batch-priced', async () => {
    server.script = {
      failedWhen: (id) =>
        id.startsWith(`${gen500}-g-`)
          ? 500
          : id.startsWith(`${gen400}-g-`)
            ? 400
            : id.startsWith(`${judgeFails}-j-`)
              ? 500
              : undefined,
    };
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--batch'], { cwd, env });
    expect(run.code, run.err).toBe(1);
    const result = resultsOf(run);
    const byId = new Map(result.cases.map((c) => [c.id, c]));
    expect(byId.size).toBe(CASES.length);
    expect(byId.get(gen500)).toMatchObject({ status: 'error', error: { stage: 'generation' } });
    expect(byId.get(gen500)!.error!.message).toMatch(/failed in generator batch batch_\d+/);
    expect(byId.get(gen400)).toMatchObject({ status: 'error', error: { stage: 'generation' } });
    expect(byId.get(gen400)!.error!.message).toMatch(/invalid in generator batch/);
    expect(byId.get(judgeFails)).toMatchObject({ status: 'error', error: { stage: 'judge' } });
    for (const c of result.cases) {
      if (c.status === 'error') {
        expect(c.scores.some((s) => s.name === 'faithfulness')).toBe(false);
        continue;
      }
      expect(c.status).toBe('ok');
      expect(c.answer).toMatch(/To go further/);
      expect(c.scores.find((s) => s.name === 'faithfulness')?.value).toBe(1);
    }
    // One generation batch holding every case, whose custom_ids name the cases.
    const gen = server.uploads.filter((u) => u.lines[0]?.body.model === 'gen-model');
    expect(gen).toHaveLength(1);
    expect(gen[0]!.lines.map((l) => caseIdOf(l.custom_id)).sort()).toEqual(CASES.map((c) => c.id).sort());
    // Each judge round is a batch (faithfulness, stance, citations): never one request per call.
    const judge = server.uploads.filter((u) => u.lines[0]?.body.model === 'judge-model');
    expect(judge.length).toBeGreaterThanOrEqual(2);
    expect(server.creations).toBe(gen.length + judge.length);
    for (const u of server.uploads) for (const l of u.lines) expect(l.custom_id).toMatch(CUSTOM_ID);
    expect(result.components.generator!.label).toBe('openai:gen-model (batch API)');
    expect(result.components.judge!.label).toBe('openai:judge-model (batch API)');
    const j = result.summary.judge!;
    expect(j.batch_discount).toBe(0.5);
    expect(j.cost_usd).toBeCloseTo(((j.tokens.input * 1 + j.tokens.output * 2) / 1e6) * 0.5, 12);
    expect(result.config.batch).toMatchObject({ enabled: true });
    // The ledger says which batches were submitted and that each was collected.
    const ledger = Ledger.open(ledgerOf(run.err)!);
    const states = ledger.batches.map((b) => (b as { state: string }).state);
    expect(states.filter((s) => s === 'submitted')).toHaveLength(server.creations);
    expect(states.filter((s) => s === 'collected')).toHaveLength(server.creations);
  });

  it('a batch that expires ends its unprocessed cases as errors saying so', async () => {
    server.reset();
    // Answers of the first run are cached: start from an empty response cache.
    rmSync(join(cwd, 'cache', 'responses'), { recursive: true, force: true });
    const late = [CASES[3]!.id, CASES[4]!.id];
    server.script = { end: 'expired', unansweredWhen: (id) => late.some((c) => id.startsWith(`${c}-g-`)) };
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--batch', '--no-judge'], {
      cwd,
      env,
    });
    expect(run.code, run.err).toBe(1);
    const result = resultsOf(run);
    for (const c of result.cases) {
      if (late.includes(c.id)) {
        expect(c).toMatchObject({ status: 'error', error: { stage: 'generation' } });
        expect(c.error!.message).toMatch(/expired/);
      } else expect(['ok', 'gated']).toContain(c.status);
    }
  });
});

describe('a torn line in a batch result file', { timeout: 180_000 }, () => {
  const server = openAIFake();
  let close: () => Promise<void>;
  let cwd: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    const started = await server.start();
    close = started.close;
    cwd = workDir('batch-torn');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    writeFileSync(
      join(cwd, 'ragaudit.yml'),
      remoteConfig({ name: 'batch-torn', cases: join(cwd, 'cases.yml'), judge: '{ provider: none }' }) + FAST_POLLS,
    );
    env = { GEN_URL: `${started.url}/v1`, OPENAI_API_KEY: 'sk-test-batch-torn-0123456789' };
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('costs the one case whose line it was; a resume submits that case alone', async () => {
    // The first case's line of the output file is cut short: every case after it in the file used to error too.
    const torn = CASES[0]!.id;
    server.script = { tornWhen: (id) => (id.startsWith(`${torn}-g-`) ? 'cut' : undefined) };
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--batch'], { cwd, env });
    expect(run.code, run.err).toBe(1);
    const first = resultsOf(run);
    expect(first.cases).toHaveLength(CASES.length);
    expect(first.cases.filter((c) => c.status === 'error').map((c) => c.id)).toEqual([torn]);
    const lost = first.cases.find((c) => c.id === torn)!;
    expect(lost.error!.stage).toBe('generation');
    expect(lost.error!.message).toMatch(/its result line cannot be read: .*\/content \(line \d+\)/);
    // Reported as it is read, naming the file and line.
    expect(run.err).toMatch(
      /generator batch batch_\d+: openai batch: malformed answer \(not JSON: .*\/content \(line \d+\)/,
    );
    expect(server.uploads).toHaveLength(1);

    server.reset();
    const ledger = ledgerOf(run.err)!;
    const resumed = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--batch', '--resume', ledger], {
      cwd,
      env,
    });
    expect(resumed.code, resumed.err).toBe(0);
    // The answered cases are not asked again: the second batch holds the torn case's request alone.
    expect(server.uploads).toHaveLength(2);
    expect(server.uploads[1]!.lines.map((l) => caseIdOf(l.custom_id))).toEqual([torn]);
    const again = resultsOf(resumed);
    expect(again.cases).toHaveLength(CASES.length);
    for (const c of again.cases) expect(['ok', 'gated']).toContain(c.status);
  });
});

describe('ragaudit run --batch (Anthropic Message Batches), split above max_requests', { timeout: 180_000 }, () => {
  const server = new AnthropicBatchServer({
    text: (body) => answerFor(String(body.system ?? '')),
  });
  server.on(`${MODEL_INFO}claude-gen`, () =>
    reply({ type: 'model', id: 'claude-gen', display_name: 'claude-gen', created_at: '2025-01-01T00:00:00Z' }),
  );
  let close: () => Promise<void>;
  let cwd: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    const started = await server.start();
    close = started.close;
    cwd = workDir('batch-anthropic');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    const config = remoteConfig({ name: 'batch-anthropic', cases: join(cwd, 'cases.yml'), judge: '{ provider: none }' })
      .replace('provider: openai, model: gen-model', 'provider: anthropic, model: claude-gen')
      .concat('batch: { poll_min_ms: 5, poll_max_ms: 20, max_requests: 4 }\n');
    writeFileSync(join(cwd, 'ragaudit.yml'), config);
    env = { GEN_URL: started.url, ANTHROPIC_API_KEY: 'sk-ant-test-batch-run-0123456789' };
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('six cases go up as batches of 4 and 2; expired and errored requests are explicit errors', async () => {
    const [expired, errored] = [CASES[0]!.id, CASES[5]!.id];
    server.script = {
      polls: 1,
      expiredWhen: (id) => id.startsWith(`${expired}-g-`),
      erroredWhen: (id) => (id.startsWith(`${errored}-g-`) ? 'api_error' : undefined),
    };
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--batch'], { cwd, env });
    expect(run.code, run.err).toBe(1);
    expect(server.creations).toBe(2);
    expect(server.submitted.map((r) => r.length).sort()).toEqual([2, 4]);
    const ids = server.submitted.flat().map((r) => r.custom_id);
    expect(new Set(ids).size).toBe(CASES.length);
    for (const id of ids) expect(id).toMatch(CUSTOM_ID);
    const result = resultsOf(run);
    const byId = new Map(result.cases.map((c) => [c.id, c]));
    expect(byId.get(expired)).toMatchObject({ status: 'error', error: { stage: 'generation' } });
    expect(byId.get(expired)!.error!.message).toMatch(/expired in generator batch msgbatch_\d+/);
    expect(byId.get(errored)).toMatchObject({ status: 'error', error: { stage: 'generation' } });
    expect(byId.get(errored)!.error!.message).toMatch(/api_error/);
    for (const c of result.cases.filter((c) => c.id !== expired && c.id !== errored)) {
      expect(c.status).toBe('ok');
      expect(c.answer).toMatch(/To go further/);
    }
    expect(result.summary.generation!.answered).toBe(CASES.length - 2);
  });
});

describe('a run killed while its batch is in flight', { timeout: 240_000 }, () => {
  const server = openAIFake();
  let close: () => Promise<void>;
  let cwd: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    const started = await server.start();
    close = started.close;
    cwd = workDir('batch-kill');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    writeFileSync(
      join(cwd, 'ragaudit.yml'),
      remoteConfig({ name: 'batch-kill', cases: join(cwd, 'cases.yml'), judge: '{ provider: none }' }) + FAST_POLLS,
    );
    env = { GEN_URL: `${started.url}/v1`, OPENAI_API_KEY: 'sk-test-batch-kill-0123456789' };
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  /** The run's ledger once it names a submitted batch. */
  async function ledgerWithBatch(): Promise<string> {
    const out = join(cwd, 'out');
    for (let i = 0; i < 1200; i++) {
      const file = existsSync(out) ? readdirSync(out).find((f) => f.endsWith('.ledger.jsonl')) : undefined;
      if (file && readFileSync(join(out, file), 'utf8').includes('"batch"')) return join(out, file);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the run never wrote its batch to the ledger');
  }

  it('resumes by polling the same batch: one batch created, every case answered', async () => {
    server.holding = true;
    const { child, exited } = spawnCli(['run', '--config', 'ragaudit.yml', '--no-report', '--batch'], { cwd, env });
    const ledger = await ledgerWithBatch();
    // Polled at least once while in flight, then killed without a chance to write anything.
    const polls = () => server.requests.filter((r) => r.route.startsWith('GET /v1/batches/')).length;
    while (polls() < 1) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGKILL');
    const ended = await exited;
    expect(ended.signal).toBe('SIGKILL');
    expect(server.count(BATCHES)).toBe(1);
    expect(Ledger.open(ledger).done.size).toBe(0);

    server.holding = false;
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--batch', '--resume', ledger], {
      cwd,
      env,
    });
    expect(run.code, run.err).toBe(0);
    expect(run.err).toMatch(/polling it again/);
    expect(server.count(BATCHES)).toBe(1);
    const result = resultsOf(run);
    expect(result.cases).toHaveLength(CASES.length);
    for (const c of result.cases) {
      expect(c.status).toBe('ok');
      expect(c.answer).toMatch(/To go further/);
    }
    const states = Ledger.open(ledger).batches.map((b) => (b as { state: string; id: string }).state);
    expect(states).toEqual(['submitted', 'collected']);
  });
});

describe('a run killed while a judge batch is in flight (Anthropic)', { timeout: 240_000 }, () => {
  const server = new AnthropicBatchServer({
    text: (body) => answerFor(String(body.system ?? '')),
    toolInput: (body) => verdict(body.tool_choice?.name, String(body.system ?? '')),
  });
  for (const id of ['claude-gen', 'claude-judge'])
    server.on(`${MODEL_INFO}${id}`, () =>
      reply({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' }),
    );
  let close: () => Promise<void>;
  let cwd: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    const started = await server.start();
    close = started.close;
    cwd = workDir('batch-kill-judge');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    const judge = `{ provider: anthropic, model: claude-judge, base_url: "\${GEN_URL}", retries: 0 }`;
    const config = remoteConfig({ name: 'batch-kill-judge', cases: join(cwd, 'cases.yml'), judge })
      .replace('provider: openai, model: gen-model', 'provider: anthropic, model: claude-gen')
      .concat(FAST_POLLS);
    writeFileSync(join(cwd, 'ragaudit.yml'), config);
    env = { GEN_URL: started.url, ANTHROPIC_API_KEY: 'sk-ant-test-batch-kill-0123456789' };
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('resumes the judge round by polling it; no custom_id is ever submitted twice', async () => {
    server.holding = (requests) => requests[0]?.params.model === 'claude-judge';
    const { child, exited } = spawnCli(['run', '--config', 'ragaudit.yml', '--no-report', '--batch'], { cwd, env });
    const out = join(cwd, 'out');
    let ledger: string | undefined;
    for (let i = 0; i < 1200 && !ledger; i++) {
      const file = existsSync(out) ? readdirSync(out).find((f) => f.endsWith('.ledger.jsonl')) : undefined;
      if (file && readFileSync(join(out, file), 'utf8').includes('"role":"judge"')) ledger = join(out, file);
      else await new Promise((r) => setTimeout(r, 50));
    }
    if (!ledger) throw new Error('the run never wrote its judge batch to the ledger');
    const judgeBatch = server.submitted.length;
    const polls = () => server.requests.filter((r) => r.route === `GET /v1/messages/batches/msgbatch_000${judgeBatch}`);
    while (polls().length < 1) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGKILL');
    expect((await exited).signal).toBe('SIGKILL');
    expect(server.creations).toBe(2);

    server.holding = false;
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--batch', '--resume', ledger], {
      cwd,
      env,
    });
    expect(run.code, run.err).toBe(0);
    expect(run.err).toMatch(
      /judge batch msgbatch_0002 \(\d+ requests, submitted before the interruption\): polling it again/,
    );
    const ids = server.submitted.flat().map((r) => r.custom_id);
    expect(new Set(ids).size).toBe(ids.length);
    // The generation batch is not asked again (its answers are cached), the judge's first round is polled.
    expect(server.submitted.filter((b) => b[0]!.params.model === 'claude-gen')).toHaveLength(1);
    const result = resultsOf(run);
    expect(result.cases).toHaveLength(CASES.length);
    for (const c of result.cases) {
      expect(c.status).toBe('ok');
      expect(c.scores.find((s) => s.name === 'faithfulness')?.value).toBe(1);
      expect(c.scores.some((s) => s.name === 'judge_stance')).toBe(true);
    }
  });
});

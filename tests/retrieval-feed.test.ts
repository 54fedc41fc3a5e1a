/**
 * The retrieval feed (src/runs/retrieval-feed.ts) on the embedded demo: each distinct question is
 * retrieved once, in batches of the given size (the latency sample runs a few again one query at a
 * time, apart, and compares their lists with the batches'), a
 * batch that fails as a whole sends its questions through the per-query path, and an audit fed by
 * it writes the very records of an audit retrieving one query at a time. Calls are counted on the
 * real graph; nothing is timed.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Located } from '../src/cases/load.js';
import { loadCases } from '../src/cases/load.js';
import type { Case } from '../src/cases/schema.js';
import { loadConfig } from '../src/config/load.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import type { CaseRecord } from '../src/model/results.js';
import { buildAuditSetup } from '../src/wiring/audit-setup.js';
import { runAudit } from '../src/runs/audit-run.js';
import { createRunContext, type RunContext } from '../src/wiring/context.js';
import { feedSummary, RetrievalFeed } from '../src/runs/retrieval-feed.js';
import { runRetrieval } from '../src/runs/retrieval-run.js';
import { baseRecord } from '../src/model/base-record.js';
import { batchLine } from '../src/reports/retrieval-table.js';
import { quantile } from '../src/scoring/statistics.js';
import { removeWorkDirs, workDir } from './fixtures/audit/harness.js';

const CASES = loadCases([join(PACKAGE_ROOT, 'cases', 'demo', 'questions-core.yml')]);

/** The first 30 cases, then the first 6 again under new ids (repeated questions). */
function withRepeats(cases: readonly Located<Case>[]): Located<Case>[] {
  const first = cases.slice(0, 30);
  return [...first, ...first.slice(0, 6).map((c) => ({ ...c, value: { ...c.value, id: `${c.value.id}-again` } }))];
}

/** A record without what may differ between two runs of one config (timings, the response cache). */
const stable = (r: CaseRecord) =>
  JSON.parse(
    JSON.stringify(r, (k, v: unknown) => (k === 'latency_ms' || k === 'cached' ? undefined : v)),
  ) as CaseRecord;

describe('the retrieval feed on the embedded demo', { timeout: 240_000 }, () => {
  let ctx: RunContext;
  beforeAll(async () => {
    ctx = await createRunContext(
      loadConfig(undefined, {}, [
        { path: ['cache_dir'], flag: '--cache-dir', value: join(PACKAGE_ROOT, '.cache', 'ragaudit') },
      ]),
      { env: {}, cwd: workDir('feed') },
    );
  });
  afterAll(async () => {
    await ctx?.close();
    removeWorkDirs();
  });

  it('retrieves each distinct question once, in batches; the sample runs the last ones per query apart', async () => {
    const questions = withRepeats(CASES).map((c) => c.value.question);
    const distinct = [...new Set(questions)];
    expect(distinct.length).toBe(30);
    const run = vi.spyOn(ctx.graph, 'run');
    const prepare = vi.spyOn(ctx.graph, 'prepareBatch');
    const complete = vi.spyOn(ctx.graph, 'completePrepared');
    try {
      const feed = new RetrievalFeed(ctx.graph, questions, { batchSize: 8, latencySample: 4 });
      const got = await Promise.all(questions.map((q) => feed.get(q)));
      await feed.settle();
      // 30 questions in ceil(30 / 8) = 4 batches, each question completed once; then the last 4
      // distinct questions once more through the per-query path, for their latency alone.
      expect(prepare).toHaveBeenCalledTimes(4);
      expect(prepare.mock.calls.map(([qs]) => qs.length)).toEqual([8, 8, 8, 6]);
      expect(complete).toHaveBeenCalledTimes(30);
      expect(run.mock.calls.map(([q]) => q)).toEqual(distinct.slice(26));
      // A repeated question gets the lists of its first asking.
      expect(got[30]).toBe(got[0]);
      const stats = feed.stats();
      expect(stats).toMatchObject({ sample: 4, batched: 30, batches: 4, batchSize: 8, fallbacks: 0 });
      // Each sample question's timing by node, and its per-query lists are those the batch gave.
      expect(stats.sampled.map((t) => t.question)).toEqual(distinct.slice(26));
      for (const t of stats.sampled) {
        expect(t).toMatchObject({ same_lists: true });
        if ('nodes' in t) expect(Object.keys(t.nodes)).toEqual(ctx.graph.nodes.map((n) => n.name));
      }
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('with the sample last and a small first batch: batches ramp up, the sample waits for them', async () => {
    const questions = CASES.slice(0, 30).map((c) => c.value.question);
    const prepare = vi.spyOn(ctx.graph, 'prepareBatch');
    const run = vi.spyOn(ctx.graph, 'run');
    try {
      const feed = new RetrievalFeed(ctx.graph, questions, {
        batchSize: 8,
        latencySample: 3,
        sampleAt: 'end',
        firstBatch: 2,
      });
      await Promise.all(questions.map((q) => feed.get(q)));
      await feed.settle();
      // 30 batched questions in batches of 2, 4, 8, 8, then the 8 left.
      expect(prepare.mock.calls.map(([qs]) => qs.length)).toEqual([2, 4, 8, 8, 8]);
      // The sample is the last 3 questions, asked one at a time after every batch's statements.
      expect(run.mock.calls.map(([q]) => q)).toEqual(questions.slice(27));
      expect(run.mock.invocationCallOrder[0]!).toBeGreaterThan(Math.max(...prepare.mock.invocationCallOrder));
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('a sample question that fails or whose per-query lists differ is said so; its cases keep the batch lists', async () => {
    const cases = CASES.slice(0, 10);
    const questions = cases.map((c) => c.value.question);
    const original = ctx.graph.run.bind(ctx.graph);
    // The per-query path fails for the 8th question and returns the 9th's rerank list reversed.
    vi.spyOn(ctx.graph, 'run').mockImplementation(async (q) => {
      if (q === questions[7]) throw new Error('statement timeout');
      const nodes = await original(q);
      if (q !== questions[8]) return nodes;
      return { ...nodes, rerank: { ...nodes.rerank!, items: [...nodes.rerank!.items].reverse() } };
    });
    try {
      const feed = new RetrievalFeed(ctx.graph, questions, { batchSize: 4, latencySample: 3, sampleAt: 'idle' });
      const got = await Promise.all(questions.map((q) => feed.get(q)));
      // Nothing of the sample ran while the cases were served: it is taken when asked.
      expect(ctx.graph.run).not.toHaveBeenCalled();
      await feed.takeSample();
      await feed.settle();
      expect(feed.stats().sampled).toEqual([
        { question: questions[7], error: 'statement timeout' },
        { question: questions[8], nodes: expect.any(Object), same_lists: false },
        { question: questions[9], nodes: expect.any(Object), same_lists: true },
      ]);
      // The cases of the sample's questions got the batch's lists, whatever the per-query path did.
      expect(got[8]!.rerank!.items[0]!.post_id).toBe((await original(questions[8]!)).rerank!.items[0]!.post_id);
      const summary = feedSummary(
        feed,
        cases.map((c) => baseRecord(c.value)),
        ['rerank'],
      )!;
      // Two timed questions; the failed one counts in no latency.
      expect(summary.batch.latency_sample).toBe(2);
      expect(summary.latency.rerank!.n).toBe(2);
      expect(batchLine(summary.batch)).toContain(
        "from 2 questions retrieved one query at a time (1 failed, lists differ from the batches' for 1 of 2); 10 cases in 3 batches",
      );
      expect(batchLine({ ...summary.batch, batches: 1 })).toContain('10 cases in one batch of up to 4 questions');
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('retrieval.latency_sample sets the sample: 0 takes none and reports no per-query latency', async () => {
    const cases = CASES.slice(0, 12);
    const run = vi.spyOn(ctx.graph, 'run');
    const sized = (n: number): RunContext => ({
      ...ctx,
      config: { ...ctx.config, retrieval: { ...ctx.config.retrieval, latency_sample: n } },
    });
    try {
      const none = await runRetrieval(sized(0), cases, []);
      expect(run).not.toHaveBeenCalled();
      const b = none.summary.retrieval_batch!;
      expect(b).toMatchObject({ latency_sample: 0, latency_sample_ms: [], batched: 12 });
      expect(Object.values(none.summary.retrieval.latency).every((l) => l.n === 0 && l.median === null)).toBe(true);
      expect(batchLine(b)).toMatch(/^no per-query latency sample was taken \(retrieval\.latency_sample: 0\); 12 cases/);
      const two = await runRetrieval(sized(2), cases, []);
      expect(run.mock.calls.map(([q]) => q)).toEqual(cases.slice(10).map((c) => c.value.question));
      expect(two.summary.retrieval_batch!.latency_sample).toBe(2);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('a batch that fails as a whole sends its questions one query at a time, each meeting its own error', async () => {
    const questions = CASES.slice(0, 12).map((c) => c.value.question);
    const original = ctx.graph.prepareBatch.bind(ctx.graph);
    let calls = 0;
    const prepare = vi.spyOn(ctx.graph, 'prepareBatch').mockImplementation((qs) => {
      calls++;
      return calls === 1 ? Promise.reject(new Error('statement timeout')) : original(qs);
    });
    const run = vi.spyOn(ctx.graph, 'run');
    try {
      const feed = new RetrievalFeed(ctx.graph, questions, { batchSize: 4, latencySample: 2 });
      const got = await Promise.all(questions.map((q) => feed.get(q)));
      await feed.settle();
      expect(got.every((n) => Object.keys(n).length === ctx.graph.nodes.length)).toBe(true);
      expect(prepare).toHaveBeenCalledTimes(3);
      // The 4 questions of the failed first batch, then the 2 sample questions, per query.
      expect(run).toHaveBeenCalledTimes(6);
      expect(feed.stats().fallbacks).toBe(1);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("a run's first batches start while the generator's check is still waiting for its answer", async () => {
    const cases = CASES.slice(0, 24);
    const { deps } = buildAuditSetup(ctx, {});
    const prepare = vi.spyOn(ctx.graph, 'prepareBatch');
    // The generator's check answers only once a batch's statements have started (or fails after 20 s).
    let startedFirst: boolean | undefined;
    const generator = {
      ...deps.generator,
      preflight: async () => {
        for (let waited = 0; waited < 20_000 && prepare.mock.calls.length === 0; waited += 10)
          await new Promise((r) => setTimeout(r, 10));
        startedFirst = prepare.mock.calls.length > 0;
      },
    };
    try {
      const { result } = await runAudit({ ...deps, generator }, cases, [], {
        outputDir: join(workDir('feed-early'), 'out'),
        retrieval: { batchSize: 8, latencySample: 2 },
      });
      expect(startedFirst).toBe(true);
      // Started before any case asked: the first batch (2 × the generator's concurrency, 4 by default) and the two after it.
      expect(prepare.mock.calls.slice(0, 3).map(([qs]) => qs.length)).toEqual([8, 8, 8]);
      expect(result.cases).toHaveLength(24);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('a failed check of the generator ends the run before any case, after the batches it started settle', async () => {
    const { deps } = buildAuditSetup(ctx, {});
    const dir = workDir('feed-refused');
    const generator = { ...deps.generator, preflight: () => Promise.reject(new Error('connection refused')) };
    const err = await runAudit({ ...deps, generator }, CASES.slice(0, 24), [], {
      outputDir: join(dir, 'out'),
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 2 });
    expect((err as Error).message).toMatch(/generator offline:extractive: connection refused/);
    // The database is still usable: nothing was left running against it.
    expect(Object.keys(await ctx.graph.run(CASES[0]!.value.question))).toHaveLength(ctx.graph.nodes.length);
  });

  it('an audit fed by batches writes the records of an audit retrieving one query at a time', async () => {
    const cases = withRepeats(CASES);
    const { deps } = buildAuditSetup(ctx, {});
    const dir = workDir('feed-audit');
    const fed = await runAudit(deps, cases, [], {
      outputDir: join(dir, 'a'),
      retrieval: { batchSize: 8, latencySample: 4 },
    });
    const single = await runAudit(deps, cases, [], { outputDir: join(dir, 'b'), retrieval: { batch: false } });
    expect(fed.result.cases.map(stable)).toEqual(single.result.cases.map(stable));
    expect(fed.result.cases.filter((c) => c.status === 'ok').length).toBeGreaterThan(25);
    const b = fed.result.summary.retrieval_batch!;
    // Every case (30 questions, 6 repeats) comes from batches; the sample is the last 4 distinct
    // questions again, per query, once the batches are done, their lists those of the batches.
    expect(b).toMatchObject({ latency_sample: 4, batched: 36, distinct_questions: 30, fallbacks: 0 });
    const distinct = [...new Set(cases.map((c) => c.value.question))];
    expect(b.latency_sample_ms?.map((t) => t.question)).toEqual(distinct.slice(26));
    expect(b.latency_sample_ms?.every((t) => 'same_lists' in t && t.same_lists)).toBe(true);
    // The summary's per-query latency is that of those timings, by the one quantile definition
    // (type 7, src/scoring/statistics.ts). The timings are measured, so only where the figures
    // come from is checked: a formula of its own here ((a + b) / 2) differs from type 7's
    // a + (b − a) / 2 in the last bit for some timings (27.43 and 100.34: 63.885000000000005 ≠ 63.885).
    const posts = b.latency_sample_ms!.map((t) => ('nodes' in t ? t.nodes.posts! : NaN));
    expect(fed.result.summary.retrieval.latency.posts).toEqual({
      median: quantile(posts, 0.5),
      p90: quantile(posts, 0.9),
      n: 4,
    });
    expect(b.batches).toBeGreaterThan(1);
    expect(single.result.summary.retrieval_batch).toBeUndefined();
  });
});

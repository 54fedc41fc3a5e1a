/**
 * The retrieval feed with conversation queries (src/runs/retrieval-feed.ts): a query the
 * generator condensed is not known up front, so it takes the per-query path when asked, and so
 * does a question asked more often than it was given; neither touches the batches' bookkeeping.
 * The batch summary counts a record by what it searched for (its retrieval query), so a
 * conversation retrieved per query is not counted as batched. Calls are counted on the real graph.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadCases } from '../src/cases/load.js';
import { loadConfig } from '../src/config/load.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { createRunContext, type RunContext } from '../src/wiring/context.js';
import { feedSummary, RetrievalFeed } from '../src/runs/retrieval-feed.js';
import { baseRecord } from '../src/model/base-record.js';
import { removeWorkDirs, workDir } from './fixtures/audit/harness.js';

const CASES = loadCases([join(PACKAGE_ROOT, 'cases', 'demo', 'questions-core.yml')]).slice(0, 5);

describe('the retrieval feed and queries not given up front', { timeout: 240_000 }, () => {
  let ctx: RunContext;
  beforeAll(async () => {
    ctx = await createRunContext(
      loadConfig(undefined, {}, [
        { path: ['cache_dir'], flag: '--cache-dir', value: join(PACKAGE_ROOT, '.cache', 'ragaudit') },
      ]),
      { env: {}, cwd: workDir('conv-feed') },
    );
  });
  afterAll(async () => {
    await ctx?.close();
    removeWorkDirs();
  });

  it('a condensed query and a question asked once more than given go per query; the batches stay as planned', async () => {
    const [q1, q2, q3, q4] = CASES.map((c) => c.value.question);
    const condensed = `${q1} ${q2}`;
    const run = vi.spyOn(ctx.graph, 'run');
    const prepare = vi.spyOn(ctx.graph, 'prepareBatch');
    const complete = vi.spyOn(ctx.graph, 'completePrepared');
    try {
      const feed = new RetrievalFeed(ctx.graph, [q1!, q2!, q3!, q4!], {
        batchSize: 2,
        latencySample: 1,
        sampleAt: 'start',
      });
      const [, n2, , , extra, again] = await Promise.all([
        feed.get(q1!),
        feed.get(q2!),
        feed.get(q3!),
        feed.get(q4!),
        feed.get(condensed),
        feed.get(q2!),
      ]);
      await feed.settle();
      // The sample (q1, taken first, apart), the condensed query and q2's second asking: three per-query runs.
      expect(run.mock.calls.map(([q]) => q).sort()).toEqual([q1, condensed, q2].sort());
      // q1, q2 | q3, q4: two batches, each of its questions completed once.
      expect(prepare.mock.calls.map(([qs]) => [...qs])).toEqual([
        [q1, q2],
        [q3, q4],
      ]);
      expect(complete).toHaveBeenCalledTimes(4);
      expect(feed.stats()).toMatchObject({ sample: 1, batched: 4, batches: 2, fallbacks: 0 });
      // The same lists either way.
      expect(Object.keys(again!)).toEqual(Object.keys(n2!));
      expect(again!.rerank!.items.map((i) => i.post_id)).toEqual(n2!.rerank!.items.map((i) => i.post_id));
      expect(extra!.rerank).toBeDefined();
      expect(feed.inBatches(condensed)).toBe(false);

      // Summaries read what each record searched for: the conversation's condensed query was not batched.
      const conversation = {
        ...baseRecord(CASES[4]!.value),
        retrieval_query: { mode: 'condensed' as const, text: condensed },
      };
      const records = [q1, q2, q3, q4].map((_, i) => baseRecord(CASES[i]!.value));
      const summary = feedSummary(feed, [...records, conversation], ['rerank']);
      expect(summary?.batch).toMatchObject({ latency_sample: 1, batched: 4, distinct_questions: 4, batches: 2 });
    } finally {
      vi.restoreAllMocks();
    }
  });
});

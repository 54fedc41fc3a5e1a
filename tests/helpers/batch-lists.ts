/**
 * What the batched retrieval tests share (tests/retrieval-batch*.test.ts): the demo's cases with
 * edge questions added, and the two comparisons of the batched path against the per-query one.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Located } from '../../src/cases/load.js';
import type { Case } from '../../src/cases/schema.js';
import { loadConfig, type LoadedConfig } from '../../src/config/load.js';
import type { RunResult } from '../../src/model/results.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import type { NodeResult } from '../../src/retrieval/graph.js';
import { runRetrieval } from '../../src/runs/retrieval-run.js';
import type { RunContext } from '../../src/wiring/context.js';

export const CASE_FILES = ['questions-core.yml', 'questions-more.yml'].map((f) =>
  join(PACKAGE_ROOT, 'cases', 'demo', f),
);

/** Questions that test the edges: no content word (zero vector, no lexeme), quotes, backslashes, SQL. */
export const ODD = ['Why?', '🙂', "wax'); DROP TABLE posts; --", 'C:\\shoes\\ "quoted" it\'s', 'suede suede suede'];

export function withOdd(cases: Located<Case>[]): Located<Case>[] {
  const odd = ODD.map((question, i) => ({
    ...cases[0]!,
    value: { ...cases[0]!.value, id: `odd-${i}`, question },
  }));
  // Repeated questions (with new ids) share one retrieval in a batch.
  const again = cases.slice(0, 5).map((c) => ({ ...c, value: { ...c.value, id: `${c.value.id}-again` } }));
  return [...cases, ...odd, ...again];
}

/** A node's list without its timing (the only part that may differ between the paths). */
function lists(nodes: Record<string, NodeResult>) {
  return Object.fromEntries(
    Object.entries(nodes).map(([name, { latencyMs, ...rest }]) => (void latencyMs, [name, rest])),
  );
}

/** Records without their timings. */
function withoutLatency(result: RunResult) {
  return result.cases.map((r) => ({
    ...r,
    retrieval: Object.fromEntries(
      Object.entries(r.retrieval).map(([name, { latency_ms, ...rest }]) => (void latency_ms, [name, rest])),
    ),
  }));
}

/** Every case through graph.run, then all of them through one batch: the same lists. */
export async function expectSameLists(ctx: RunContext, questions: readonly string[]): Promise<void> {
  const single = [];
  for (const q of questions) single.push(lists(await ctx.graph.run(q)));
  const batch = await ctx.graph.prepareBatch(questions);
  const batched = [];
  for (const [i, q] of questions.entries())
    batched.push(lists(await ctx.graph.completePrepared(q, batch.prepared[i]!)));
  expect(batched).toEqual(single);
  // Not vacuous: most questions find something.
  expect(single.filter((n) => Object.values(n).some((l) => l.items.length > 0)).length).toBeGreaterThan(
    questions.length / 2,
  );
}

/** runRetrieval with batches of a few questions (several batches, a latency sample) against the per-query run. */
export async function expectSameRun(ctx: RunContext, cases: Located<Case>[]): Promise<void> {
  const perQuery = await runRetrieval(ctx, cases, [], undefined, { batch: false });
  const batched = await runRetrieval(ctx, cases, [], undefined, { batchSize: 7, latencySample: 3 });
  expect(withoutLatency(batched)).toEqual(withoutLatency(perQuery));
  const b = batched.summary.retrieval_batch!;
  // Every case is served by a batch; the sample is the last 3 distinct questions run again per
  // query once the cases are done, and their per-query lists are those the batches gave.
  const distinct = [...new Set(cases.map((c) => c.value.question))];
  expect(b.latency_sample).toBe(3);
  expect(b.latency_sample_ms?.map((t) => t.question)).toEqual(distinct.slice(-3));
  expect(b.latency_sample_ms?.map((t) => ('nodes' in t ? t.same_lists : t.error))).toEqual([true, true, true]);
  expect(b.batched).toBe(cases.length);
  expect(b.distinct_questions).toBe(distinct.length);
  expect(b.batches).toBeGreaterThan(1);
  expect(b.fallbacks).toBe(0);
  expect(perQuery.summary.retrieval_batch).toBeUndefined();
}

export const demoConfig = (file?: string): LoadedConfig =>
  loadConfig(file ? join(PACKAGE_ROOT, 'configs', file) : undefined, {}, [
    { path: ['cache_dir'], flag: '--cache-dir', value: join(PACKAGE_ROOT, '.cache', 'ragaudit') },
  ]);

import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { NodeResult } from '../retrieval/graph.js';
import { CircuitBreaker, RunStoppedError } from './breaker.js';
import { forEachConcurrent } from './pool.js';
import { preflightAll } from './preflight.js';
import { errorRecord, storable } from './record-check.js';
import { baseRecord, retrievalRecord } from './retrieve-case.js';
import { feedSummary, RetrievalFeed, type RetrievalFeedOptions } from './retrieval-feed.js';
import type { RunContext } from './context.js';
import { resultHeader } from './header.js';
import type { CaseRecord } from '../model/results.js';
import { CaseSpool, LARGE_RUN_CASES, LightRecords } from './case-store.js';
import type { StoredRun } from './results-file.js';
import type { RunSummary } from '../model/summary.js';
import { summariseRetrieval } from './summary.js';
import { summariseCaseSets } from './generation-summary.js';
import { evidenceNode } from './audit-case.js';

/** Progress callback: cases finished so far, out of total. */
export type OnProgress = (done: number, total: number) => void;

export { LATENCY_SAMPLE } from './retrieval-feed.js';

/** How the run's retrieval is batched (src/runs/retrieval-feed.ts). */
export type RetrievalRunOptions = RetrievalFeedOptions;

/**
 * Runs retrieval (and rerank) for every case through a {@link RetrievalFeed}: the first questions
 * (a sample) one query at a time, which gives the per-query latency; the others in batches whose
 * lists are exactly those of the per-query path. A batch that fails as a whole is retrieved one
 * query at a time, so each case meets its own error.
 * A case whose retrieval fails ends as an error record naming the stage; it is counted apart and
 * never scored as a miss. Every record is checked against the results schema as it will be read
 * back (a record that is not valid is that case's error). The embedder and reranker are checked
 * before the first case; a run whose services stop answering stops (circuit breaker) with one message.
 */
export async function runRetrieval(
  ctx: RunContext,
  cases: readonly Located<Case>[],
  warnings: string[],
  onProgress?: OnProgress,
  opts: RetrievalRunOptions = {},
): Promise<StoredRun> {
  await preflightAll([
    { role: 'embedder', id: ctx.embedder.id, preflight: ctx.embedder.preflight?.bind(ctx.embedder) },
    ctx.reranker
      ? { role: 'reranker', id: ctx.reranker.id, preflight: ctx.reranker.preflight?.bind(ctx.reranker) }
      : undefined,
  ]);
  const records: CaseRecord[] = new Array(cases.length);
  // A large run keeps light records here and the full ones on disk (src/runs/case-store.ts).
  const spool = cases.length > LARGE_RUN_CASES ? new CaseSpool(cases.length) : undefined;
  const light = new LightRecords();
  const breaker = new CircuitBreaker(ctx.config.circuit_breaker);
  const feed = new RetrievalFeed(
    ctx.graph,
    cases.map((c) => c.value.question),
    opts,
  );
  // Cases that ask the same question with the same expectations share one retrieval record.
  const same = new WeakMap<Record<string, NodeResult>, Map<string, CaseRecord['retrieval']>>();
  let done = 0;
  try {
    await forEachConcurrent(
      cases,
      ctx.config.retrieval.concurrency,
      async ({ value: c }, i) => {
        let record = baseRecord(c);
        let error: unknown;
        try {
          const nodes = await feed.get(c.question);
          let byExpectations = same.get(nodes);
          if (!byExpectations) same.set(nodes, (byExpectations = new Map()));
          const key = JSON.stringify([
            c.expected_topic_ids,
            c.expected_post_ids,
            c.expected_content,
            c.forbidden_post_ids,
            c.forbidden_topic_ids,
            c.must_not_contain,
          ]);
          let retrieval = byExpectations.get(key);
          if (!retrieval) byExpectations.set(key, (retrieval = retrievalRecord(c, nodes)));
          record.retrieval = retrieval;
        } catch (e) {
          error = e;
          record = errorRecord(c, 'retrieval', e);
        }
        if (breaker.observe(error)) return;
        const stored = storable(c, record);
        if (spool) {
          spool.put(i, stored.line);
          records[i] = light.of(stored.record);
        } else records[i] = stored.record;
        onProgress?.(++done, cases.length);
      },
      { stop: () => breaker.tripped },
    );
  } finally {
    // Nothing may still be reading when the caller closes the database.
    await feed.settle();
  }

  if (breaker.tripped) {
    spool?.dispose();
    throw new RunStoppedError(
      `retrieval stopped: ${breaker.reason}\n${done} of ${cases.length} cases were retrieved; nothing was written`,
    );
  }
  const nodes = ctx.graph.nodes.map((n) => n.name);
  const retrieval = summariseRetrieval(records, nodes);
  const summary: RunSummary = { retrieval };
  const batched = feedSummary(feed, records, nodes);
  if (batched) {
    retrieval.latency = batched.latency;
    summary.retrieval_batch = batched.batch;
  }
  Object.assign(summary, summariseCaseSets(records, nodes, evidenceNode(ctx).node, { generation: false }));
  return {
    ...resultHeader(ctx, 'retrieval', warnings),
    summary,
    cases: records,
    ...(spool ? { caseStore: spool } : {}),
  };
}

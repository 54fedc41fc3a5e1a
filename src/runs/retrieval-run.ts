import type { Located } from '../cases/load.js';
import { isConversation, type Case } from '../cases/schema.js';
import { RagauditError } from '../errors.js';
import type { NodeResult } from '../retrieval/graph.js';
import { CircuitBreaker, RunStoppedError } from './breaker.js';
import { forEachConcurrent } from './concurrency.js';
import { preflightAll, retrievalServices } from '../wiring/run-preflight.js';
import { errorRecord, storable } from '../store/record-check.js';
import { baseRecord } from '../model/base-record.js';
import { retrievalRecord } from './retrieve-case.js';
import { configuredSample, feedSummary, RetrievalFeed, type RetrievalFeedOptions } from './retrieval-feed.js';
import type { RunContext } from '../wiring/context.js';
import { resultHeader } from '../wiring/header.js';
import type { CaseRecord } from '../model/results.js';
import { CaseSpool, LARGE_RUN_CASES, LightRecords } from '../store/case-store.js';
import type { StoredRun } from '../store/results-file.js';
import type { RunSummary } from '../model/summary.js';
import { summariseRetrieval } from '../summary/retrieval-summary.js';
import { summariseCaseSets } from '../summary/generation-summary.js';
import { evidenceNode } from './audit-case.js';
import {
  conversationQueries,
  conversationSettings,
  knownQueries,
  LAST_MESSAGE,
  needsCondenser,
  turnRetrievalRecord,
  type QueryCondenser,
} from '../wiring/condenser.js';

/** Progress callback: cases finished so far, out of total. */
export type OnProgress = (done: number, total: number) => void;

export { LATENCY_SAMPLE } from './retrieval-feed.js';

/** How the run's retrieval is batched (src/runs/retrieval-feed.ts), and what writes a conversation's query. */
export type RetrievalRunOptions = RetrievalFeedOptions & {
  /**
   * What a conversation case searches for (src/wiring/condenser.ts): needed when the config condenses
   * conversations (`conversation.query: condensed`, the default) and a case is one; with
   * `last`, the final message alone is searched without it.
   */
  condenser?: QueryCondenser | undefined;
};

/**
 * Runs retrieval (and rerank) for every case through a {@link RetrievalFeed}: in batches whose
 * lists are exactly those of the per-query path, then a sample of questions one query at a time,
 * alone, which gives the per-query latency. A batch that fails as a whole is retrieved one
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
  const { condenser: given, ...feedOpts } = opts;
  const condensing = needsCondenser(
    ctx.config,
    cases.map((c) => c.value),
  );
  if (condensing && !given)
    throw new RagauditError(
      'a conversation case needs its query condensed (conversation.query: condensed), but no condenser was given',
    );
  const condenser = conversationSettings(ctx.config).query === 'last' ? LAST_MESSAGE : given;
  // The condenser is a component of runs that use it only (its prompt is read here, before any case).
  const runCtx = condensing && condenser?.component ? withComponent(ctx, condenser.component) : ctx;
  await preflightAll([
    condensing && condenser?.preflight
      ? { role: 'condenser', id: condenser.component?.id ?? 'condenser', preflight: () => condenser.preflight!() }
      : undefined,
    ...retrievalServices(ctx),
  ]);
  const records: CaseRecord[] = new Array(cases.length);
  // A large run keeps light records here and the full ones on disk (src/store/case-store.ts).
  const spool = cases.length > LARGE_RUN_CASES ? new CaseSpool(cases.length) : undefined;
  const light = new LightRecords();
  const breaker = new CircuitBreaker(ctx.config.circuit_breaker);
  // A conversation whose query a model condenses is retrieved once that query is known.
  // The latency sample is taken once every case is retrieved, with nothing else running beside it.
  const feed = new RetrievalFeed(
    ctx.graph,
    cases.flatMap((c) => knownQueries(condenser, c.value)),
    { sampleAt: 'idle', ...configuredSample(ctx.config), ...feedOpts },
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
        let queries: Awaited<ReturnType<typeof conversationQueries>> | undefined;
        if (isConversation(c))
          try {
            queries = await conversationQueries(condenser!, c);
            record.retrieval_query = queries.final;
          } catch (e) {
            error = e;
            record = errorRecord(c, 'condense', e);
          }
        if (!error)
          try {
            const nodes = await feed.get(queries?.final.text ?? c.question);
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
            if (queries?.turns.length)
              record.turn_retrieval = await turnRetrievalRecord(c, queries.turns, (q) => feed.get(q));
          } catch (e) {
            error = e;
            record = errorRecord(c, 'retrieval', e);
            // The query that was searched for stays in the record, as the audit's records keep it.
            if (queries) record.retrieval_query = queries.final;
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
    if (!breaker.tripped) await feed.takeSample();
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
    ...resultHeader(runCtx, 'retrieval', warnings),
    summary,
    cases: records,
    ...(spool ? { caseStore: spool } : {}),
  };
}

/** The context with one more component recorded (the caller's context is left as it was). */
function withComponent(ctx: RunContext, component: NonNullable<QueryCondenser['component']>): RunContext {
  return { ...ctx, components: { ...ctx.components, condenser: component } };
}

import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import { CircuitBreaker, RunStoppedError } from './breaker.js';
import { forEachConcurrent } from './pool.js';
import { preflightAll } from './preflight.js';
import { errorRecord, storable } from './record-check.js';
import { baseRecord, retrieveCase } from './retrieve-case.js';
import type { RunContext } from './context.js';
import { resultHeader } from './header.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import { summariseRetrieval } from './summary.js';

/** Progress callback: cases finished so far, out of total. */
export type OnProgress = (done: number, total: number) => void;

/**
 * Runs retrieval (and rerank) for every case. A case whose retrieval fails ends as an error
 * record naming the stage; it is counted apart and never scored as a miss. Every record is
 * checked against the results schema as it will be read back (a record that is not valid is
 * that case's error). The embedder and reranker are checked before the first case; a run whose
 * services stop answering stops (circuit breaker) with one message.
 */
export async function runRetrieval(
  ctx: RunContext,
  cases: readonly Located<Case>[],
  warnings: string[],
  onProgress?: OnProgress,
): Promise<RunResult> {
  await preflightAll([
    { role: 'embedder', id: ctx.embedder.id, preflight: ctx.embedder.preflight?.bind(ctx.embedder) },
    ctx.reranker
      ? { role: 'reranker', id: ctx.reranker.id, preflight: ctx.reranker.preflight?.bind(ctx.reranker) }
      : undefined,
  ]);
  const records: CaseRecord[] = new Array(cases.length);
  const breaker = new CircuitBreaker(ctx.config.circuit_breaker);
  let done = 0;
  await forEachConcurrent(
    cases,
    ctx.config.retrieval.concurrency,
    async ({ value: c }, i) => {
      let record = baseRecord(c);
      let error: unknown;
      try {
        record.retrieval = (await retrieveCase(ctx.graph, c)).retrieval;
      } catch (e) {
        error = e;
        record = errorRecord(c, 'retrieval', e);
      }
      if (breaker.observe(error)) return;
      records[i] = storable(c, record).record;
      onProgress?.(++done, cases.length);
    },
    { stop: () => breaker.tripped },
  );
  if (breaker.tripped)
    throw new RunStoppedError(
      `retrieval stopped: ${breaker.reason}\n${done} of ${cases.length} cases were retrieved; nothing was written`,
    );
  const nodes = ctx.graph.nodes.map((n) => n.name);
  return {
    ...resultHeader(ctx, 'retrieval', warnings),
    summary: { retrieval: summariseRetrieval(records, nodes) },
    cases: records,
  };
}

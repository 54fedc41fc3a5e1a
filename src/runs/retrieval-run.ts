import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import { DEFAULT_BATCH_SIZE, type ChannelBatch, type NodeResult } from '../retrieval/graph.js';
import { CircuitBreaker, RunStoppedError } from './breaker.js';
import { forEachConcurrent } from './pool.js';
import { preflightAll } from './preflight.js';
import { errorRecord, storable } from './record-check.js';
import { baseRecord, retrievalRecord, retrieveCase } from './retrieve-case.js';
import type { RunContext } from './context.js';
import { resultHeader } from './header.js';
import type { CaseRecord } from '../model/results.js';
import { CaseSpool, LARGE_RUN_CASES, LightRecords } from './case-store.js';
import type { StoredRun } from './results-file.js';
import type { RetrievalBatchSummary, RunSummary } from '../model/summary.js';
import { summariseRetrieval } from './summary.js';

/** Progress callback: cases finished so far, out of total. */
export type OnProgress = (done: number, total: number) => void;

/** How many cases are retrieved one query at a time to measure the per-query latency. */
export const LATENCY_SAMPLE = 16;

export interface RetrievalRunOptions {
  /** Distinct questions per batched statement (default {@link DEFAULT_BATCH_SIZE}). */
  batchSize?: number;
  /** Cases retrieved one query at a time first, for the per-query latency (default {@link LATENCY_SAMPLE}). */
  latencySample?: number;
  /** `false`: every case through the per-query path (no batch), as before batching existed. */
  batch?: boolean;
}

/**
 * Runs retrieval (and rerank) for every case. The first cases (a sample) are retrieved one query
 * at a time, which gives the per-query latency; the others in batches: one embedding call and one
 * statement per channel for up to `batchSize` questions (src/retrieval/graph.ts), whose lists are
 * exactly those of the per-query path, then the title gate, fusions and rerank per case. A batch
 * that fails as a whole is retrieved one query at a time, so each case meets its own error.
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
  const concurrency = ctx.config.retrieval.concurrency;
  let done = 0;
  const finish = (c: Case, i: number, record: CaseRecord, error: unknown) => {
    if (breaker.observe(error)) return;
    const stored = storable(c, record);
    if (spool) {
      spool.put(i, stored.line);
      records[i] = light.of(stored.record);
    } else records[i] = stored.record;
    onProgress?.(++done, cases.length);
  };
  /** The per-query path for these cases (indices into `cases`), `lanes` at a time. */
  const perQuery = (indices: readonly number[], lanes: number) =>
    forEachConcurrent(
      indices,
      lanes,
      async (i) => {
        const c = cases[i]!.value;
        let record = baseRecord(c);
        let error: unknown;
        try {
          record.retrieval = (await retrieveCase(ctx.graph, c)).retrieval;
        } catch (e) {
          error = e;
          record = errorRecord(c, 'retrieval', e);
        }
        finish(c, i, record, error);
      },
      { stop: () => breaker.tripped },
    );
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);

  const batching = opts.batch !== false;
  const sample = batching ? Math.min(cases.length, Math.max(1, opts.latencySample ?? LATENCY_SAMPLE)) : cases.length;
  // The sample alone, one case at a time: its latencies are those of a single question.
  await perQuery(range(0, sample), batching ? 1 : concurrency);

  // The other cases by question: a question asked by several cases is retrieved once, and every
  // batch holds up to `size` distinct questions with all their cases.
  const size = Math.max(1, opts.batchSize ?? DEFAULT_BATCH_SIZE);
  const byQuestion = new Map<string, number[]>();
  for (let i = sample; i < cases.length; i++) {
    const q = cases[i]!.value.question;
    const list = byQuestion.get(q);
    if (list) list.push(i);
    else byQuestion.set(q, [i]);
  }
  const distinct = [...byQuestion.keys()];
  const batches: string[][] = [];
  for (let from = 0; from < distinct.length; from += size) batches.push(distinct.slice(from, from + size));
  let fallbacks = 0;
  const t0 = performance.now();
  type Prepared = { batch: ChannelBatch } | { error: unknown };
  const prepare = (questions: string[]): Promise<Prepared> =>
    ctx.graph.prepareBatch(questions).then(
      (batch) => ({ batch }),
      (error: unknown) => ({ error }),
    );
  // The next batch's statements run while this batch's questions are fused and reranked.
  let next = batches.length && !breaker.tripped ? prepare(batches[0]!) : undefined;
  for (let b = 0; b < batches.length && next; b++) {
    const questions = batches[b]!;
    const got = await next;
    next = b + 1 < batches.length && !breaker.tripped ? prepare(batches[b + 1]!) : undefined;
    if ('error' in got) {
      // The per-query path, case by case, so that each case meets its own error.
      fallbacks++;
      const indices = questions.flatMap((q) => byQuestion.get(q)!).sort((x, y) => x - y);
      await perQuery(indices, concurrency);
      continue;
    }
    await forEachConcurrent(
      questions,
      concurrency,
      async (question, k) => {
        let nodes: Record<string, NodeResult> | undefined;
        let error: unknown;
        try {
          nodes = await ctx.graph.completePrepared(question, got.batch.prepared[k]!);
        } catch (e) {
          error = e;
        }
        // Cases that ask the same question with the same expectations have the same metrics.
        const same = new Map<string, CaseRecord['retrieval']>();
        for (const i of byQuestion.get(question)!) {
          if (breaker.tripped) return;
          const c = cases[i]!.value;
          let record = baseRecord(c);
          if (nodes) {
            const key = JSON.stringify([
              c.expected_topic_ids,
              c.expected_post_ids,
              c.expected_content,
              c.forbidden_post_ids,
              c.forbidden_topic_ids,
              c.must_not_contain,
            ]);
            let retrieval = same.get(key);
            if (!retrieval) same.set(key, (retrieval = retrievalRecord(c, nodes)));
            record.retrieval = retrieval;
          } else record = errorRecord(c, 'retrieval', error);
          finish(c, i, record, error);
        }
      },
      { stop: () => breaker.tripped },
    );
    if (breaker.tripped) break;
  }
  // Nothing may still be reading when the caller closes the database.
  await next;
  const wallMs = performance.now() - t0;

  if (breaker.tripped) {
    spool?.dispose();
    throw new RunStoppedError(
      `retrieval stopped: ${breaker.reason}\n${done} of ${cases.length} cases were retrieved; nothing was written`,
    );
  }
  const nodes = ctx.graph.nodes.map((n) => n.name);
  const retrieval = summariseRetrieval(records, nodes);
  const summary: RunSummary = { retrieval };
  if (batching && batches.length) {
    // summary.retrieval.latency keeps its meaning: the latency of one question, from the sample.
    retrieval.latency = summariseRetrieval(records.slice(0, sample), nodes).latency;
    const batched = cases.length - sample;
    const batchSummary: RetrievalBatchSummary = {
      latency_sample: sample,
      batched,
      distinct_questions: distinct.length,
      batches: batches.length,
      batch_size: size,
      fallbacks,
      wall_ms: Math.round(wallMs),
      cases_per_s: wallMs > 0 ? Math.round((batched / wallMs) * 1000) : null,
      latency_share: summariseRetrieval(records.slice(sample), nodes).latency,
    };
    summary.retrieval_batch = batchSummary;
  }
  return {
    ...resultHeader(ctx, 'retrieval', warnings),
    summary,
    cases: records,
    ...(spool ? { caseStore: spool } : {}),
  };
}

import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import { redact } from '../errors.js';
import { forEachConcurrent } from './pool.js';
import { baseRecord, retrieveCase } from './retrieve-case.js';
import type { RunContext } from './context.js';
import { resultHeader } from './header.js';
import type { CaseRecord, RunResult } from './results-schema.js';
import { summariseRetrieval } from './summary.js';

/** Progress callback: cases finished so far, out of total. */
export type OnProgress = (done: number, total: number) => void;

/**
 * Runs retrieval (and rerank) for every case. A case whose retrieval fails ends as an error
 * record naming the stage; it is counted apart and never scored as a miss.
 */
export async function runRetrieval(ctx: RunContext, cases: readonly Located<Case>[], warnings: string[], onProgress?: OnProgress): Promise<RunResult> {
  const records: CaseRecord[] = new Array(cases.length);
  let done = 0;
  await forEachConcurrent(cases, ctx.config.retrieval.concurrency, async ({ value: c }, i) => {
    const record = baseRecord(c);
    try {
      record.retrieval = (await retrieveCase(ctx.graph, c)).retrieval;
    } catch (e) {
      record.status = 'error';
      record.error = { stage: 'retrieval', message: redact((e as Error).message) };
    }
    records[i] = record;
    onProgress?.(++done, cases.length);
  });
  const nodes = ctx.graph.nodes.map((n) => n.name);
  return {
    ...resultHeader(ctx, 'retrieval', warnings),
    summary: { retrieval: summariseRetrieval(records, nodes) },
    cases: records,
  };
}

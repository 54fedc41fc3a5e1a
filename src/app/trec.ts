import path from 'node:path';
import { evaluateTrec, formatTrecEvalChunks, readQrelsFile, readRunFile } from '../scoring/trec.js';

export interface TrecInputs {
  cwd: string;
  /** The files as given (named so in problems). */
  qrels: string;
  run: string;
  measures: string[];
  complete: boolean;
  perQuery: boolean;
  /** trec_eval -M: results per query evaluated, after ranking (default: all). */
  maxRetrieved?: number;
}

/** The report, and how much of the run the qrels judge (a mismatched pair scores silent zeros). */
export interface TrecOutcome {
  /** The report's text, in chunks. */
  report: Iterable<string>;
  /** Queries evaluated, those whose results (within -M) are none in the qrels, and the results that are. */
  coverage: { queries: number; unjudgedQueries: number; judgedRetrieved: number };
}

/** `trec`: a run evaluated against qrels with trec_eval's semantics. */
export async function evaluateTrecFiles(inputs: TrecInputs): Promise<TrecOutcome> {
  const [qrels, run] = await Promise.all([
    readQrelsFile(path.resolve(inputs.cwd, inputs.qrels), { name: inputs.qrels }),
    readRunFile(path.resolve(inputs.cwd, inputs.run), { name: inputs.run }),
  ]);
  const evaluation = evaluateTrec(qrels, run, {
    measures: inputs.measures,
    complete: inputs.complete,
    ...(inputs.maxRetrieved !== undefined ? { maxRetrieved: inputs.maxRetrieved } : {}),
  });
  return {
    report: formatTrecEvalChunks(evaluation, { perQuery: inputs.perQuery }),
    coverage: {
      queries: evaluation.qids.length,
      unjudgedQueries: evaluation.unjudgedQueries,
      judgedRetrieved: evaluation.judgedRetrieved,
    },
  };
}

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
}

/** `trec`: a run evaluated against qrels with trec_eval's semantics; the report's text, in chunks. */
export async function evaluateTrecFiles(inputs: TrecInputs): Promise<Iterable<string>> {
  const [qrels, run] = await Promise.all([
    readQrelsFile(path.resolve(inputs.cwd, inputs.qrels), { name: inputs.qrels }),
    readRunFile(path.resolve(inputs.cwd, inputs.run), { name: inputs.run }),
  ]);
  const evaluation = evaluateTrec(qrels, run, { measures: inputs.measures, complete: inputs.complete });
  return formatTrecEvalChunks(evaluation, { perQuery: inputs.perQuery });
}

import { resolve } from 'node:path';
import { RagauditError } from '../errors.js';
import type { RunResult } from '../model/results.js';
import { retrievalMarkdown } from '../reports/digest.js';
import { generationMarkdown } from '../reports/generation-digest.js';
import { judgeMarkdown } from '../reports/judge-digest.js';
import { writeResults } from '../runs/results-file.js';
import { mergeShards } from '../runs/shard-merge.js';
import type { AppEnv } from './hooks.js';
import { checkOutputDir } from './output-paths.js';
import { probeMarkdown } from './probe.js';
import { reportBeside } from './report.js';
import { readRunResults } from './results-input.js';

export interface MergeInputs extends AppEnv {
  /** The shards' results files, as given. */
  files: readonly string[];
  /** Results directory (default results). */
  out: string;
  report: boolean;
}

/** The digest a run of this kind writes beside its results. */
function digestOf(result: RunResult): string {
  if (result.summary.probes) return probeMarkdown(result, result.summary.probes);
  if (result.kind === 'retrieval') return retrievalMarkdown(result);
  return `${retrievalMarkdown(result)}\n${generationMarkdown(result)}\n${judgeMarkdown(result)}`;
}

/** Reads the shards, joins them and writes the results (and digest, and report) of the whole run. */
export async function runMerge(
  inputs: MergeInputs,
): Promise<{ result: RunResult; files: { json: string; md: string }; report?: string }> {
  const out = resolve(inputs.cwd, inputs.out);
  checkOutputDir(out, '--out');
  const shards = inputs.files.map((f) => {
    const file = resolve(inputs.cwd, f);
    return { file: f, result: readRunResults(file, 'merge') };
  });
  const result = mergeShards(shards);
  if (!result.cases.length) throw new RagauditError('merge: the shards hold no case');
  const files = writeResults(out, result, digestOf(result));
  return { result, files, ...(inputs.report ? { report: reportBeside(files.json, result) } : {}) };
}

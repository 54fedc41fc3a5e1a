import { resolve } from 'node:path';
import { RagauditError } from '../errors.js';
import type { RunResult } from '../model/results.js';
import { retrievalMarkdown } from '../reports/digest.js';
import { generationMarkdown } from '../reports/generation-digest.js';
import { judgeMarkdown } from '../reports/judge-digest.js';
import { LARGE_RUN_CASES } from '../store/case-store.js';
import { recordDigest } from '../store/record-digest.js';
import { resultsOf, writeResults, type StoredRun } from '../store/results-file.js';
import { mergedStore, mergeShards } from '../runs/shard-merge.js';
import type { AppEnv } from './hooks.js';
import { checkOutputDir } from './output-paths.js';
import { probeMarkdown } from './probe.js';
import { reportBeside } from './report.js';
import { openRunResults } from './results-input.js';

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
  const opened = inputs.files.map((f) => ({ file: f, opened: openRunResults(resolve(inputs.cwd, f), 'merge') }));
  // A large run is merged from light records (checks and figures) and written from the shards'
  // files, record by record in position order (src/store/case-store.ts).
  const large = opened.reduce((n, s) => n + s.opened.count, 0) > LARGE_RUN_CASES;
  // What each record's digest is now, from the file's own bytes, for the check against the written ones.
  const withDigests = opened.map((s) => ({ ...s, recordDigests: [...s.opened.recordJson()].map(recordDigest) }));
  const shards = withDigests.map((s) => ({
    file: s.file,
    result: resultsOf(s.opened, { light: large }),
    recordDigests: s.recordDigests,
  }));
  const merged = mergeShards(shards);
  if (!merged.cases.length) throw new RagauditError('merge: the shards hold no case');
  const store = large
    ? mergedStore(
        [...opened]
          .sort((a, b) => (a.opened.header.shard?.index ?? 0) - (b.opened.header.shard?.index ?? 0))
          .map((s) => ({ positions: s.opened.header.shard?.positions ?? [], records: () => s.opened.cases() })),
      )
    : undefined;
  const result: StoredRun = store
    ? { ...merged, caseStore: store }
    : large
      ? mergeShards(
          withDigests.map((s) => ({ file: s.file, result: resultsOf(s.opened), recordDigests: s.recordDigests })),
        )
      : merged;
  const files = writeResults(out, result, digestOf(result));
  return { result, files, ...(inputs.report ? { report: reportBeside(files.json, result) } : {}) };
}

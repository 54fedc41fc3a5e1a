import type { CaseRecord } from '../model/results.js';
import { writeArtifact } from '../io/artifacts.js';
import type { LoadedRun } from '../reports/compare.js';
import { comparePageHtml, shownCases, type ComparePageInput } from '../reports/compare-page.js';
import { openRunResults } from './results-input.js';

/**
 * The compare / gate page's inputs made whole: compare and gate read light records (figures
 * only), and the page shows the answers and sources of the questions it lists, so those records
 * are read again in full from their files, one at a time (memory grows with the questions shown,
 * not with the run).
 */
export function withShownRecords(
  input: ComparePageInput,
  files: ReadonlyMap<string, string>,
  command: string,
): ComparePageInput {
  const wanted = shownCases(input);
  const runs: LoadedRun[] = input.runs.map((run) => {
    const ids = wanted.get(run.label);
    const file = files.get(run.label);
    if (!ids?.size || !file) return run;
    const full = new Map<string, CaseRecord>();
    for (const r of openRunResults(file, command).cases()) if (ids.has(r.id)) full.set(r.id, r);
    return { ...run, result: { ...run.result, cases: run.result.cases.map((c) => full.get(c.id) ?? c) } };
  });
  return { ...input, runs };
}

/** Writes the page (atomically) to `out`: `files` maps each run's label to its results file. */
export function writeComparePage(
  out: string,
  input: ComparePageInput,
  files: ReadonlyMap<string, string>,
  command: string,
): string {
  writeArtifact(out, comparePageHtml(withShownRecords(input, files, command)));
  return out;
}

import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { InputError } from '../errors.js';
import { LARGE_RUN_CASES } from '../store/case-store.js';
import { openResults, readResults, resultsOf, type OpenedResults, type StoredRun } from '../store/results-file.js';
import type { RunResult } from '../model/results.js';

/** Labels of results files from their names, made unique when two files share a base name. */
export function runLabels(files: readonly string[]): string[] {
  const base = files.map((f) => basename(f).replace(/\.json$/i, ''));
  return base.map((b, i) => (base.filter((x) => x === b).length > 1 ? `${b}#${i + 1}` : b));
}

/** The other JSON files ragaudit writes, told apart by their shape. */
function otherKind(data: unknown): string | null {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return null;
  const d = data as Record<string, unknown>;
  if (d.kind === 'calibration') return 'a calibration file (written by ragaudit calibrate)';
  if (d.kind === 'zone-ab') return 'a zone A/B file (written by ragaudit calibrate --answer)';
  if (Array.isArray(d.versus) && Array.isArray(d.rows)) return 'a comparison file (written by ragaudit compare)';
  return null;
}

/**
 * Reads a run results file (run, retrieval, probe or judge) of either format, every case in
 * memory (`light`: light records, src/store/case-store.ts, for readers of figures). Given another
 * file ragaudit writes, says which kind it got instead of listing the schema's complaints about it.
 */
export function readRunResults(file: string, command: string, opts: { light?: boolean } = {}): RunResult {
  return named(file, command, () => readResults(file, opts));
}

/** Opens a run results file of either format (header and summary read, cases read on demand). */
export function openRunResults(file: string, command: string): OpenedResults {
  return named(file, command, () => openResults(file));
}

/**
 * A results file as a command that rewrites it holds it (judge): whole up to
 * {@link LARGE_RUN_CASES} cases; above, light records, with the full ones read again from the
 * file, one at a time, as the new results are made (`caseStore`).
 */
export function readStoredRun(file: string, command: string): StoredRun {
  const opened = openRunResults(file, command);
  if (opened.count <= LARGE_RUN_CASES) return resultsOf(opened);
  return { ...resultsOf(opened, { light: true }), caseStore: { size: opened.count, records: () => opened.cases() } };
}

function named<T>(file: string, command: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    let kind: string | null = null;
    try {
      kind = otherKind(JSON.parse(readFileSync(file, 'utf8')));
    } catch {
      // Not JSON: the reader's own message says so.
    }
    if (kind)
      throw new InputError(
        `${file} is ${kind}, not a results file: ${command} reads the results of run, retrieval, probe or judge`,
      );
    throw e;
  }
}

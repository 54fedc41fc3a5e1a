import type { CaseRecord, RunResult } from '../model/results.js';
import { pickNode } from '../reports/compare-metrics.js';
import { reportPathFor, writeReport } from '../reports/html.js';
import { checkOutputFile } from './output-paths.js';
import type { ReportGate } from '../reports/html-verdicts.js';
import { loadReleaseGate } from '../reports/release-gate.js';
import { FigureRecords, LARGE_RUN_CASES, LightRecords } from '../store/case-store.js';
import { resultsOf, type OpenedResults } from '../store/results-file.js';
import { CaseRows } from '../store/results-rows.js';
import { openRunResults } from './results-input.js';

/**
 * Writes the HTML report beside a results file (the commands that write results do); returns its
 * path. A large `run` holds figure records, without the score details the case rows show: the
 * page is made from them, and each row from its case's light record read back from the file just
 * written, one at a time (see {@link withRows}), as `report` renders that file.
 */
export function reportBeside(resultsFile: string, result: RunResult): string {
  const out = reportPathFor(resultsFile);
  if (result.kind !== 'run' || result.cases.length <= LARGE_RUN_CASES) return writeReport(result, out);
  const opened = openRunResults(resultsFile, 'report');
  if (opened.format !== 'jsonl') return writeReport(resultsOf(opened, { light: true }), out);
  return withRows(opened, (rowRecord) => writeReport(result, out, { rowRecord }));
}

/**
 * Runs `write` with the rows of a large format-2 results file: each case's light record (what a
 * row shows), read back by index from the cases file when its row is written. A page of 100,000
 * cases held them all (~10 kB each) while it was written, the peak of a large run's memory.
 */
function withRows<T>(opened: OpenedResults, write: (rowRecord: (index: number) => CaseRecord) => T): T {
  const rows = new CaseRows(opened.casesFile!, opened.file, opened.count);
  const light = new LightRecords();
  try {
    return write((index) => light.of(rows.at(index)));
  } finally {
    rows.close();
  }
}

export interface ReportInputs {
  /** The results file, resolved. */
  input: string;
  /** The file as the user named it (named in a problem with --node). */
  inputName: string;
  /** The HTML file, resolved; default: beside the results file. */
  out?: string | undefined;
  node?: string | undefined;
  /** A gate file whose single-run limits (min, max) colour the cards. */
  gate?: string | undefined;
}

/** The limits a report colours its cards against, from a gate file (relative rules are only named). */
export function reportGate(file: string): ReportGate {
  const rules = loadReleaseGate(file);
  const thresholds: ReportGate['thresholds'] = {};
  const relative: string[] = [];
  for (const [metric, rule] of Object.entries(rules.metrics)) {
    if (rule.min !== undefined || rule.max !== undefined)
      thresholds[metric] = {
        ...(rule.min !== undefined ? { min: rule.min } : {}),
        ...(rule.max !== undefined ? { max: rule.max } : {}),
      };
    if (rule.max_drop !== undefined) relative.push(`${metric}.max_drop`);
    if (rule.max_increase !== undefined) relative.push(`${metric}.max_increase`);
  }
  if (rules.max_regressions !== undefined) relative.push('max_regressions');
  return { file, thresholds, relative };
}

/**
 * The records a report renders: whole up to {@link LARGE_RUN_CASES} cases; above, light records
 * (every figure, the top result of each list and the answer's start, not the sources), as the
 * report a large run writes beside its results renders them.
 */
export function reportInput(file: string): RunResult {
  const opened = openRunResults(file, 'report');
  return resultsOf(opened, { light: opened.count > LARGE_RUN_CASES });
}

/** `report`: one self-contained HTML page for a results file; returns the file written. */
export function writeHtmlReport(inputs: ReportInputs): string {
  const opened = openRunResults(inputs.input, 'report');
  // A large format-2 file: figure records for the page, each row read back when it is written.
  const rowsApart = opened.count > LARGE_RUN_CASES && opened.format === 'jsonl';
  const result = rowsApart ? figuresOf(opened) : resultsOf(opened, { light: opened.count > LARGE_RUN_CASES });
  const node = inputs.node ? pickNode(result, inputs.node, inputs.inputName) : undefined;
  const out = inputs.out ?? reportPathFor(inputs.input);
  checkOutputFile(out, '--out', [inputs.input]);
  const gate = inputs.gate ? reportGate(inputs.gate) : undefined;
  const opts = { ...(node ? { node } : {}), ...(gate ? { gate } : {}) };
  if (rowsApart) withRows(opened, (rowRecord) => writeReport(result, out, { ...opts, rowRecord }));
  else writeReport(result, out, opts);
  return out;
}

/** The file's results with figure records (src/runs/case-store.ts), read one record at a time. */
function figuresOf(opened: OpenedResults): RunResult {
  const figures = new FigureRecords();
  const cases: CaseRecord[] = [];
  for (const c of opened.cases()) cases.push(figures.of(c));
  return { ...opened.header, summary: opened.summary, cases };
}

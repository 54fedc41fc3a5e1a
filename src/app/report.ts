import type { RunResult } from '../model/results.js';
import { pickNode } from '../reports/compare-metrics.js';
import { reportPathFor, writeReport } from '../reports/html.js';
import { checkOutputFile } from './output-paths.js';
import type { ReportGate } from '../reports/html-verdicts.js';
import { loadReleaseGate } from '../reports/release-gate.js';
import { LARGE_RUN_CASES } from '../store/case-store.js';
import { resultsOf } from '../store/results-file.js';
import { openRunResults } from './results-input.js';

/**
 * Writes the HTML report beside a results file (the commands that write results do); returns its
 * path. A large `run` holds figure records, without the score details the page shows: its page
 * renders the light records read back from the file it wrote, as `report` renders that file.
 */
export function reportBeside(resultsFile: string, result: RunResult): string {
  const shown = result.kind === 'run' && result.cases.length > LARGE_RUN_CASES ? reportInput(resultsFile) : result;
  return writeReport(shown, reportPathFor(resultsFile));
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
  const result = reportInput(inputs.input);
  const node = inputs.node ? pickNode(result, inputs.node, inputs.inputName) : undefined;
  const out = inputs.out ?? reportPathFor(inputs.input);
  checkOutputFile(out, '--out', [inputs.input]);
  const gate = inputs.gate ? reportGate(inputs.gate) : undefined;
  writeReport(result, out, { ...(node ? { node } : {}), ...(gate ? { gate } : {}) });
  return out;
}

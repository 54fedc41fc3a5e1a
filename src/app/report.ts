import type { RunResult } from '../model/results.js';
import { pickNode } from '../reports/compare-metrics.js';
import { reportPathFor, writeReport } from '../reports/html.js';
import { checkOutputFile } from './output-paths.js';
import { LARGE_RUN_CASES } from '../runs/case-store.js';
import { resultsOf } from '../runs/results-file.js';
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
}

/**
 * The records a report renders: whole up to {@link LARGE_RUN_CASES} cases; above, light records
 * (every figure, the top result of each list and the answer's start, not the sources), as the
 * report a large run writes beside its results renders them.
 */
function reportInput(file: string): RunResult {
  const opened = openRunResults(file, 'report');
  return resultsOf(opened, { light: opened.count > LARGE_RUN_CASES });
}

/** `report`: one self-contained HTML page for a results file; returns the file written. */
export function writeHtmlReport(inputs: ReportInputs): string {
  const result = reportInput(inputs.input);
  const node = inputs.node ? pickNode(result, inputs.node, inputs.inputName) : undefined;
  const out = inputs.out ?? reportPathFor(inputs.input);
  checkOutputFile(out, '--out', [inputs.input]);
  writeReport(result, out, node ? { node } : {});
  return out;
}

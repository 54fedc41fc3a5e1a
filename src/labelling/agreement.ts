import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { writeArtifact, writeJsonArtifact } from '../io/artifacts.js';
import { buildCalibration, type JudgeCalibration } from '../judge/calibration.js';
import { fileDigest, readLabels } from '../judge/label-file.js';
import { labelPpi } from '../judge/ppi-figures.js';
import { agreementReport, matchAnswerLabels, type AgreementReport } from '../judge/rater-agreement.js';
import type { RunResult } from '../model/results.js';
import { storedConfig } from '../config/stored.js';
import { displayPath, PROMPTS_DIR } from '../paths.js';
import { agreementMarkdown } from './agreement-report.js';
import { timestamp } from '../store/results-file.js';
import { checkOutputDir, checkOutputFile } from '../app/output-paths.js';
import { readRunResults } from '../app/results-input.js';

/**
 * Where a run's labels live by default: `labels/` beside its first case file (so they are
 * committed with the cases), else `labels/` in the working directory.
 */
export function defaultLabelsDir(result: RunResult, cwd: string): string {
  const cases = storedConfig(result).cases;
  const first = cases?.[0] !== undefined ? resolve(cwd, cases[0]) : undefined;
  if (first && existsSync(first)) return join(statSync(first).isDirectory() ? first : dirname(first), 'labels');
  return resolve(cwd, 'labels');
}

export interface AgreementInputs {
  results: string;
  /** The label directory (default: defaultLabelsDir). */
  labels?: string | undefined;
  /** Count the cases' `human:` blocks as one more labeller. */
  caseYaml: boolean;
  /** Write `<stamp>-agreement.md` and `.json` here. */
  outDir?: string | undefined;
  /** Write the judge calibration here. */
  calibration?: string | undefined;
  /** Labels each class needs before the calibration is written (default MIN_N_PER_CLASS). */
  minPerClass?: number | undefined;
  /** Write the calibration although a class is below that minimum (each shortfall recorded). */
  force?: boolean;
  cwd: string;
  promptsDir?: string;
}

export interface AgreementOutcome {
  report: AgreementReport;
  labelsDir: string;
  /** Label lines that could not be read. */
  skipped: string[];
  written: string[];
  calibration?: JudgeCalibration;
}

/** `agreement`: the judge and the labellers compared on the run's answers; optionally a calibration. */
export function runAgreement(inputs: AgreementInputs): AgreementOutcome {
  const file = resolve(inputs.cwd, inputs.results);
  const result = readRunResults(file, 'agreement');
  const labelsDir = inputs.labels ? resolve(inputs.cwd, inputs.labels) : defaultLabelsDir(result, inputs.cwd);
  const read = readLabels(labelsDir);
  const report = agreementReport(result.cases, read.labels, {
    judge: result.summary.judge?.judge ?? null,
    caseYaml: inputs.caseYaml,
  });
  if (result.summary.judge) {
    const ppi = labelPpi(result.cases, matchAnswerLabels(result.cases, read.labels), inputs.caseYaml);
    if (Object.keys(ppi).length) report.ppi = ppi;
  }
  const written: string[] = [];
  let calibration: JudgeCalibration | undefined;
  if (inputs.calibration) {
    const out = resolve(inputs.cwd, inputs.calibration);
    checkOutputFile(out, '--calibration', [file]);
    calibration = buildCalibration(result, report, {
      promptsDir: inputs.promptsDir ?? PROMPTS_DIR,
      resultsFile: displayPath(file, inputs.cwd),
      resultsDigest: fileDigest(file),
      ...(inputs.minPerClass !== undefined ? { minPerClass: inputs.minPerClass } : {}),
      force: Boolean(inputs.force),
    });
    writeJsonArtifact(out, calibration, { trailingNewline: true });
    written.push(out);
  }
  if (inputs.outDir) {
    const dir = resolve(inputs.cwd, inputs.outDir);
    checkOutputDir(dir, '--out');
    const base = join(dir, `${timestamp()}-agreement`);
    writeArtifact(`${base}.md`, agreementMarkdown(report));
    writeJsonArtifact(`${base}.json`, { schema_version: 1, kind: 'agreement', ...report }, { trailingNewline: true });
    written.push(`${base}.md`, `${base}.json`);
  }
  return { report, labelsDir, skipped: read.skipped, written, ...(calibration ? { calibration } : {}) };
}

import { join } from 'node:path';
import { writeArtifact, writeJsonArtifact } from '../io/artifacts.js';
import { InputError } from '../errors.js';
import { displayPath } from '../paths.js';
import { compareRuns, type Comparison, type LoadedRun } from '../reports/compare.js';
import { comparisonMarkdown } from '../reports/compare-format.js';
import { junitXml } from '../reports/junit.js';
import {
  evaluateReleaseGate,
  gatePairingProblem,
  gatePairings,
  type ReleaseGateResult,
  type ReleaseGateRules,
} from '../reports/release-gate.js';
import { timestamp } from '../store/results-file.js';
import { gateJudgeTrust } from './judge-trust.js';
import { checkOutputFile } from './output-paths.js';
import { readRunResults } from './results-input.js';

export interface CompareInputs {
  /** The results files, resolved, with their labels; `baseline` indexes them. */
  files: string[];
  labels: string[];
  baseline: number;
  seed: number;
  node?: string | undefined;
  /** The release gate, loaded, with its file as shown. */
  gate?: ReleaseGateRules | undefined;
  minShare: number;
  allowPartial: boolean;
  /** Where the markdown and JSON go (checked), and the JUnit file when asked (checked). */
  outDir: string;
  junit?: string | undefined;
  /** Every input file: no output may overwrite one. */
  inputs: string[];
  cwd: string;
  /** The judge prompts the calibration check reads (default: the packaged prompts). */
  promptsDir?: string | undefined;
}

export interface CompareOutcome {
  cmp: Comparison;
  pairings: ReturnType<typeof gatePairings>;
  verdict?: ReleaseGateResult;
  /** The comparison's path without extension (.md and .json written). */
  base: string;
  /** The runs as compared (light records), for the HTML page. */
  runs: LoadedRun[];
}

/** `compare`: the runs compared with the baseline, the gate judged, the files written. */
export function compareAndWrite(inputs: CompareInputs): CompareOutcome {
  const runs: LoadedRun[] = inputs.files.map((file, i) => ({
    label: inputs.labels[i]!,
    file: displayPath(file, inputs.cwd),
    // Compare reads figures only: light records, so files of any size fit in memory.
    result: readRunResults(file, 'compare', { light: true }),
  }));
  const cmp = compareRuns(runs, {
    baseline: inputs.baseline,
    seed: inputs.seed,
    ...(inputs.node ? { node: inputs.node } : {}),
  });
  const pairings = gatePairings(cmp);
  const { gate } = inputs;
  if (gate) {
    const problem = gatePairingProblem(pairings, { minShare: inputs.minShare, allowPartial: inputs.allowPartial });
    if (problem)
      throw new InputError(
        `compare --gate: ${problem}`,
        pairings.map((p) => p.line),
      );
  }
  if (gate) gateJudgeTrust(gate, runs, inputs.cwd, inputs.promptsDir);
  const verdict: ReleaseGateResult | undefined = gate ? evaluateReleaseGate(gate, cmp, runs) : undefined;

  const base = join(inputs.outDir, `${timestamp()}-compare`);
  for (const ext of ['.md', '.json']) checkOutputFile(`${base}${ext}`, '--out', inputs.inputs);
  writeArtifact(`${base}.md`, comparisonMarkdown(cmp, verdict));
  const json = {
    schema_version: 1,
    kind: 'compare',
    ...cmp,
    pairing: pairings.map(({ line: _line, ...p }) => p),
    ...(verdict ? { gate: verdict } : {}),
  };
  writeJsonArtifact(`${base}.json`, json, { trailingNewline: true });
  // Without a gate the XML still lists the regressed questions (none fails).
  if (inputs.junit)
    writeArtifact(inputs.junit, junitXml(cmp, verdict ?? { file: '(no gate)', passed: true, checks: [] }));
  return { cmp, pairings, ...(verdict ? { verdict } : {}), base, runs };
}

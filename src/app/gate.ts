import { writeArtifact } from '../io/artifacts.js';
import { InputError } from '../errors.js';
import { compareRuns, type Comparison, type LoadedRun } from '../reports/compare.js';
import { pickNode } from '../reports/compare-metrics.js';
import { junitXml } from '../reports/junit.js';
import {
  evaluateReleaseGate,
  evaluateRunGate,
  gatePairingProblem,
  gatePairings,
  type GatePairing,
  type ReleaseGateResult,
  type ReleaseGateRules,
} from '../reports/release-gate.js';
import { canaryText } from '../judge/canary.js';
import type { CanarySummary } from '../model/summary.js';
import { gateJudgeTrust } from './judge-trust.js';

/** The gate's verdict with the canary as one more rule (`judge_canary`: the share of verdicts moved, at most the tolerance). */
function withCanary(verdict: ReleaseGateResult, c: CanarySummary, label: string): ReleaseGateResult {
  const check = {
    run: label,
    rule: 'judge_canary',
    value: c.n ? c.moved / c.n : 0,
    limit: c.tolerance,
    passed: c.passed,
    message: `${label}: judge_canary: ${canaryText(c, { file: false })}`,
  };
  return { ...verdict, passed: verdict.passed && c.passed, checks: [...verdict.checks, check] };
}

export interface RunGateInputs {
  /** The run gated, labelled, with its file as shown. */
  run: LoadedRun;
  /** The gate file, loaded (its file as shown). */
  gate: ReleaseGateRules;
  /** The run the relative rules compare with; absent: those rules fail, saying they need one. */
  baseline?: LoadedRun | undefined;
  node?: string | undefined;
  /** With a baseline: the share of its cases the run must pair by id, unless `allowPartial`. */
  minShare: number;
  allowPartial: boolean;
  /** The JUnit file to write (checked by the caller): a testcase per rule and per case. */
  junit?: string | undefined;
  cwd: string;
  /** How messages name the command (`gate`, `run --gate`). */
  command: string;
  /** The judge prompts the calibration check reads (default: the packaged prompts). */
  promptsDir?: string | undefined;
  /** The judge's drift canary, judged again before the run (run --gate --canary): a moved one blocks the gate. */
  canary?: CanarySummary | undefined;
}

export interface RunGateOutcome {
  verdict: ReleaseGateResult;
  /** The pairing with the baseline, when there is one. */
  pairing?: GatePairing;
  /** The comparison with the baseline, when there is one (the PR comment lists its regressions). */
  cmp?: Comparison;
}

/**
 * The release gate on one run (`gate`, `run --gate`): absolute rules on its figures and interval
 * bounds; relative rules and max_regressions against the baseline when one is given (paired by
 * case id as compare --gate pairs them). Judge-derived rules need a calibrated judge, as for
 * compare --gate. Writes the JUnit file when asked.
 */
export function gateRun(inputs: RunGateInputs): RunGateOutcome {
  const { run, gate, baseline, command } = inputs;
  let cmp: Comparison | null = null;
  let pairing: GatePairing | undefined;
  let verdict: ReleaseGateResult;
  if (baseline) {
    cmp = compareRuns([baseline, run], { baseline: 0, ...(inputs.node ? { node: inputs.node } : {}) });
    const pairings = gatePairings(cmp);
    const problem = gatePairingProblem(pairings, { minShare: inputs.minShare, allowPartial: inputs.allowPartial });
    if (problem)
      throw new InputError(
        `${command}: ${problem}`,
        pairings.map((p) => p.line),
      );
    pairing = pairings[0];
    gateJudgeTrust(gate, [baseline, run], inputs.cwd, inputs.promptsDir, command);
    verdict = evaluateReleaseGate(gate, cmp, [run]);
  } else {
    const node = pickNode(run.result, inputs.node, run.label);
    gateJudgeTrust(gate, [run], inputs.cwd, inputs.promptsDir, command);
    verdict = evaluateRunGate(gate, run, node);
  }
  if (inputs.canary) verdict = withCanary(verdict, inputs.canary, run.label);
  if (inputs.junit)
    writeArtifact(inputs.junit, junitXml(cmp, verdict, { label: run.label, records: run.result.cases }));
  return { verdict, ...(pairing ? { pairing } : {}), ...(cmp ? { cmp } : {}) };
}

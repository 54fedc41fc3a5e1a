import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { judgeTrustProblems, readCalibration } from '../judge/calibration.js';
import { PROMPTS_DIR } from '../paths.js';
import type { LoadedRun } from '../reports/compare.js';
import type { ReleaseGateRules } from '../reports/release-gate.js';

/**
 * A gate whose file names `judge_calibration:` may rule on judge-derived figures only when each
 * judged run's judge is calibrated (same judge, same prompts, floors met): else the gate is
 * refused (exit 2) with every reason, before any rule is judged.
 */
export function gateJudgeTrust(
  gate: ReleaseGateRules,
  runs: readonly LoadedRun[],
  cwd: string,
  promptsDir = PROMPTS_DIR,
): void {
  const rule = gate.judge_calibration;
  if (!rule) return;
  const file = resolve(cwd, dirname(gate.file), rule.file);
  const calibration = existsSync(file) ? readCalibration(file) : null;
  const problems = judgeTrustProblems(
    rule,
    calibration,
    rule.file,
    Object.keys(gate.metrics),
    runs.map((r) => ({ label: r.label, judge: r.result.summary.judge })),
    promptsDir,
  );
  if (problems.length)
    throw new InputError(
      `compare --gate: the judge is not calibrated for the rules that rest on it (${gate.file}: judge_calibration)`,
      problems,
    );
}

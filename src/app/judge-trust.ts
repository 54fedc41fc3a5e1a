import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { JUDGE_GATED_METRICS, judgeTrustProblems, readCalibration } from '../judge/calibration.js';
import { PROMPTS_DIR } from '../paths.js';
import { languagePromptsDir } from '../evidence/block.js';
import { storedConfig } from '../config/stored.js';
import type { LoadedRun } from '../reports/compare.js';
import type { ReleaseGateRules } from '../reports/release-gate.js';

/**
 * A gate may rule on judge-derived figures only when each judged run's judge is calibrated (same
 * judge, same prompts, floors met), as the gate file's `judge_calibration:` says: else the gate is
 * refused (exit 2) with every reason, before any rule is judged. A gate file that names no
 * calibration is refused too when such a rule rests on a model judge; only the offline stand-in
 * judge (the demo's, never a verdict about a real model) is gated without one, and the reason
 * says it is a stand-in.
 */
export function gateJudgeTrust(
  gate: ReleaseGateRules,
  runs: readonly LoadedRun[],
  cwd: string,
  promptsDir?: string,
  command = 'compare --gate',
): void {
  const rule = gate.judge_calibration;
  if (!rule) {
    const gated = Object.keys(gate.metrics).filter((m) => JUDGE_GATED_METRICS[m]);
    const judged = runs.filter((r) => r.result.summary.judge && !r.result.summary.judge.offline);
    if (gated.length && judged.length)
      throw new InputError(
        `${command}: ${gated.join(', ')} rest on an LLM judge that ${gate.file} names no calibration for; ` +
          'label answers (ragaudit label), record a calibration (ragaudit agreement --calibration FILE) and add ' +
          '`judge_calibration: { file: FILE, min_kappa: 0.6, min_n: 30 }` to the gate file, or gate on other figures',
        judged.map((r) => `${r.label}: judge ${r.result.summary.judge!.judge}`),
      );
    return;
  }
  const file = resolve(cwd, dirname(gate.file), rule.file);
  // The prompts the runs were judged with: their language's folder (runs compared share one language).
  const language = runs.map((r) => storedConfig(r.result).language).find((l) => l !== undefined);
  const prompts = promptsDir ?? languagePromptsDir(PROMPTS_DIR, language);
  const calibration = existsSync(file) ? readCalibration(file) : null;
  const problems = judgeTrustProblems(
    rule,
    calibration,
    rule.file,
    Object.keys(gate.metrics),
    runs.map((r) => ({ label: r.label, judge: r.result.summary.judge })),
    prompts,
  );
  if (problems.length)
    throw new InputError(
      `${command}: the judge is not calibrated for the rules that rest on it (${gate.file}: judge_calibration)`,
      problems,
    );
}

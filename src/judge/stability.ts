/**
 * Stability of the judged figures over repeated judgments (`judge --repeat N`,
 * `run --judge-repeat N`): per figure the flip rate (share of cases whose N verdicts are not all
 * equal) and the figure's spread over the repeats, from the `repeats` each verdict score stores
 * (src/judge/case-scores.ts). Which figure a criterion's repeats move, and how a repeat reads as
 * that figure's value, is its `stability` (src/judge/criteria/). The definitions are in
 * src/scoring/flip-rate.ts.
 */
import type { CaseRecord } from '../model/results.js';
import type { JudgeStability } from '../model/summary.js';
import { stability } from '../scoring/flip-rate.js';
import { criteria } from './criteria/index.js';
import { repeatsOf } from './criteria/repeats.js';
import type { RepeatKey } from './criteria/types.js';

/** Stability of one figure over the records that carry repeats of it; undefined when none does. */
function figureStability(
  records: readonly CaseRecord[],
  repeatsIn: string,
  value: (r: CaseRecord, v: RepeatKey) => RepeatKey,
): JudgeStability | undefined {
  const rows: RepeatKey[][] = [];
  let repeats = 0;
  for (const r of records) {
    const got = repeatsOf(r, repeatsIn);
    if (!got) continue;
    repeats = Math.max(repeats, got.length);
    rows.push(got.map((v) => value(r, v)));
  }
  if (!rows.length) return undefined;
  const s = stability(rows, repeats);
  return { flip_rate: s.flip_rate, repeats: s.repeats, flip_n: s.n, spread: s.spread };
}

/** The stability of each judged figure the summary reports, keyed by the summary's figure name. */
export function judgeStability(records: readonly CaseRecord[]): Record<string, JudgeStability> {
  const out: Record<string, JudgeStability> = {};
  for (const c of criteria()) {
    if (!c.stability) continue;
    const s = figureStability(records, c.repeatsIn, (r, v) => c.stability!.value(r, v));
    if (s) out[c.stability.figure] = s;
  }
  return out;
}

/**
 * Stability of the judged figures over repeated judgments (`judge --repeat N`,
 * `run --judge-repeat N`): per figure the flip rate (share of cases whose N verdicts are not all
 * equal) and the figure's spread over the repeats, from the `repeats` each verdict score stores
 * (src/judge/case-scores.ts). The definitions are in src/scoring/flip-rate.ts.
 */
import type { CaseRecord } from '../model/results.js';
import { findScore } from '../model/scores.js';
import type { JudgeStability } from '../model/summary.js';
import { correctAbstention } from '../scoring/definitions.js';
import { stability } from '../scoring/flip-rate.js';

type Verdict = string | number | null;

/**
 * A stance repeat (`answered`, `hedged+unsupported`…) as the case's correct-abstention value
 * (1/0), so the figure's spread is the spread of correct abstention itself.
 */
function abstentionOf(kind: CaseRecord['kind'], v: Verdict): Verdict {
  if (typeof v !== 'string') return null;
  const [stance, flag] = v.split('+');
  if (stance !== 'answered' && stance !== 'hedged' && stance !== 'abstained') return null;
  return correctAbstention(kind, stance, flag === 'unsupported') ? 1 : 0;
}

/** A citation repeat ('101': one bit per marker) as its relevance share. */
function relevanceOf(v: Verdict): Verdict {
  return typeof v === 'string' && /^[01]+$/.test(v) ? [...v].filter((c) => c === '1').length / v.length : null;
}

/** Stability of one figure over the records that carry repeats of it; undefined when none does. */
function figureStability(
  records: readonly CaseRecord[],
  repeatsOf: (r: CaseRecord) => readonly Verdict[] | undefined,
  value: (r: CaseRecord, v: Verdict) => Verdict,
): JudgeStability | undefined {
  const rows: Verdict[][] = [];
  let repeats = 0;
  for (const r of records) {
    const got = repeatsOf(r);
    if (!got) continue;
    repeats = Math.max(repeats, got.length);
    rows.push(got.map((v) => value(r, v)));
  }
  if (!rows.length) return undefined;
  const s = stability(rows, repeats);
  return { flip_rate: s.flip_rate, repeats: s.repeats, flip_n: s.n, spread: s.spread };
}

/** The stability of each judged figure the summary reports, keyed by the summary's figure name. */
export function judgeStability(records: readonly CaseRecord[]): {
  faithfulness?: JudgeStability;
  correct_abstention?: JudgeStability;
  relevant_citation_rate?: JudgeStability;
} {
  // A faithfulness repeat is its value, or 'no_claims': comparable for flips, no figure.
  const faith = figureStability(
    records,
    (r) => findScore(r.scores, 'faithfulness')?.details?.repeats,
    (_r, v) => v,
  );
  const abst = figureStability(
    records,
    (r) => findScore(r.scores, 'judge_stance')?.details?.repeats,
    (r, v) => (v === null ? null : abstentionOf(r.kind, v)),
  );
  const cite = figureStability(
    records,
    (r) => findScore(r.scores, 'citation_relevance')?.details?.repeats,
    (_r, v) => relevanceOf(v),
  );
  return {
    ...(faith ? { faithfulness: faith } : {}),
    ...(abst ? { correct_abstention: abst } : {}),
    ...(cite ? { relevant_citation_rate: cite } : {}),
  };
}

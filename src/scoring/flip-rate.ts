/**
 * How stable a judged criterion is over R repeated judgments of the same answers: the flip rate
 * is the share of cases whose R verdicts are not all equal (a case judged fewer than twice cannot
 * flip and is left out); the spread is the range of the figure (the mean of a numeric verdict)
 * over the R repeats, each repeat's figure taken over the cases that repeat judged.
 */

export interface Stability {
  /** cases with ≥ 2 verdicts whose verdicts are not all equal / cases with ≥ 2 verdicts; null when none */
  flip_rate: number | null;
  /** cases with at least two verdicts */
  n: number;
  repeats: number;
  /** min and max of the figure over the repeats; null when no repeat has a numeric verdict */
  spread: { min: number; max: number } | null;
}

/**
 * `verdicts[c][r]` is case c's verdict at repeat r (null: that judgment failed or did not apply).
 * Verdicts compare by value (numbers and strings alike); numeric ones also feed the spread.
 */
export function stability(verdicts: readonly (readonly (number | string | null)[])[], repeats: number): Stability {
  let n = 0;
  let flipped = 0;
  for (const row of verdicts) {
    const got = row.filter((v) => v !== null);
    if (got.length < 2) continue;
    n++;
    if (got.some((v) => v !== got[0])) flipped++;
  }
  const figures: number[] = [];
  for (let r = 0; r < repeats; r++) {
    let s = 0;
    let k = 0;
    for (const row of verdicts) {
      const v = row[r];
      if (typeof v === 'number') {
        s += v;
        k++;
      }
    }
    if (k) figures.push(s / k);
  }
  return {
    flip_rate: n ? flipped / n : null,
    n,
    repeats,
    spread: figures.length ? { min: Math.min(...figures), max: Math.max(...figures) } : null,
  };
}

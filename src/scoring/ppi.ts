/**
 * Prediction-powered inference (PPI) for the mean of a judged figure (Angelopoulos, Bates,
 * Fannjiang, Jordan, Zrnic, "Prediction-powered inference", Science 382, 2023; used for RAG
 * evaluation by ARES, Saad-Falcon et al., NAACL 2024).
 *
 * The judge scored N cases (f_1..f_N); people labelled n of those same answers (y_j, with the
 * judge's f_j for the same answer). The judge's mean is corrected by the mean of its error on
 * the labelled cases (the "rectifier"):
 *
 *   θ̂ = mean_N(f) + mean_n(y − f)
 *   95 % interval: θ̂ ± 1.96 · sqrt( var_N(f) / N + var_n(y − f) / n )
 *
 * with var the sample variance (divisor count − 1), the normal-approximation interval of the
 * paper's mean estimator. Binary figures use 0/1 values. The interval is clipped to [0, 1], the
 * range of every figure it is used for; the estimate itself is not clipped (an estimate outside
 * [0, 1] says the labels and the judge disagree more than N and n can settle).
 */

/** One labelled answer: the people's value and the judge's value for that same answer. */
export interface LabelledPair {
  human: number;
  judge: number;
}

export interface PpiEstimate {
  estimate: number;
  ci_low: number;
  ci_high: number;
  n_labelled: number;
  n_judged: number;
}

/** z for a two-sided 95 % normal interval. */
const Z95 = 1.959963984540054;

function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

function sampleVariance(xs: readonly number[]): number {
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) ** 2;
  return s / (xs.length - 1);
}

/**
 * The PPI estimate of a mean, or null with the reason when it cannot be formed: each part needs
 * at least two values for its variance.
 */
export function ppiMean(
  judged: readonly number[],
  labelled: readonly LabelledPair[],
): { ppi: PpiEstimate; reason?: never } | { ppi: null; reason: string } {
  if (judged.length < 2) return { ppi: null, reason: `${judged.length} judged case(s): PPI needs at least 2` };
  if (labelled.length < 2) return { ppi: null, reason: `${labelled.length} labelled case(s): PPI needs at least 2` };
  const rectifier = labelled.map((p) => p.human - p.judge);
  const estimate = mean(judged) + mean(rectifier);
  const se = Math.sqrt(sampleVariance(judged) / judged.length + sampleVariance(rectifier) / labelled.length);
  return {
    ppi: {
      estimate,
      ci_low: Math.max(0, estimate - Z95 * se),
      ci_high: Math.min(1, estimate + Z95 * se),
      n_labelled: labelled.length,
      n_judged: judged.length,
    },
  };
}

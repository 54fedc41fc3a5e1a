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
 * paper's mean estimator. Binary figures use 0/1 values. Every figure it is used for is a share,
 * so the estimate and both bounds are projected onto [0, 1]; a point estimate that fell outside
 * (the labels and the judge disagree more than N and n can settle) keeps its raw value beside it,
 * `estimate_raw`, and is shown as clipped.
 */

/** One labelled answer: the people's value and the judge's value for that same answer. */
export interface LabelledPair {
  human: number;
  judge: number;
}

export interface PpiEstimate {
  /** In [0, 1]. */
  estimate: number;
  /** The estimate before its projection onto [0, 1]; present only when it fell outside. */
  estimate_raw?: number;
  ci_low: number;
  ci_high: number;
  n_labelled: number;
  n_judged: number;
}

/** z for a two-sided 95 % normal interval. */
const Z95 = 1.959963984540054;

/** x projected onto [0, 1]. */
const unit = (x: number) => Math.min(1, Math.max(0, x));

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
  const raw = mean(judged) + mean(rectifier);
  const se = Math.sqrt(sampleVariance(judged) / judged.length + sampleVariance(rectifier) / labelled.length);
  const estimate = unit(raw);
  return {
    ppi: {
      estimate,
      ...(estimate !== raw ? { estimate_raw: raw } : {}),
      ci_low: unit(raw - Z95 * se),
      ci_high: unit(raw + Z95 * se),
      n_labelled: labelled.length,
      n_judged: judged.length,
    },
  };
}

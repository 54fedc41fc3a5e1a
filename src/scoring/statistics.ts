/**
 * Small, dependency-free statistics used to compare runs and judges:
 * a seeded PRNG, type 7 quantiles, a paired bootstrap CI, McNemar's exact test
 * and Cohen's kappa. Misuse by the caller (mismatched lengths, bad options)
 * throws RangeError; empty inputs give NaN (or null) rather than throwing.
 */

/**
 * Mulberry32 (Tommy Ettinger, 2017; public domain): a 32-bit-state PRNG, fast and
 * good enough for resampling. Returns floats in [0, 1). Same seed, same sequence.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function checkFinite(values: ArrayLike<number>, what: string): void {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) throw new RangeError(`${what}[${i}] is not a finite number`);
  }
}

function sortedCopy(values: readonly number[]): Float64Array {
  // Typed-array sort is numeric (not lexicographic) and fast.
  return Float64Array.from(values).sort();
}

/** Type 7 on an already sorted array; the caller guarantees 0 <= q <= 1. */
function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const x0 = sorted[lo] as number;
  if (lo >= n - 1) return x0;
  const x1 = sorted[lo + 1] as number;
  return x0 + (h - lo) * (x1 - x0);
}

/**
 * Sample quantile, Hyndman & Fan (1996) type 7: linear interpolation between order
 * statistics at h = (n − 1)·q. This is the default of numpy.quantile and R's quantile().
 * The input need not be sorted (a copy is sorted). NaN for an empty array.
 */
export function quantile(sortedOrUnsorted: readonly number[], q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be in [0, 1], got ${q}`);
  checkFinite(sortedOrUnsorted, 'quantile: values');
  return quantileSorted(sortedCopy(sortedOrUnsorted), q);
}

/** Summary of a sample; quantiles are type 7. Every field but n is NaN when n = 0. */
export interface Description {
  n: number;
  min: number;
  p5: number;
  p25: number;
  median: number;
  p75: number;
  p95: number;
  max: number;
  mean: number;
}

/** n, min, max, mean and the 5/25/50/75/95th type 7 percentiles of `values`. */
export function describe(values: readonly number[]): Description {
  checkFinite(values, 'describe: values');
  const sorted = sortedCopy(values);
  const n = sorted.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i] as number;
  return {
    n,
    min: n ? (sorted[0] as number) : Number.NaN,
    p5: quantileSorted(sorted, 0.05),
    p25: quantileSorted(sorted, 0.25),
    median: quantileSorted(sorted, 0.5),
    p75: quantileSorted(sorted, 0.75),
    p95: quantileSorted(sorted, 0.95),
    max: n ? (sorted[n - 1] as number) : Number.NaN,
    mean: n ? sum / n : Number.NaN,
  };
}

/** The bootstrap's resamples, seed and coverage when a caller gives none (compare, gate intervals). */
export const BOOTSTRAP_DEFAULTS = { iterations: 10_000, seed: 1, confidence: 0.95 } as const;

/** Options for pairedBootstrapCI. */
export interface BootstrapOptions {
  /** Bootstrap resamples; default 10_000. */
  iterations?: number;
  /** Mulberry32 seed; default 1. */
  seed?: number;
  /** Two-sided coverage in (0, 1); default 0.95. */
  confidence?: number;
}

/** Result of pairedBootstrapCI: the mean of (b − a) and its percentile interval. */
export interface BootstrapResult {
  n: number;
  /** mean(b − a); positive means b scores higher. */
  meanDiff: number;
  low: number;
  high: number;
  /** True when the interval excludes 0. */
  significant: boolean;
}

/**
 * Paired bootstrap (Efron & Tibshirani 1993, ch. 13 percentile interval) for mean(b − a):
 * resample pair indices with replacement, take the mean difference of each resample,
 * and report the (1−c)/2 and (1+c)/2 type 7 quantiles of those means. Resampling
 * pairs (not a and b separately) keeps the per-case correlation between two configs.
 * Deterministic for a given seed. Empty input gives NaN bounds and not significant.
 */
export function pairedBootstrapCI(
  a: readonly number[],
  b: readonly number[],
  opts: BootstrapOptions = {},
): BootstrapResult {
  if (a.length !== b.length) {
    throw new RangeError(`pairedBootstrapCI: a has ${a.length} values but b has ${b.length}`);
  }
  const iterations = opts.iterations ?? BOOTSTRAP_DEFAULTS.iterations;
  const seed = opts.seed ?? BOOTSTRAP_DEFAULTS.seed;
  const confidence = opts.confidence ?? BOOTSTRAP_DEFAULTS.confidence;
  if (!Number.isInteger(iterations) || iterations < 1) {
    throw new RangeError(`pairedBootstrapCI: iterations must be a positive integer, got ${iterations}`);
  }
  if (!(confidence > 0 && confidence < 1)) {
    throw new RangeError(`pairedBootstrapCI: confidence must be in (0, 1), got ${confidence}`);
  }
  checkFinite(a, 'pairedBootstrapCI: a');
  checkFinite(b, 'pairedBootstrapCI: b');

  const n = a.length;
  if (n === 0) return { n, meanDiff: Number.NaN, low: Number.NaN, high: Number.NaN, significant: false };

  const diffs = new Float64Array(n);
  for (let i = 0; i < n; i++) diffs[i] = (b[i] as number) - (a[i] as number);
  const { mean, low, high } = percentileInterval(diffs, iterations, seed, confidence);
  return { n, meanDiff: mean, low, high, significant: low > 0 || high < 0 };
}

/**
 * The percentile bootstrap of a mean (Efron & Tibshirani 1993, ch. 13): resample the values with
 * replacement `iterations` times (Mulberry32 from `seed`), and take the (1−c)/2 and (1+c)/2 type 7
 * quantiles of the resampled means. The one resampling loop of this module (values non-empty).
 */
function percentileInterval(
  values: Float64Array,
  iterations: number,
  seed: number,
  confidence: number,
): { mean: number; low: number; high: number } {
  const n = values.length;
  let total = 0;
  for (let i = 0; i < n; i++) total += values[i] as number;
  const rand = mulberry32(seed);
  const means = new Float64Array(iterations);
  for (let it = 0; it < iterations; it++) {
    let sum = 0;
    for (let j = 0; j < n; j++) sum += values[Math.floor(rand() * n)] as number;
    means[it] = sum / n;
  }
  means.sort();
  const alpha = 1 - confidence;
  return { mean: total / n, low: quantileSorted(means, alpha / 2), high: quantileSorted(means, 1 - alpha / 2) };
}

/** Result of bootstrapMeanCI: the mean of the values and its percentile interval. */
export interface MeanInterval {
  n: number;
  mean: number;
  low: number;
  high: number;
}

/**
 * Percentile bootstrap interval of the mean of one sample (the same resampling as
 * pairedBootstrapCI, on the values themselves). Deterministic for a given seed; NaN bounds for
 * an empty sample. Every value equal gives a zero-width interval: the bootstrap sees no spread.
 */
export function bootstrapMeanCI(values: readonly number[], opts: BootstrapOptions = {}): MeanInterval {
  const iterations = opts.iterations ?? BOOTSTRAP_DEFAULTS.iterations;
  const confidence = opts.confidence ?? BOOTSTRAP_DEFAULTS.confidence;
  if (!Number.isInteger(iterations) || iterations < 1)
    throw new RangeError(`bootstrapMeanCI: iterations must be a positive integer, got ${iterations}`);
  if (!(confidence > 0 && confidence < 1))
    throw new RangeError(`bootstrapMeanCI: confidence must be in (0, 1), got ${confidence}`);
  checkFinite(values, 'bootstrapMeanCI');
  if (!values.length) return { n: 0, mean: Number.NaN, low: Number.NaN, high: Number.NaN };
  return {
    n: values.length,
    ...percentileInterval(Float64Array.from(values), iterations, opts.seed ?? BOOTSTRAP_DEFAULTS.seed, confidence),
  };
}

/** Φ⁻¹(0.975): the normal quantile of a two-sided 95 % interval. */
export const Z_95 = 1.959963984540054;

/**
 * Wilson score interval of a binomial proportion (Wilson 1927): with p = k/n and z the normal
 * quantile, (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n). Unlike the normal approximation it
 * stays inside [0, 1] and has width at p = 0 or 1 (20 of 20 gives [0.839, 1]). NaN bounds for n = 0.
 */
export function wilsonInterval(successes: number, n: number, z = Z_95): { low: number; high: number } {
  if (!Number.isInteger(n) || n < 0 || !Number.isInteger(successes) || successes < 0 || successes > n)
    throw new RangeError(`wilsonInterval: expected 0 <= successes <= n (integers), got ${successes} of ${n}`);
  if (n === 0) return { low: Number.NaN, high: Number.NaN };
  const p = successes / n;
  const z2 = z * z;
  const centre = p + z2 / (2 * n);
  const half = z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  const denom = 1 + z2 / n;
  // Clamped: at p = 0 or 1 the bound is 0 or 1 exactly, up to rounding.
  return { low: Math.max(0, (centre - half) / denom), high: Math.min(1, (centre + half) / denom) };
}

/** Result of mcnemarExact: the discordant counts and the exact two-sided p-value. */
export interface McNemarResult {
  n: number;
  /** Pairs where a is false and b is true. */
  b01: number;
  /** Pairs where a is true and b is false. */
  b10: number;
  pValue: number;
}

/**
 * ln P(X <= k) for X ~ Binomial(m, 1/2), with k <= m/2, in log space so that m up to
 * 10^5 and beyond neither overflows nor underflows. The pmf rises towards k (k <= m/2),
 * so the sum is taken relative to the largest term (log-sum-exp).
 */
function logBinomialHalfLowerTail(k: number, m: number): number {
  // ln C(m, i) built up term by term: C(m, i) = C(m, i−1) · (m − i + 1) / i.
  const logTerms = new Float64Array(k + 1);
  let logC = 0;
  for (let i = 1; i <= k; i++) {
    logC += Math.log((m - i + 1) / i);
    logTerms[i] = logC;
  }
  const top = logTerms[k] as number;
  let rel = 0;
  for (let i = k; i >= 0; i--) {
    const r = Math.exp((logTerms[i] as number) - top);
    rel += r;
    if (r < 1e-17 * rel) break; // remaining terms are smaller still and cannot change the sum
  }
  return top + Math.log(rel) - m * Math.LN2;
}

/**
 * McNemar's test, exact version (McNemar 1947; exact form as in Fagerland, Lydersen &
 * Laake 2013): a two-sided binomial test on the discordant pairs with p = 0.5, i.e.
 * p = min(1, 2·P(X <= min(b01, b10))) with X ~ Binomial(b01 + b10, 0.5); p = 1 when
 * there are no discordant pairs. Matches scipy.stats.binomtest(min, b01 + b10).pvalue.
 */
export function mcnemarExact(a: readonly boolean[], b: readonly boolean[]): McNemarResult {
  if (a.length !== b.length) {
    throw new RangeError(`mcnemarExact: a has ${a.length} values but b has ${b.length}`);
  }
  let b01 = 0;
  let b10 = 0;
  for (let i = 0; i < a.length; i++) {
    if (!a[i] && b[i]) b01++;
    else if (a[i] && !b[i]) b10++;
  }
  const m = b01 + b10;
  if (m === 0) return { n: a.length, b01, b10, pValue: 1 };
  const k = Math.min(b01, b10);
  const pValue = Math.min(1, 2 * Math.exp(logBinomialHalfLowerTail(k, m)));
  return { n: a.length, b01, b10, pValue };
}

/** Result of cohenKappa; the matrix has rows for rater A and columns for rater B. */
export interface KappaResult {
  n: number;
  /** Observed agreement po; NaN when n = 0. */
  accuracy: number;
  /** Cohen's kappa; null when undefined (n = 0, or a rater gave one label to every item). */
  kappa: number | null;
  /** Why kappa is null: 'no items', 'rater A constant', 'rater B constant' or 'both raters constant'. */
  undefinedReason?: 'no items' | 'rater A constant' | 'rater B constant' | 'both raters constant';
  /** Every label either rater used, sorted by code unit; indexes the matrix. */
  labels: string[];
  matrix: number[][];
}

/**
 * Cohen's (1960) kappa for two raters: κ = (po − pe) / (1 − pe), where po is observed
 * agreement and pe = Σ_k (row_k/n)(col_k/n) is agreement expected by chance. Computed
 * from integer counts as (n·Σdiag − Σ row·col) / (n² − Σ row·col) to avoid rounding.
 * Degenerate cases: when a rater gives one label to every item, κ is undefined, and we return
 * kappa = null with the reason. Both constant and equal: pe = 1 and κ is 0/0. One constant:
 * the formula gives exactly 0 whatever the other rater does (po = pe), which reads as chance
 * agreement beside, say, 96 % accuracy; the data say nothing about agreement beyond chance on
 * a label one rater never used. Also null for n = 0.
 */
export function cohenKappa(labelsA: readonly string[], labelsB: readonly string[]): KappaResult {
  if (labelsA.length !== labelsB.length) {
    throw new RangeError(`cohenKappa: A has ${labelsA.length} labels but B has ${labelsB.length}`);
  }
  const n = labelsA.length;
  const labels = [...new Set([...labelsA, ...labelsB])].sort();
  const index = new Map(labels.map((label, i) => [label, i]));
  const matrix = labels.map(() => labels.map(() => 0));
  for (let i = 0; i < n; i++) {
    const row = matrix[index.get(labelsA[i] as string) as number] as number[];
    const col = index.get(labelsB[i] as string) as number;
    row[col] = (row[col] as number) + 1;
  }
  if (n === 0) return { n, accuracy: Number.NaN, kappa: null, undefinedReason: 'no items', labels, matrix };

  let agree = 0;
  let chance = 0; // Σ row_k · col_k, i.e. pe · n²
  for (let k = 0; k < labels.length; k++) {
    const row = matrix[k] as number[];
    agree += row[k] as number;
    let rowSum = 0;
    let colSum = 0;
    for (let j = 0; j < labels.length; j++) {
      rowSum += row[j] as number;
      colSum += (matrix[j] as number[])[k] as number;
    }
    chance += rowSum * colSum;
  }
  const constantA = new Set(labelsA).size === 1;
  const constantB = new Set(labelsB).size === 1;
  if (constantA || constantB) {
    const undefinedReason =
      constantA && constantB ? 'both raters constant' : constantA ? 'rater A constant' : 'rater B constant';
    return { n, accuracy: agree / n, kappa: null, undefinedReason, labels, matrix };
  }
  return { n, accuracy: agree / n, kappa: (n * agree - chance) / (n * n - chance), labels, matrix };
}

import { describe as suite, expect, it } from 'vitest';
import {
  cohenKappa,
  describe,
  mcnemarExact,
  mulberry32,
  pairedBootstrapCI,
  quantile,
} from '../src/scoring/statistics.js';

/** Builds paired boolean outcomes with the given cell counts (a,b): tt, tf, ft, ff. */
function pairs(cells: { tt?: number; tf?: number; ft?: number; ff?: number }): [boolean[], boolean[]] {
  const a: boolean[] = [];
  const b: boolean[] = [];
  const push = (count: number | undefined, x: boolean, y: boolean) => {
    for (let i = 0; i < (count ?? 0); i++) {
      a.push(x);
      b.push(y);
    }
  };
  push(cells.tt, true, true);
  push(cells.tf, true, false);
  push(cells.ft, false, true);
  push(cells.ff, false, false);
  return [a, b];
}

/** Builds paired labels from a confusion matrix (rows rater A, columns rater B). */
function labelPairs(labels: string[], matrix: number[][]): [string[], string[]] {
  const a: string[] = [];
  const b: string[] = [];
  matrix.forEach((row, i) =>
    row.forEach((count, j) => {
      for (let k = 0; k < count; k++) {
        a.push(labels[i]!);
        b.push(labels[j]!);
      }
    }),
  );
  return [a, b];
}

/** Exact two-sided binomial(m, 1/2) p-value with BigInt, as an independent reference. */
function exactMcnemarBigInt(k: number, m: number): number {
  let c = 1n;
  let sum = 1n;
  for (let i = 1; i <= k; i++) {
    c = (c * BigInt(m - i + 1)) / BigInt(i);
    sum += c;
  }
  const scaled = (2n * sum * 10n ** 40n) / 2n ** BigInt(m);
  return Math.min(1, Number(scaled) / 1e40);
}

suite('mulberry32', () => {
  it('matches the reference implementation (bryc/code, jshash/PRNGs.md) for seed 1', () => {
    // First three outputs of the published JS function with a = 1, run offline in Node 20.
    const r = mulberry32(1);
    expect([r(), r(), r()]).toEqual([0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
  });

  it('is deterministic for a seed and stays in [0, 1)', () => {
    const r1 = mulberry32(42);
    const r2 = mulberry32(42);
    const xs = Array.from({ length: 10_000 }, () => r1());
    expect(Array.from({ length: 10_000 }, () => r2())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    // Uniform on [0,1): mean 0.5, sd of the mean sqrt(1/12/10000) ≈ 0.0029.
    expect(xs.reduce((s, x) => s + x, 0) / xs.length).toBeCloseTo(0.5, 1);
    expect(mulberry32(43)()).not.toBe(mulberry32(42)());
  });
});

suite('quantile (Hyndman & Fan type 7 = numpy.quantile default)', () => {
  // Expected values by hand: h = (n - 1)q, x[floor h] + frac(h)·(x[floor h + 1] − x[floor h]).
  it('matches numpy on small arrays', () => {
    expect(quantile([1, 2, 3, 4], 0.25)).toBe(1.75); // np.percentile([1,2,3,4], 25): h = 0.75
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5); // np.median([1,2,3,4])
    expect(quantile([1, 2, 3, 4], 0.75)).toBe(3.25); // h = 2.25
    expect(quantile([15, 20, 35, 40, 50], 0.4)).toBeCloseTo(29, 12); // h = 1.6: 20 + 0.6·15
    expect(quantile([3, 1, 2], 0.5)).toBe(2); // unsorted input is sorted first
    expect(quantile([10, -5, 7], 0)).toBe(-5);
    expect(quantile([10, -5, 7], 1)).toBe(10);
    expect(quantile([7], 0.3)).toBe(7);
  });

  it('does not reorder the caller array', () => {
    const xs = [3, 1, 2];
    quantile(xs, 0.5);
    expect(xs).toEqual([3, 1, 2]);
  });

  it('gives NaN for an empty array and rejects q outside [0, 1]', () => {
    expect(quantile([], 0.5)).toBeNaN();
    expect(() => quantile([1, 2], 1.5)).toThrow(RangeError);
    expect(() => quantile([1, 2], Number.NaN)).toThrow(RangeError);
    expect(() => quantile([1, Number.NaN], 0.5)).toThrow(RangeError);
  });

  it('describe summarises 1..10 like numpy.percentile', () => {
    const d = describe([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(d.n).toBe(10);
    expect(d.min).toBe(1);
    expect(d.max).toBe(10);
    expect(d.mean).toBe(5.5);
    expect(d.p5).toBeCloseTo(1.45, 12); // h = 0.45
    expect(d.p25).toBeCloseTo(3.25, 12); // h = 2.25
    expect(d.median).toBeCloseTo(5.5, 12); // h = 4.5
    expect(d.p75).toBeCloseTo(7.75, 12); // h = 6.75
    expect(d.p95).toBeCloseTo(9.55, 12); // h = 8.55
  });

  it('describe of an empty sample has n = 0 and NaN elsewhere', () => {
    const d = describe([]);
    expect(d.n).toBe(0);
    for (const key of ['min', 'p5', 'p25', 'median', 'p75', 'p95', 'max', 'mean'] as const) {
      expect(d[key]).toBeNaN();
    }
  });
});

suite('pairedBootstrapCI', () => {
  const rand = mulberry32(7);
  const a = Array.from({ length: 200 }, () => rand());
  const b = a.map((x) => x + (rand() - 0.4) * 0.5);

  it('is deterministic for a seed', () => {
    const r1 = pairedBootstrapCI(a, b, { seed: 123, iterations: 2000 });
    const r2 = pairedBootstrapCI(a, b, { seed: 123, iterations: 2000 });
    expect(r2).toEqual(r1);
    const r3 = pairedBootstrapCI(a, b, { seed: 124, iterations: 2000 });
    expect(r3.meanDiff).toBe(r1.meanDiff);
    expect(r3.low).not.toBe(r1.low);
  });

  it('gives [0, 0] and not significant for identical inputs', () => {
    const r = pairedBootstrapCI(a, a);
    expect(r).toEqual({ n: 200, meanDiff: 0, low: 0, high: 0, significant: false });
  });

  it('gives low = high = 1 and significant for a constant shift of +1', () => {
    const base = Array.from({ length: 50 }, (_, i) => i % 7);
    const r = pairedBootstrapCI(
      base,
      base.map((x) => x + 1),
    );
    expect(r).toEqual({ n: 50, meanDiff: 1, low: 1, high: 1, significant: true });
  });

  it('contains 0 for symmetric noise', () => {
    const zeros = Array.from({ length: 100 }, () => 0);
    const noise = zeros.map((_, i) => (i % 2 === 0 ? 1 : -1) * ((i % 5) + 1));
    const r = pairedBootstrapCI(zeros, noise);
    expect(r.meanDiff).toBe(0);
    expect(r.low).toBeLessThan(0);
    expect(r.high).toBeGreaterThan(0);
    expect(r.significant).toBe(false);
  });

  it('lies near the normal-approximation interval mean ± 1.96·sd/√n', () => {
    // Differences −1, 0, 1, 2, 3, each 100 times: mean 1, sample sd = sqrt(1000/499).
    const diffs = Array.from({ length: 500 }, (_, i) => (i % 5) - 1);
    const zeros = diffs.map(() => 0);
    const sd = Math.sqrt(diffs.reduce((s, d) => s + (d - 1) ** 2, 0) / (diffs.length - 1));
    const half = (1.96 * sd) / Math.sqrt(diffs.length); // ≈ 0.124
    const r = pairedBootstrapCI(zeros, diffs, { seed: 5 });
    expect(r.meanDiff).toBe(1);
    // Monte Carlo error of a 2.5% quantile over 10,000 resamples is ≈ 0.002; allow 0.01.
    expect(Math.abs(r.low - (1 - half))).toBeLessThan(0.01);
    expect(Math.abs(r.high - (1 + half))).toBeLessThan(0.01);
    expect(r.significant).toBe(true);
  });

  it('narrows with lower confidence', () => {
    const r95 = pairedBootstrapCI(a, b, { seed: 3 });
    const r80 = pairedBootstrapCI(a, b, { seed: 3, confidence: 0.8 });
    expect(r80.low).toBeGreaterThan(r95.low);
    expect(r80.high).toBeLessThan(r95.high);
  });

  it('rejects mismatched lengths and bad options; empty input gives NaN', () => {
    expect(() => pairedBootstrapCI([1, 2], [1])).toThrow(RangeError);
    expect(() => pairedBootstrapCI([1], [1], { iterations: 0 })).toThrow(RangeError);
    expect(() => pairedBootstrapCI([1], [1], { confidence: 1 })).toThrow(RangeError);
    const r = pairedBootstrapCI([], []);
    expect(r.n).toBe(0);
    expect(r.meanDiff).toBeNaN();
    expect(r.significant).toBe(false);
  });
});

suite('mcnemarExact', () => {
  // Hand computation: p = min(1, 2·Σ_{i<=min} C(m,i) / 2^m), m = b01 + b10
  // (same as scipy.stats.binomtest(min(b01, b10), m, 0.5).pvalue).
  it('b01 = 1, b10 = 6 → 2·(1 + 7)/128 = 0.125', () => {
    const [a, b] = pairs({ tt: 20, tf: 6, ft: 1, ff: 3 });
    expect(mcnemarExact(a, b)).toEqual({ n: 30, b01: 1, b10: 6, pValue: expect.closeTo(0.125, 14) });
  });

  it('b01 = 0, b10 = 5 → 2/32 = 0.0625', () => {
    const [a, b] = pairs({ tf: 5, ff: 4 });
    const r = mcnemarExact(a, b);
    expect([r.b01, r.b10]).toEqual([0, 5]);
    expect(r.pValue).toBeCloseTo(0.0625, 14);
  });

  it('b01 = 10, b10 = 2 → 2·(1 + 12 + 66)/4096 = 0.03857421875', () => {
    const [a, b] = pairs({ ft: 10, tf: 2, tt: 7 });
    const r = mcnemarExact(a, b);
    expect([r.b01, r.b10]).toEqual([10, 2]);
    expect(r.pValue).toBeCloseTo(158 / 4096, 14);
  });

  it('balanced discordance gives p = 1 (2·42/64 > 1, capped)', () => {
    const [a, b] = pairs({ ft: 3, tf: 3 });
    expect(mcnemarExact(a, b).pValue).toBe(1);
  });

  it('no discordant pairs gives p = 1', () => {
    const [a, b] = pairs({ tt: 4, ff: 2 });
    expect(mcnemarExact(a, b)).toEqual({ n: 6, b01: 0, b10: 0, pValue: 1 });
    expect(mcnemarExact([], []).pValue).toBe(1);
  });

  it('matches exact BigInt binomial sums for m = 20,000', () => {
    const [a, b] = pairs({ ft: 10_150, tf: 9_850 });
    const r = mcnemarExact(a, b);
    const exact = exactMcnemarBigInt(9_850, 20_000);
    expect(Math.abs(r.pValue - exact) / exact).toBeLessThan(1e-8);
  });

  it('stays finite and accurate for m = 100,000', () => {
    // Reference 2.588716038346898e-10: the BigInt sum above run offline for k = 49,000, m = 100,000.
    const [a, b] = pairs({ ft: 51_000, tf: 49_000 });
    const r = mcnemarExact(a, b);
    expect(Math.abs(r.pValue - 2.588716038346898e-10) / 2.588716038346898e-10).toBeLessThan(1e-7);
    const [c, d] = pairs({ ft: 50_000, tf: 50_000 });
    expect(mcnemarExact(c, d).pValue).toBe(1);
  });

  it('rejects mismatched lengths', () => {
    expect(() => mcnemarExact([true], [])).toThrow(RangeError);
  });
});

suite('cohenKappa (Cohen 1960)', () => {
  it("Wikipedia's example: 20/5/10/15 → po = 0.7, pe = 0.5, κ = 0.4", () => {
    const [a, b] = labelPairs(
      ['no', 'yes'],
      [
        [15, 10], // A no: B no, B yes
        [5, 20], // A yes: B no, B yes
      ],
    );
    const r = cohenKappa(a, b);
    expect(r.n).toBe(50);
    expect(r.labels).toEqual(['no', 'yes']);
    expect(r.matrix).toEqual([
      [15, 10],
      [5, 20],
    ]);
    expect(r.accuracy).toBeCloseTo(0.7, 14);
    expect(r.kappa).toBeCloseTo(0.4, 14);
  });

  it("Wikipedia's equal-po pair: 45/15/25/15 → κ = 0.06/0.46; 25/35/5/35 → κ = 0.14/0.54", () => {
    // Rows A yes, A no; columns B yes, B no. pe = 0.6·0.7 + 0.4·0.3 = 0.54, and 0.6·0.3 + 0.4·0.7 = 0.46.
    const first = cohenKappa(
      ...labelPairs(
        ['yes', 'no'],
        [
          [45, 15],
          [25, 15],
        ],
      ),
    );
    expect(first.accuracy).toBeCloseTo(0.6, 14);
    expect(first.kappa).toBeCloseTo(0.06 / 0.46, 12); // 0.1304
    const second = cohenKappa(
      ...labelPairs(
        ['yes', 'no'],
        [
          [25, 35],
          [5, 35],
        ],
      ),
    );
    expect(second.accuracy).toBeCloseTo(0.6, 14);
    expect(second.kappa).toBeCloseTo(0.14 / 0.54, 12); // 0.2593
  });

  it('three classes, by hand: κ = (40·29 − 540)/(1600 − 540) = 31/53', () => {
    // Rows sum 15, 10, 15; columns 13, 12, 15; Σ row·col = 195 + 120 + 225 = 540; diagonal 29.
    const r = cohenKappa(
      ...labelPairs(
        ['a', 'b', 'c'],
        [
          [10, 2, 3],
          [1, 8, 1],
          [2, 2, 11],
        ],
      ),
    );
    expect(r.accuracy).toBeCloseTo(29 / 40, 14);
    expect(r.kappa).toBeCloseTo(31 / 53, 14);
  });

  it('complete disagreement on a balanced pair gives κ = −1', () => {
    expect(cohenKappa(['y', 'n'], ['n', 'y']).kappa).toBeCloseTo(-1, 14);
  });

  it('a constant rater leaves kappa undefined (the formula would give 0 whatever the other does)', () => {
    // po = 2/4, pe = (4·2)/16 = 2/4: (po − pe)/(1 − pe) = 0, which would read as chance agreement.
    const r = cohenKappa(['x', 'x', 'x', 'x'], ['x', 'y', 'x', 'y']);
    expect(r.kappa).toBeNull();
    expect(r.undefinedReason).toBe('rater A constant');
    expect(r.accuracy).toBe(0.5);
    expect(cohenKappa(['x', 'y'], ['z', 'z']).undefinedReason).toBe('rater B constant');
  });

  it('labels either rater used appear in sorted order, even if only one used them', () => {
    const r = cohenKappa(['b', 'a'], ['c', 'a']);
    expect(r.labels).toEqual(['a', 'b', 'c']);
    expect(r.matrix).toEqual([
      [1, 0, 0],
      [0, 0, 1],
      [0, 0, 0],
    ]);
  });

  it('returns kappa = null when pe = 1 (both raters constant and equal) and for no items', () => {
    const r = cohenKappa(['x', 'x', 'x'], ['x', 'x', 'x']);
    expect(r.accuracy).toBe(1);
    expect(r.kappa).toBeNull();
    expect(r.undefinedReason).toBe('both raters constant');
    const empty = cohenKappa([], []);
    expect(empty.kappa).toBeNull();
    expect(empty.accuracy).toBeNaN();
  });

  it('rejects mismatched lengths', () => {
    expect(() => cohenKappa(['a'], [])).toThrow(RangeError);
  });
});

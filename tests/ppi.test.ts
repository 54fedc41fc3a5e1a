import { describe, expect, it } from 'vitest';
import { ppiText } from '../src/reports/ppi-rows.js';
import { ppiMean } from '../src/scoring/ppi.js';

// The estimator of Angelopoulos et al., "Prediction-powered inference" (Science 2023):
// θ̂ = mean_N(f) + mean_n(y − f), θ̂ ± 1.96·sqrt(var_N(f)/N + var_n(y − f)/n), sample variances.
describe('ppiMean', () => {
  it('matches a two-class example worked on paper', () => {
    // Judge says "faithful" (1) on 7 of 10 answers: mean_N(f) = 0.7.
    // var_N(f) = (7·0.3² + 3·0.7²)/9 = (0.63 + 1.47)/9 = 0.233333…; /N = 0.0233333…
    const judged = [1, 1, 1, 1, 1, 1, 1, 0, 0, 0];
    // People labelled 4 of those answers: (y, f) = (1,1) (0,1) (1,1) (0,0).
    // y − f = 0, −1, 0, 0: mean −0.25; var = (3·0.25² + 0.75²)/3 = 0.75/3 = 0.25; /n = 0.0625.
    // θ̂ = 0.7 − 0.25 = 0.45; se = sqrt(0.0233333 + 0.0625) = sqrt(0.0858333) = 0.292973…
    // half-width 1.959964 · 0.292973 = 0.574217 → [−0.124217, 1.024217], clipped to [0, 1].
    const labelled = [
      { human: 1, judge: 1 },
      { human: 0, judge: 1 },
      { human: 1, judge: 1 },
      { human: 0, judge: 0 },
    ];
    const { ppi } = ppiMean(judged, labelled);
    expect(ppi).not.toBeNull();
    expect(ppi!.estimate).toBeCloseTo(0.45, 12);
    expect(ppi!.ci_low).toBe(0);
    expect(ppi!.ci_high).toBe(1);
    expect(ppi!.n_judged).toBe(10);
    expect(ppi!.n_labelled).toBe(4);
  });

  it('gives an interval inside [0, 1] when the parts are large enough, centred on the corrected mean', () => {
    // 100 judged: 80 ones → mean 0.8, var = (80·0.2² + 20·0.8²)/99 = (3.2 + 12.8)/99 = 0.161616…; /100 = 0.00161616
    const judged = [...Array<number>(80).fill(1), ...Array<number>(20).fill(0)];
    // 20 labelled: the judge is right on 18, says 1 where people say 0 on 2: y − f = −1 twice, else 0.
    // mean −0.1; var = (2·0.9² + 18·0.1²)/19 = (1.62 + 0.18)/19 = 0.0947368…; /20 = 0.00473684
    // θ̂ = 0.7; se = sqrt(0.00161616 + 0.00473684) = sqrt(0.006353) = 0.0797057; half-width 0.156220
    const labelled = [
      ...Array.from({ length: 2 }, () => ({ human: 0, judge: 1 })),
      ...Array.from({ length: 14 }, () => ({ human: 1, judge: 1 })),
      ...Array.from({ length: 4 }, () => ({ human: 0, judge: 0 })),
    ];
    const { ppi } = ppiMean(judged, labelled);
    expect(ppi!.estimate).toBeCloseTo(0.7, 12);
    expect(ppi!.ci_low).toBeCloseTo(0.7 - 0.15622, 4);
    expect(ppi!.ci_high).toBeCloseTo(0.7 + 0.15622, 4);
  });

  it('projects an estimate outside [0, 1] onto it, keeping the raw value, and says it is clipped', () => {
    // Judge: 1 on 8 of 10 (mean 0.8); var_N(f) = (8·0.2² + 2·0.8²)/9 = 1.6/9 = 0.177778; /N = 0.0177778.
    const judged = [...Array<number>(8).fill(1), 0, 0];
    // People labelled the two 0s as 1: y − f = 1, 1 → mean 1, var 0.
    // θ̂ = 0.8 + 1 = 1.8; se = sqrt(0.0177778) = 0.133333; half-width 1.959964 · 0.133333 = 0.261329
    // → [1.538671, 2.061329]: every bound above 1, so all three are 1 once projected onto [0, 1].
    const { ppi } = ppiMean(judged, [
      { human: 1, judge: 0 },
      { human: 1, judge: 0 },
    ]);
    expect(ppi!.estimate).toBe(1);
    expect(ppi!.estimate_raw).toBeCloseTo(1.8, 12);
    expect(ppi!.ci_low).toBe(1);
    expect(ppi!.ci_high).toBe(1);
    expect(ppiText({ ...ppi!, judge_mean: 0.8 })).toBe(
      'judge 80.0 % · PPI 100.0 % (clipped from 180.0 %: too few labels) [95 % CI 100.0 % – 100.0 %] · 2 of 10 labelled',
    );
    // Inside [0, 1] there is no raw value, and the display says nothing of clipping.
    const inside = ppiMean(
      [1, 1, 1, 1, 1, 1, 1, 0, 0, 0],
      [
        { human: 1, judge: 1 },
        { human: 0, judge: 1 },
      ],
    ).ppi!;
    expect(inside.estimate_raw).toBeUndefined();
    expect(ppiText({ ...inside, judge_mean: 0.7 })).not.toContain('clipped');
  });

  it('refuses, with the reason, when a part has fewer than two values', () => {
    expect(ppiMean([1, 0, 1], [{ human: 1, judge: 1 }])).toEqual({
      ppi: null,
      reason: '1 labelled case(s): PPI needs at least 2',
    });
    expect(ppiMean([1], []).reason).toBe('1 judged case(s): PPI needs at least 2');
  });
});

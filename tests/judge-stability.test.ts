import { describe, expect, it } from 'vitest';
import { stability } from '../src/scoring/flip-rate.js';
import { nuggetRecall } from '../src/scoring/nuggets.js';

describe('stability (flip rate over repeated judgments)', () => {
  it('counts the cases whose verdicts are not all equal, over cases judged at least twice', () => {
    // Worked by hand, 3 repeats of a 0/1 criterion over 4 cases:
    //   a: 1 1 1 (stable)   b: 1 0 1 (flips)   c: 0 0 0 (stable)   d: 1 null null (one verdict: left out)
    // flip_rate = 1 flipped / 3 cases with ≥ 2 verdicts = 0.3333…
    // repeat figures: r1 = (1+1+0+1)/4 = 0.75; r2 = (1+0+0)/3 = 0.3333…; r3 = (1+1+0)/3 = 0.6667
    // spread = [0.3333…, 0.75]
    const s = stability(
      [
        [1, 1, 1],
        [1, 0, 1],
        [0, 0, 0],
        [1, null, null],
      ],
      3,
    );
    expect(s.n).toBe(3);
    expect(s.flip_rate).toBeCloseTo(1 / 3, 12);
    expect(s.repeats).toBe(3);
    expect(s.spread!.min).toBeCloseTo(1 / 3, 12);
    expect(s.spread!.max).toBeCloseTo(0.75, 12);
  });

  it('compares categorical verdicts by value and gives no spread for them', () => {
    const s = stability(
      [
        ['answered', 'hedged'],
        ['abstained', 'abstained'],
      ],
      2,
    );
    expect(s).toEqual({ flip_rate: 0.5, n: 2, repeats: 2, spread: null });
  });

  it('is null, not 0, when no case was judged twice', () => {
    expect(stability([[1], [null, 0]], 2).flip_rate).toBeNull();
  });
});

// TREC 2024 RAG track nugget scoring (Pradeep et al. 2024, AutoNuggetizer): strict counts support
// only; weighted gives partial support 0.5; "vital" averages over vital nuggets only.
describe('nuggetRecall', () => {
  it('matches a case worked by hand', () => {
    // 4 nuggets: vital/support, vital/partial, okay/support, okay/not.
    // all strict = (1+0+1+0)/4 = 0.5; all weighted = (1+0.5+1+0)/4 = 0.625
    // vital strict = (1+0)/2 = 0.5; vital weighted = (1+0.5)/2 = 0.75
    expect(
      nuggetRecall([
        { importance: 'vital', support: 'support' },
        { importance: 'vital', support: 'partial_support' },
        { importance: 'okay', support: 'support' },
        { importance: 'okay', support: 'not_support' },
      ]),
    ).toEqual({ all: 0.5, vital: 0.5, weighted: 0.625, vital_weighted: 0.75 });
  });

  it('has no vital figure without vital nuggets, and no figure without nuggets', () => {
    expect(nuggetRecall([{ importance: 'okay', support: 'partial_support' }])).toEqual({
      all: 0,
      vital: null,
      weighted: 0.5,
      vital_weighted: null,
    });
    expect(nuggetRecall([])).toBeNull();
  });
});

/**
 * The default zone search bounds the in-domain share in the weak zone (--max-cautious 0.2): when
 * every off-topic case cannot be caught within the in-domain bounds, the bounds hold, the pair
 * catches the most it can, and the unbounded pair is kept to say what the bound trades. Worked by
 * hand on the fixture of tests/helpers/calibration-fixture.ts.
 */
import { describe, expect, it } from 'vitest';
import { calibrate } from '../src/scoring/calibration.js';
import { c, CURRENT, FIXTURE } from './helpers/calibration-fixture.js';

describe('the cautious bound', () => {
  const cal = calibrate({ cases: FIXTURE, current: CURRENT });

  it('bounds the in-domain share in weak by default, and says what the bound trades', () => {
    // Default: in-domain in empty ≤ 0, in weak ≤ ⌊0.2·10⌋ = 2, every off-topic caught (5).
    // a ≤ −3.5 (nothing below it); weak = in-domain below w ≤ 2 → w ≤ −1 (−3.5, −2 below −1; −1 is not).
    // Caught = off-topic below w: at most 4 (−6 −4.5 −2.5 −1.5) at w = −1; 0.2 stays in normal: traded.
    // Among the 10 pairs (a ∈ −8 … −3.5, w = −1), all with weak 2: most off-topic in empty is 2 at a = −4
    // and −3.5; the highest wins: (−3.5, −1). Without the bound: (−3.5, 0.5), weak 4/10, caught 5/5.
    const r = cal.recommendation;
    expect(cal.constraints).toEqual({ max_silenced: 0, min_caught: 1, max_cautious: 0.2 });
    expect(r.status).toBe('traded');
    expect(r.unmet).toEqual([]);
    expect(r.pairs_meeting).toBe(10);
    expect(r.pair).toMatchObject({ abstain_below: -3.5, weak_below: -1 });
    expect(r.pair!.in_domain).toEqual({ empty: c(0, 10), weak: c(2, 10), normal: c(8, 10) });
    expect(r.pair!.off_topic).toEqual({ empty: c(2, 5), weak: c(2, 5), normal: c(1, 5), caught: c(4, 5) });
    expect(r.unbounded).toMatchObject({ abstain_below: -3.5, weak_below: 0.5, in_domain: { weak: c(4, 10) } });
    // A bound the pair already meets changes nothing: at 0.4 (4 in weak) the unbounded pair is chosen.
    const loose = calibrate({
      cases: FIXTURE,
      current: CURRENT,
      constraints: { max_silenced: 0, min_caught: 1, max_cautious: 0.4 },
    }).recommendation;
    expect(loose).toMatchObject({ status: 'ok', pair: { abstain_below: -3.5, weak_below: 0.5 } });
    expect(loose.unbounded).toBeUndefined();
    // Grid −3..4 with the bound: −3.5 is already below −3 (silenced 1, unmet), so a ∈ {−3, −2.5, −2} (one
    // below each); weak ≤ 2 more → w ≤ −0.5 (3 below); caught at most 4 at w = −1 and −0.5. The least weak
    // reaching 4: w = −1 (2 below: weak 1). Ties: most off-topic in empty, 3 (−6 −4.5 −2.5) at a = −2:
    // (−2, −1). Without the bound: (−2, 0.5), catching all 5 with 3 in weak.
    const g = calibrate({ cases: FIXTURE, current: CURRENT, grid: { from: -3, to: 4, step: 0.5 } }).recommendation;
    expect(g.status).toBe('unmet');
    expect(g.unmet).toEqual([{ constraint: 'max_silenced', required: 0, best: c(1, 10), at: -3 }]);
    expect(g.pair).toMatchObject({ abstain_below: -2, weak_below: -1, in_domain: { weak: c(1, 10) } });
    expect(g.unbounded).toMatchObject({ abstain_below: -2, weak_below: 0.5, off_topic: { caught: c(5, 5) } });
    // No pair can keep weak at 0 on a grid whose steps each pass an in-domain score: said, and relaxed.
    const zero = calibrate({
      cases: FIXTURE,
      current: CURRENT,
      grid: { from: -2.5, to: 0.5, step: 1 },
      constraints: { max_silenced: 1, min_caught: 0, max_cautious: 0 },
    }).recommendation;
    // Thresholds −2.5 −1.5 −0.5 0.5: in-domain below 1, 2, 3, 4: each step adds one in weak.
    expect(zero.unmet).toEqual([{ constraint: 'max_cautious', required: 0, best: c(1, 10), at: null }]);
  });
});

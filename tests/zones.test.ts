import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../src/config/defaults.js';
import { validateConfig } from '../src/config/load.js';
import { ConfigError } from '../src/errors.js';
import {
  countBelow,
  DEFAULT_ZONE_THRESHOLDS,
  evidenceZone,
  storedZoneThresholds,
  zoneCounts,
  zoneOf,
  zoneThresholdProblems,
  ZonesConfigSchema,
} from '../src/model/zones.js';

const T = { abstain_below: -4, weak_below: 0 };

describe('zone rule', () => {
  it('defaults to abstain_below −4, weak_below 0, each on its own and as a section', () => {
    expect(DEFAULT_ZONE_THRESHOLDS).toEqual({ abstain_below: -4, weak_below: 0 });
    expect(ZonesConfigSchema.parse(undefined)).toEqual({ abstain_below: -4, weak_below: 0 });
    expect(ZonesConfigSchema.parse({ weak_below: 1 })).toEqual({ abstain_below: -4, weak_below: 1 });
    expect(ZonesConfigSchema.parse({ abstain_below: -6 })).toEqual({ abstain_below: -6, weak_below: 0 });
    expect(validateConfig(DEFAULT_CONFIG, null, {}).zones).toEqual({ abstain_below: -4, weak_below: 0 });
    expect(ZonesConfigSchema.safeParse({ abstain_below: -4, weak: 0 }).success).toBe(false);
  });

  it('is strict: a score equal to a threshold is in the zone above it', () => {
    expect(zoneOf(-4.000001, T)).toBe('empty');
    expect(zoneOf(-4, T)).toBe('weak');
    expect(zoneOf(-0.000001, T)).toBe('weak');
    expect(zoneOf(0, T)).toBe('normal');
    expect(zoneOf(-0, T)).toBe('normal');
    expect(zoneOf(7, T)).toBe('normal');
    expect(zoneOf(-Infinity, T)).toBe('empty');
    expect(zoneOf(Infinity, T)).toBe('normal');
  });

  it('puts a case without a score in empty', () => {
    expect(zoneOf(null, T)).toBe('empty');
    expect(zoneOf(undefined, T)).toBe('empty');
    expect(zoneOf(Number.NaN, T)).toBe('empty');
  });

  it('without a node scored for zones: normal when retrieval found something, else empty', () => {
    expect(evidenceZone({ scored: false, top1: null, candidates: 3 }, T)).toBe('normal');
    expect(evidenceZone({ scored: false, top1: null, candidates: 0 }, T)).toBe('empty');
    expect(evidenceZone({ scored: true, top1: null, candidates: 0 }, T)).toBe('empty');
    expect(evidenceZone({ scored: true, top1: -4, candidates: 5 }, T)).toBe('weak');
  });
});

describe('abstain_below < weak_below', () => {
  it('accepts a strictly ordered pair only', () => {
    expect(zoneThresholdProblems({ abstain_below: -4, weak_below: 0 })).toEqual([]);
    expect(zoneThresholdProblems({ abstain_below: -4, weak_below: -3.999 })).toEqual([]);
    expect(zoneThresholdProblems({ abstain_below: 0, weak_below: 0 })).toEqual([
      { path: ['abstain_below'], message: 'must be below weak_below (0 ≥ 0)', related: [['weak_below']] },
    ]);
    expect(zoneThresholdProblems({ abstain_below: 1, weak_below: -2.5 })).toEqual([
      { path: ['abstain_below'], message: 'must be below weak_below (1 ≥ -2.5)', related: [['weak_below']] },
    ]);
  });

  it('is reported by the config loader at zones.abstain_below', () => {
    try {
      validateConfig({ ...DEFAULT_CONFIG, zones: { abstain_below: 1, weak_below: 0 } }, null, {});
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).problems).toEqual([
        '(built-in config): zones.abstain_below: must be below weak_below (1 ≥ 0)',
      ]);
    }
  });
});

describe('stored thresholds', () => {
  it('reads a pair from a results file config, or null', () => {
    expect(storedZoneThresholds({ abstain_below: -5, weak_below: 1 })).toEqual({ abstain_below: -5, weak_below: 1 });
    expect(storedZoneThresholds(undefined)).toBeNull();
    expect(storedZoneThresholds({ abstain_below: -5 })).toBeNull();
    expect(storedZoneThresholds({ abstain_below: '-5', weak_below: 1 })).toBeNull();
  });
});

describe('zone counts', () => {
  // Sorted: −6 −4.5 −4 −3.5 −1 −0.5 0 0.2 2 6 (10 scores).
  const scores = Float64Array.from([0.2, -4, 6, -0.5, -6, 0, -3.5, 2, -4.5, -1]).sort();

  it('counts by hand, strictly below each threshold', () => {
    expect(countBelow(Float64Array.from([1, 2, 2, 3]), 2)).toBe(1);
    expect(countBelow([], 0)).toBe(0);
    // (−4, 0): empty −6 −4.5; weak −4 −3.5 −1 −0.5; normal 0 0.2 2 6.
    expect(zoneCounts(scores, T)).toEqual({ empty: 2, weak: 4, normal: 4 });
    // (−3.5, 0.2): empty −6 −4.5 −4; weak −3.5 −1 −0.5 0; normal 0.2 2 6.
    expect(zoneCounts(scores, { abstain_below: -3.5, weak_below: 0.2 })).toEqual({ empty: 3, weak: 4, normal: 3 });
    // Below every score, above every score.
    expect(zoneCounts(scores, { abstain_below: -7, weak_below: -6 })).toEqual({ empty: 0, weak: 0, normal: 10 });
    expect(zoneCounts(scores, { abstain_below: 7, weak_below: 8 })).toEqual({ empty: 10, weak: 0, normal: 0 });
    expect(zoneCounts([], T)).toEqual({ empty: 0, weak: 0, normal: 0 });
  });

  it('agrees with zoneOf on every score, for every pair on a grid (unordered pairs too)', () => {
    const grid = [-7, -6, -4.5, -4, -2, -0.5, 0, 0.1, 0.2, 6, 7];
    for (const abstain_below of grid) {
      for (const weak_below of grid) {
        const t = { abstain_below, weak_below };
        const byCase = { empty: 0, weak: 0, normal: 0 };
        for (const s of scores) byCase[zoneOf(s, t)]++;
        expect(zoneCounts(scores, t), `${abstain_below}:${weak_below}`).toEqual(byCase);
      }
    }
  });
});

/**
 * Evidence zones, the one home of their rule: a question's top-1 cross-encoder score
 * s puts it in `empty` when s < abstain_below, in `weak` when s < weak_below, else in `normal`
 * (strict `<`: a score equal to a threshold is in the zone above it). No evidence is `empty`.
 * Part of the model: imports only zod, so every stage (config, evidence, runs, scoring, reports) may import it.
 */
import { z } from 'zod';

/** The zones, from least to most evidence. */
export const ZONES = ['empty', 'weak', 'normal'] as const;
export const ZoneSchema = z.enum(ZONES);
/** The evidence zone a question's top-1 cross-encoder score puts it in. */
export type Zone = z.infer<typeof ZoneSchema>;

export interface ZoneThresholds {
  /** Below this top-1 logit the evidence block is empty (default −4). */
  abstain_below: number;
  /** Below this (and not empty) the weak-evidence block is used (default 0). */
  weak_below: number;
}

/** Default thresholds (logits): empty below −4, weak below 0. */
export const DEFAULT_ZONE_THRESHOLDS: Readonly<ZoneThresholds> = Object.freeze({ abstain_below: -4, weak_below: 0 });

/** A threshold pair as stored in results and calibration files (both given). */
export const ZoneThresholdsSchema = z.object({ abstain_below: z.number(), weak_below: z.number() }).strict();

/** The config's `zones` section: each threshold defaults on its own, the section as a whole too. */
export const ZonesConfigSchema = z
  .object({
    abstain_below: z.number().default(DEFAULT_ZONE_THRESHOLDS.abstain_below),
    weak_below: z.number().default(DEFAULT_ZONE_THRESHOLDS.weak_below),
  })
  .strict()
  .default({ ...DEFAULT_ZONE_THRESHOLDS });

/** A problem with a threshold pair; `path` and `related` are relative to the pair. */
export interface ZoneThresholdProblem {
  path: ['abstain_below'];
  message: string;
  related: [['weak_below']];
}

/** The cross-field rule: abstain_below must be strictly below weak_below, or no case could be weak. */
export function zoneThresholdProblems(t: ZoneThresholds): ZoneThresholdProblem[] {
  if (t.abstain_below < t.weak_below) return [];
  return [
    {
      path: ['abstain_below'],
      message: `must be below weak_below (${t.abstain_below} ≥ ${t.weak_below})`,
      related: [['weak_below']],
    },
  ];
}

/** The thresholds a stored config carries (a results file's `config.zones`), or null when it has no valid pair. */
export function storedZoneThresholds(zones: unknown): ZoneThresholds | null {
  const parsed = ZoneThresholdsSchema.safeParse(zones);
  return parsed.success ? parsed.data : null;
}

/** No candidate at all (null, undefined, NaN) is empty evidence too. */
export function zoneOf(top1: number | null | undefined, t: ZoneThresholds): Zone {
  if (top1 === null || top1 === undefined || Number.isNaN(top1)) return 'empty';
  if (top1 < t.abstain_below) return 'empty';
  if (top1 < t.weak_below) return 'weak';
  return 'normal';
}

/**
 * A case's zone: from the top-1 score when a node is scored for zones (a reranker); without
 * one, normal when retrieval found any candidate and empty when it found none.
 */
export function evidenceZone(
  e: { scored: boolean; top1: number | null | undefined; candidates: number },
  t: ZoneThresholds,
): Zone {
  if (e.scored) return zoneOf(e.top1, t);
  return e.candidates > 0 ? 'normal' : 'empty';
}

/** A zero count per zone, in zone order (a tally to add cases to). */
export function noZoneCounts(): Record<Zone, number> {
  return { empty: 0, weak: 0, normal: 0 };
}

/** Number of values of an ascending array strictly below t (binary search). */
export function countBelow(sorted: ArrayLike<number>, t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * How many of a list of finite top-1 scores, sorted ascending, fall in each zone: the same
 * answer as `zoneOf` on each score, in O(log n) per pair, so calibration sweeps can try many
 * pairs. A pair with abstain_below ≥ weak_below leaves the weak zone empty, as `zoneOf` does.
 */
export function zoneCounts(sorted: ArrayLike<number>, t: ZoneThresholds): Record<Zone, number> {
  const empty = countBelow(sorted, t.abstain_below);
  const below = Math.max(empty, countBelow(sorted, t.weak_below));
  return { empty, weak: below - empty, normal: sorted.length - below };
}

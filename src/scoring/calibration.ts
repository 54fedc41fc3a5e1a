/**
 * Zone-threshold calibration: how the top-1 cross-encoder score of in-domain and
 * off-topic cases falls against candidate thresholds, and which (abstain_below, weak_below)
 * pair a grid search recommends. Pure and fast: each kind's scores are sorted once and every
 * count is a binary search, O((n + T) log n) for n cases and T thresholds; the pair search
 * works on those per-threshold counts, never on cases. The zone rule and counts are
 * model/zones.ts's.
 */
import { z } from 'zod';
import {
  countBelow,
  DEFAULT_ZONE_THRESHOLDS,
  zoneCounts,
  ZoneThresholdsSchema,
  type ZoneThresholds,
} from '../model/zones.js';
import { describe } from './statistics.js';

/** One case as calibration sees it: `top1` is null when it has no score (no candidates, error). */
export interface CalibrationCase {
  id: string;
  kind: string;
  top1: number | null;
}

/** A count out of a population; `share` is count / n, null when n = 0. */
export const CountSchema = z
  .object({ count: z.number().int(), n: z.number().int(), share: z.number().nullable() })
  .strict();
export type Count = z.infer<typeof CountSchema>;

const stat = z.number().nullable();
/** Type 7 summary of one kind's top-1 scores (logits); every field but n is null when n = 0. */
export const DistributionSchema = z
  .object({
    n: z.number().int(),
    min: stat,
    p5: stat,
    p25: stat,
    median: stat,
    p75: stat,
    p95: stat,
    max: stat,
    mean: stat,
  })
  .strict();
export type Distribution = z.infer<typeof DistributionSchema>;

/**
 * One grid threshold t as a candidate for both roles: in-domain < t (wrongly silenced when t is
 * abstain_below), off-topic < t (caught in empty, or in empty ∪ weak when t is weak_below), and
 * in-domain in [a, t) for the current abstain_below a (cautious cost; null when t ≤ a).
 */
export const GridRowSchema = z
  .object({
    threshold: z.number(),
    in_domain_below: CountSchema,
    off_topic_below: CountSchema,
    in_domain_weak: CountSchema.nullable(),
  })
  .strict();
export type GridRow = z.infer<typeof GridRowSchema>;

/** Where one (abstain_below, weak_below) pair puts each kind. */
export const ZoneFiguresSchema = ZoneThresholdsSchema.extend({
  in_domain: z.object({ empty: CountSchema, weak: CountSchema, normal: CountSchema }).strict(),
  off_topic: z.object({ empty: CountSchema, weak: CountSchema, normal: CountSchema, caught: CountSchema }).strict(),
}).strict();
export type ZoneFigures = z.infer<typeof ZoneFiguresSchema>;

/** A constraint no grid pair meets, with the best value the grid can reach. */
export const UnmetSchema = z
  .object({
    constraint: z.enum(['max_silenced', 'min_caught', 'grid']),
    required: z.number(),
    best: CountSchema.nullable(),
    at: z.number().nullable(),
  })
  .strict();
export type Unmet = z.infer<typeof UnmetSchema>;

/**
 * `ok`: `pair` meets the constraints. `unmet`: none does; `pair` is the closest (best under the
 * constraints relaxed to what the grid can reach). `no_data`: a kind has no scored case.
 */
export const RecommendationSchema = z
  .object({
    status: z.enum(['ok', 'unmet', 'no_data']),
    pair: ZoneFiguresSchema.nullable(),
    unmet: z.array(UnmetSchema),
    pairs_meeting: z.number().int(),
  })
  .strict();
export type Recommendation = z.infer<typeof RecommendationSchema>;

/** Limits on the recommended pair, as shares in [0, 1]. */
export const ConstraintsSchema = z
  .object({ max_silenced: z.number().min(0).max(1), min_caught: z.number().min(0).max(1) })
  .strict();
export type Constraints = z.infer<typeof ConstraintsSchema>;

export const GridSpecSchema = z.object({ from: z.number(), to: z.number(), step: z.number().positive() }).strict();
export type GridSpec = z.infer<typeof GridSpecSchema>;

/** Cases left out of the figures: no top-1 score (per kind, with ids), or a kind other than the two. */
export const ExcludedSchema = z
  .object({
    no_score: z.object({ in_domain: z.array(z.string()), off_topic: z.array(z.string()) }).strict(),
    other_kinds: z.record(z.string(), z.number().int()),
  })
  .strict();

/** Grid defaults (logits) and constraint defaults: nothing in-domain silenced, every off-topic caught. */
export const DEFAULT_GRID: GridSpec = { from: -8, to: 4, step: 0.5 };
export const DEFAULT_CONSTRAINTS: Constraints = { max_silenced: 0, min_caught: 1 };
/** Above this many thresholds the grid is refused (a typo such as `--step 0.00001`). */
export const MAX_GRID = 100_000;

/** The order among pairs meeting the constraints, stated in every output. */
export const TIE_RULE =
  'least in-domain share in the weak zone; ties: most off-topic in empty, then most off-topic caught (empty or weak), then the highest abstain_below, then the lowest weak_below';

export interface CalibrationInput {
  cases: readonly CalibrationCase[];
  grid?: GridSpec;
  constraints?: Constraints;
  /** The thresholds in use (config `zones`), for the cautious column and the current figures. */
  current?: ZoneThresholds;
}

export interface Calibration {
  distributions: { in_domain: Distribution; off_topic: Distribution };
  excluded: z.infer<typeof ExcludedSchema>;
  grid: GridSpec;
  constraints: Constraints;
  current: ZoneFigures;
  rows: GridRow[];
  recommendation: Recommendation;
}

/** The grid's thresholds, rounded to 10 decimals so 0.1 steps print as written. */
export function gridThresholds(spec: GridSpec): number[] {
  const { from, to, step } = spec;
  if (![from, to, step].every(Number.isFinite)) throw new RangeError('grid: from, to and step must be finite numbers');
  if (!(step > 0)) throw new RangeError(`grid: step must be > 0, got ${step}`);
  if (to < from) throw new RangeError(`grid: to (${to}) is below from (${from})`);
  const count = Math.floor((to - from) / step + 1e-9) + 1;
  if (count > MAX_GRID)
    throw new RangeError(`grid: ${count} thresholds from ${from} to ${to} step ${step}; at most ${MAX_GRID}`);
  return Array.from({ length: count }, (_, i) => Number((from + i * step).toFixed(10)));
}

export function count(c: number, n: number): Count {
  return { count: c, n, share: n > 0 ? c / n : null };
}

function distribution(sorted: Float64Array): Distribution {
  const d = describe(Array.from(sorted));
  const v = (x: number) => (Number.isNaN(x) ? null : x);
  return {
    n: d.n,
    min: v(d.min),
    p5: v(d.p5),
    p25: v(d.p25),
    median: v(d.median),
    p75: v(d.p75),
    p95: v(d.p95),
    max: v(d.max),
    mean: v(d.mean),
  };
}

/** Per-kind sorted scores; cases without a score or of another kind are listed apart. */
function split(cases: readonly CalibrationCase[]) {
  const scores: { in_domain: number[]; off_topic: number[] } = { in_domain: [], off_topic: [] };
  const excluded: Calibration['excluded'] = { no_score: { in_domain: [], off_topic: [] }, other_kinds: {} };
  for (const c of cases) {
    if (c.kind !== 'in_domain' && c.kind !== 'off_topic') {
      excluded.other_kinds[c.kind] = (excluded.other_kinds[c.kind] ?? 0) + 1;
    } else if (c.top1 === null || !Number.isFinite(c.top1)) {
      excluded.no_score[c.kind].push(c.id);
    } else {
      scores[c.kind].push(c.top1);
    }
  }
  return { id: Float64Array.from(scores.in_domain).sort(), off: Float64Array.from(scores.off_topic).sort(), excluded };
}

/** Where a pair puts each kind, from the sorted scores. */
export function zoneFigures(id: Float64Array, off: Float64Array, zones: ZoneThresholds): ZoneFigures {
  const figure = (s: Float64Array) => {
    const n = zoneCounts(s, zones);
    return {
      empty: count(n.empty, s.length),
      weak: count(n.weak, s.length),
      normal: count(n.normal, s.length),
      caught: count(n.empty + n.weak, s.length),
    };
  };
  const d = figure(id);
  return {
    abstain_below: zones.abstain_below,
    weak_below: zones.weak_below,
    in_domain: { empty: d.empty, weak: d.weak, normal: d.normal },
    off_topic: figure(off),
  };
}

/**
 * Best pair (i < j) under count limits, by TIE_RULE. idB/offB: cases below each threshold,
 * nondecreasing. For a given i the best j is found from runs of equal counts, so the search is
 * O(T log T) whatever the data.
 */
function searchPair(
  thresholds: readonly number[],
  idB: Int32Array,
  offB: Int32Array,
  maxSilenced: number,
  minCaught: number,
): { i: number; j: number; meeting: number } | null {
  const T = thresholds.length;
  let j0 = 0;
  while (j0 < T && (offB[j0] as number) < minCaught) j0++;
  if (j0 >= T) return null;
  // runEnd[j]: the last index of the run of equal in-domain counts holding j.
  const runEnd = new Int32Array(T);
  for (let j = T - 1; j >= 0; j--) runEnd[j] = j + 1 < T && idB[j + 1] === idB[j] ? (runEnd[j + 1] as number) : j;
  let best: { i: number; j: number; key: number[] } | null = null;
  let meeting = 0;
  for (let i = 0; i < T - 1 && (idB[i] as number) <= maxSilenced; i++) {
    const start = Math.max(i + 1, j0);
    if (start >= T) break;
    meeting += T - start;
    // Cheapest w for this a: the run starting at `start`; in it, most caught, then the lowest w.
    const end = runEnd[start] as number;
    const j = start + countBelow(offB.subarray(start, end + 1), offB[end] as number);
    const key = [
      -((idB[j] as number) - (idB[i] as number)),
      offB[i] as number,
      offB[j] as number,
      thresholds[i] as number,
      -(thresholds[j] as number),
    ];
    if (!best || isGreater(key, best.key)) best = { i, j, key };
  }
  return best ? { i: best.i, j: best.j, meeting } : null;
}

function isGreater(a: number[], b: number[]): boolean {
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return (a[k] as number) > (b[k] as number);
  return false;
}

function recommend(
  thresholds: number[],
  id: Float64Array,
  off: Float64Array,
  idB: Int32Array,
  offB: Int32Array,
  c: Constraints,
): Recommendation {
  const T = thresholds.length;
  if (id.length === 0 || off.length === 0) return { status: 'no_data', pair: null, unmet: [], pairs_meeting: 0 };
  if (T < 2)
    return {
      status: 'unmet',
      pair: null,
      unmet: [{ constraint: 'grid', required: 2, best: null, at: null }],
      pairs_meeting: 0,
    };
  // Integer limits (no share rounding): silenced ≤ ⌊R·n⌋, caught ≥ ⌈R·n⌉.
  const maxSil = Math.floor(c.max_silenced * id.length + 1e-9);
  const minCaught = Math.ceil(c.min_caught * off.length - 1e-9);
  const pairOf = (p: { i: number; j: number }) =>
    zoneFigures(id, off, { abstain_below: thresholds[p.i]!, weak_below: thresholds[p.j]! });
  const found = searchPair(thresholds, idB, offB, maxSil, minCaught);
  if (found) return { status: 'ok', pair: pairOf(found), unmet: [], pairs_meeting: found.meeting };
  const unmet: Unmet[] = [];
  if ((idB[0] as number) > maxSil)
    unmet.push({
      constraint: 'max_silenced',
      required: c.max_silenced,
      best: count(idB[0] as number, id.length),
      at: thresholds[0]!,
    });
  if ((offB[T - 1] as number) < minCaught)
    unmet.push({
      constraint: 'min_caught',
      required: c.min_caught,
      best: count(offB[T - 1] as number, off.length),
      at: thresholds[T - 1]!,
    });
  // Closest: the best pair once each failing limit is relaxed to what the grid can reach.
  const closest = searchPair(
    thresholds,
    idB,
    offB,
    Math.max(maxSil, idB[0] as number),
    Math.min(minCaught, offB[T - 1] as number),
  );
  return { status: 'unmet', pair: closest ? pairOf(closest) : null, unmet, pairs_meeting: 0 };
}

/** Distributions, threshold grid, current figures and the recommended pair. */
export function calibrate(input: CalibrationInput): Calibration {
  const grid = input.grid ?? DEFAULT_GRID;
  const constraints = ConstraintsSchema.parse(input.constraints ?? DEFAULT_CONSTRAINTS);
  const current = input.current ?? DEFAULT_ZONE_THRESHOLDS;
  const thresholds = gridThresholds(grid);
  const { id, off, excluded } = split(input.cases);
  const T = thresholds.length;
  const idB = new Int32Array(T);
  const offB = new Int32Array(T);
  const aBelow = countBelow(id, current.abstain_below);
  const rows: GridRow[] = new Array(T);
  for (let k = 0; k < T; k++) {
    const t = thresholds[k]!;
    idB[k] = countBelow(id, t);
    offB[k] = countBelow(off, t);
    rows[k] = {
      threshold: t,
      in_domain_below: count(idB[k] as number, id.length),
      off_topic_below: count(offB[k] as number, off.length),
      in_domain_weak: t > current.abstain_below ? count((idB[k] as number) - aBelow, id.length) : null,
    };
  }
  return {
    distributions: { in_domain: distribution(id), off_topic: distribution(off) },
    excluded,
    grid,
    constraints,
    current: zoneFigures(id, off, current),
    rows,
    recommendation: recommend(thresholds, id, off, idB, offB, constraints),
  };
}

/** The calibration file (`results/<stamp>-<name>-calibration.json`), validated on write. */
export const CalibrationFileSchema = z
  .object({
    schema_version: z.literal(1),
    kind: z.literal('calibration'),
    tool: z.object({ name: z.literal('ragaudit'), version: z.string() }).strict(),
    name: z.string(),
    created_at: z.string(),
    /** The results file the scores come from (relative to the working directory). */
    source: z.string(),
    source_kind: z.string(),
    /** The retrieval node whose top-1 score is calibrated. */
    node: z.string(),
    /** e.g. that the scores come from an offline stand-in, not a cross-encoder. */
    notes: z.array(z.string()),
    zones_current: ZoneThresholdsSchema,
    grid: GridSpecSchema,
    constraints: ConstraintsSchema,
    tie_rule: z.string(),
    distributions: z.object({ in_domain: DistributionSchema, off_topic: DistributionSchema }).strict(),
    excluded: ExcludedSchema,
    current: ZoneFiguresSchema,
    grid_rows: z.array(GridRowSchema),
    recommendation: RecommendationSchema,
    /** The recommendation as printed. */
    statement: z.array(z.string()),
  })
  .strict();
export type CalibrationFile = z.infer<typeof CalibrationFileSchema>;

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
import { leastCautious, mostCaught, searchPair } from './zone-search.js';

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
    constraint: z.enum(['max_silenced', 'max_cautious', 'min_caught', 'grid']),
    required: z.number(),
    best: CountSchema.nullable(),
    at: z.number().nullable(),
  })
  .strict();
export type Unmet = z.infer<typeof UnmetSchema>;

/**
 * `ok`: `pair` meets the constraints. `traded`: each constraint can be met, but not the off-topic
 * share together with the cautious bound; `pair` keeps the bounds on in-domain cases (silenced,
 * cautious) and catches the most off-topic cases within them. `unmet`: a constraint cannot be met
 * on this grid at all; `pair` is the closest (best under the constraints relaxed to what the grid
 * can reach). `no_data`: a kind has no scored case. `unbounded`, beside a traded or unmet pair:
 * the pair the search gives without the cautious bound, when it catches more off-topic cases
 * (what the bound trades them for).
 */
export const RecommendationSchema = z
  .object({
    status: z.enum(['ok', 'traded', 'unmet', 'no_data']),
    pair: ZoneFiguresSchema.nullable(),
    unmet: z.array(UnmetSchema),
    pairs_meeting: z.number().int(),
    unbounded: ZoneFiguresSchema.optional(),
  })
  .strict();
export type Recommendation = z.infer<typeof RecommendationSchema>;

/**
 * Limits on the recommended pair, as shares in [0, 1]: in-domain cases in empty (silenced) and in
 * weak (answered with caution), off-topic cases caught (empty or weak). `max_cautious` absent:
 * no bound on the weak zone (files and calls made before it).
 */
export const ConstraintsSchema = z
  .object({
    max_silenced: z.number().min(0).max(1),
    min_caught: z.number().min(0).max(1),
    max_cautious: z.number().min(0).max(1).optional(),
  })
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

/**
 * Grid defaults (logits) and constraint defaults: nothing in-domain silenced, at most a fifth of
 * in-domain answered with caution, every off-topic caught when the first two allow it. Without
 * the cautious bound, catching the last off-topic case can push most in-domain answers into the
 * weak zone (61 % on the demo); the original forum audit chose weak_below 0.0 for 17 % there.
 */
export const DEFAULT_GRID: GridSpec = { from: -8, to: 4, step: 0.5 };
export const DEFAULT_CONSTRAINTS: Constraints = { max_silenced: 0, min_caught: 1, max_cautious: 0.2 };
/** Above this many thresholds the grid is refused (a typo such as `--step 0.00001`). */
export const MAX_GRID = 100_000;

/** The order among pairs meeting the constraints, stated in every output. */
export const TIE_RULE =
  'least in-domain share in the weak zone; ties: most off-topic in empty, then most off-topic caught (empty or weak), then the highest abstain_below, then the lowest weak_below';
/** The order when the cautious bound and the off-topic share cannot both be met. */
export const TRADED_RULE = `within the in-domain bounds, the most off-topic caught; then the ${TIE_RULE}`;

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
  const g = { thresholds, idB, offB };
  // Integer limits (no share rounding): silenced ≤ ⌊R·n⌋, cautious ≤ ⌊R·n⌋, caught ≥ ⌈R·n⌉.
  const maxSil = Math.floor(c.max_silenced * id.length + 1e-9);
  const maxCau = c.max_cautious === undefined ? Infinity : Math.floor(c.max_cautious * id.length + 1e-9);
  const minCaught = Math.ceil(c.min_caught * off.length - 1e-9);
  const pairOf = (p: { i: number; j: number }) =>
    zoneFigures(id, off, { abstain_below: thresholds[p.i]!, weak_below: thresholds[p.j]! });
  const found = searchPair(g, { maxSilenced: maxSil, maxCautious: maxCau, minCaught });
  if (found) return { status: 'ok', pair: pairOf(found), unmet: [], pairs_meeting: found.meeting };
  const unmet: Unmet[] = [];
  if ((idB[0] as number) > maxSil)
    unmet.push({
      constraint: 'max_silenced',
      required: c.max_silenced,
      best: count(idB[0] as number, id.length),
      at: thresholds[0]!,
    });
  // Each failing limit relaxed to what the grid can reach, the in-domain bounds first.
  const sil = Math.max(maxSil, idB[0] as number);
  let cau = maxCau;
  if (mostCaught(g, sil, cau) < 0) {
    cau = leastCautious(g, sil);
    unmet.push({ constraint: 'max_cautious', required: c.max_cautious!, best: count(cau, id.length), at: null });
  }
  if ((offB[T - 1] as number) < minCaught)
    unmet.push({
      constraint: 'min_caught',
      required: c.min_caught,
      best: count(offB[T - 1] as number, off.length),
      at: thresholds[T - 1]!,
    });
  const reach = Math.min(minCaught, mostCaught(g, sil, cau));
  const closest = searchPair(g, { maxSilenced: sil, maxCautious: cau, minCaught: reach });
  // What the cautious bound costs: the pair without it, when it catches more off-topic cases.
  const free = searchPair(g, {
    maxSilenced: sil,
    maxCautious: Infinity,
    minCaught: Math.min(minCaught, offB[T - 1] as number),
  });
  const unbounded =
    closest && free && (offB[free.j] as number) > (offB[closest.j] as number) ? pairOf(free) : undefined;
  return {
    status: unmet.length ? 'unmet' : 'traded',
    pair: closest ? pairOf(closest) : null,
    unmet,
    pairs_meeting: unmet.length || !closest ? 0 : closest.meeting,
    ...(unbounded ? { unbounded } : {}),
  };
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

import type { CaseRecord, RunResult } from '../model/results.js';
import type { MeanN } from '../model/summary.js';
import { isConversation } from '../summary/retrieval-summary.js';
import { setPairs } from './case-sets.js';
import { BOOTSTRAP_DEFAULTS, mcnemarExact, pairedBootstrapCI } from '../scoring/statistics.js';
import { COMPARE_SET_METRICS } from '../scoring/run-row.js';
import { configDiff, type ConfigDiff } from './compare-config.js';
import {
  CASE_METRICS,
  pickNode,
  runFigures,
  type CaseMetric,
  type MetricKind,
  type RunFigures,
} from './compare-metrics.js';

/**
 * Compares runs one factor at a time: the figures of each run, the configuration
 * differences against a baseline, every per-question change by metric (regressions and
 * improvements named), and for each metric a paired bootstrap CI of the difference with
 * McNemar's exact test for binary metrics. Pure: same inputs and seed, same comparison.
 */

/** A run to compare: its results and how it is named in tables. */
export interface LoadedRun {
  label: string;
  file: string;
  result: RunResult;
}

/** One row of the comparison table. */
export interface RunRow extends RunFigures {
  label: string;
  file: string;
  name: string;
  kind: string;
  note: string;
  config_digest: string;
  baseline: boolean;
  /**
   * Present when the run's cases split into sets (src/summary/retrieval-summary.ts caseSetGroups): set → its
   * figures at the compared node (COMPARE_SET_METRICS, src/scoring/run-row.ts), from the summary's breakdown.
   */
  sets?: Record<string, Record<string, MeanN>>;
}

/** What retrieval searched for in a conversation case (null: the record holds no retrieval query). */
export type QueryShown = { mode: string; text: string } | null;

/** A conversation case whose retrieval query differs between the baseline and a run. */
export interface QueryChange {
  id: string;
  old: QueryShown;
  new: QueryShown;
}

export type Direction = 'regression' | 'improvement' | 'change';

/** A question whose value of one metric changed between the baseline and a run. */
export interface CaseChange {
  id: string;
  metric: string;
  old: number | string | null;
  new: number | string | null;
  direction: Direction;
}

/** A metric's difference (run − baseline) over the cases both runs scored. */
export interface MetricStat {
  metric: string;
  kind: MetricKind;
  /** Pairs: cases present in both runs with a value in both. */
  n: number;
  baseline_mean: number | null;
  run_mean: number | null;
  /** mean(run − baseline) over the pairs. */
  diff: number | null;
  /** Paired bootstrap 95 % percentile interval of the mean difference. */
  ci_low: number | null;
  ci_high: number | null;
  /** The interval excludes 0. */
  significant: boolean;
  /** Binary metrics: McNemar's exact test (b01 = 0 → 1, b10 = 1 → 0). */
  mcnemar?: { b01: number; b10: number; p: number };
}

/** A run against the baseline. */
export interface RunVsBaseline {
  label: string;
  config_diff: ConfigDiff[];
  matched: number;
  only_in_baseline: string[];
  only_in_run: string[];
  changes: CaseChange[];
  /** Ids of the questions with at least one regression, in case order. */
  regressed: string[];
  improved: string[];
  stats: MetricStat[];
  /**
   * When both runs hold conversation cases: the matched conversation cases whose retrieval query
   * (mode or text) differs, in case order (so a `last` run against a `condensed` one shows what
   * condensation changed, question by question).
   */
  queries?: QueryChange[];
}

export interface Comparison {
  baseline: string;
  /** The --node flag, or null when each run used its default (rerank node, else last). */
  node: string | null;
  seed: number;
  iterations: number;
  rows: RunRow[];
  /** Every run but the baseline, against it (the baseline alone: against itself). */
  versus: RunVsBaseline[];
}

export interface CompareOptions {
  /** Index of the baseline in `runs`; default 0. */
  baseline?: number;
  node?: string;
  /** Bootstrap seed; default 1. */
  seed?: number;
  /** Bootstrap resamples; default 10 000. */
  iterations?: number;
}

const EPS = 1e-9;

function sameValue(a: number | string | null, b: number | string | null): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) < EPS;
  return a === b;
}

function direction(metric: CaseMetric, a: number | string | null, b: number | string | null): Direction {
  if (metric.key === 'status')
    return a === 'ok' && b === 'error' ? 'regression' : a === 'error' && b === 'ok' ? 'improvement' : 'change';
  if (metric.better === null || typeof a !== 'number' || typeof b !== 'number') return 'change';
  return b > a === (metric.better === 'higher') ? 'improvement' : 'regression';
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);

function statOf(
  metric: CaseMetric,
  pairs: [number, number][],
  opts: Required<Pick<CompareOptions, 'seed' | 'iterations'>>,
): MetricStat {
  const a = pairs.map((p) => p[0]);
  const b = pairs.map((p) => p[1]);
  const stat: MetricStat = {
    metric: metric.key,
    kind: metric.kind,
    n: pairs.length,
    baseline_mean: mean(a),
    run_mean: mean(b),
    diff: null,
    ci_low: null,
    ci_high: null,
    significant: false,
  };
  if (!pairs.length) return stat;
  const ci = pairedBootstrapCI(a, b, { seed: opts.seed, iterations: opts.iterations });
  Object.assign(stat, { diff: ci.meanDiff, ci_low: ci.low, ci_high: ci.high, significant: ci.significant });
  if (metric.kind === 'binary') {
    const m = mcnemarExact(
      a.map((x) => x === 1),
      b.map((x) => x === 1),
    );
    stat.mcnemar = { b01: m.b01, b10: m.b10, p: m.pValue };
  }
  return stat;
}

/** One run against the baseline, cases matched by id. */
export function versus(
  base: { result: RunResult; node: string },
  run: { label: string; result: RunResult; node: string },
  opts: Required<Pick<CompareOptions, 'seed' | 'iterations'>>,
): RunVsBaseline {
  const byId = new Map<string, CaseRecord>(run.result.cases.map((c) => [c.id, c]));
  const baseIds = new Set(base.result.cases.map((c) => c.id));
  const matched = base.result.cases.filter((c) => byId.has(c.id)).map((c) => [c, byId.get(c.id)!] as const);
  const changes: CaseChange[] = [];
  const stats: MetricStat[] = [];
  for (const metric of CASE_METRICS) {
    const pairs: [number, number][] = [];
    for (const [a, b] of matched) {
      const va = metric.get(a, base.node);
      const vb = metric.get(b, run.node);
      if (typeof va === 'number' && typeof vb === 'number') pairs.push([va, vb]);
      if (!sameValue(va, vb))
        changes.push({ id: a.id, metric: metric.key, old: va, new: vb, direction: direction(metric, va, vb) });
    }
    if (metric.stats) stats.push(statOf(metric, pairs, opts));
  }
  const queries =
    base.result.cases.some(isConversation) && run.result.cases.some(isConversation) ? queryChanges(matched) : undefined;
  const order = new Map(matched.map(([a], i) => [a.id, i]));
  const ids = (d: Direction) =>
    [...new Set(changes.filter((c) => c.direction === d).map((c) => c.id))].sort(
      (x, y) => order.get(x)! - order.get(y)!,
    );
  return {
    label: run.label,
    config_diff: configDiff(base.result, run.result),
    matched: matched.length,
    only_in_baseline: base.result.cases.filter((c) => !byId.has(c.id)).map((c) => c.id),
    only_in_run: run.result.cases.filter((c) => !baseIds.has(c.id)).map((c) => c.id),
    changes,
    regressed: ids('regression'),
    improved: ids('improvement'),
    stats,
    ...(queries ? { queries } : {}),
  };
}

const queryOf = (r: CaseRecord): QueryShown =>
  r.retrieval_query ? { mode: r.retrieval_query.mode, text: r.retrieval_query.text } : null;

/** Matched conversation cases whose retrieval query differs in mode or text. */
function queryChanges(matched: readonly (readonly [CaseRecord, CaseRecord])[]): QueryChange[] {
  return matched
    .filter(([a, b]) => isConversation(a) || isConversation(b))
    .map(([a, b]) => ({ id: a.id, old: queryOf(a), new: queryOf(b) }))
    .filter((q) => q.old?.mode !== q.new?.mode || q.old?.text !== q.new?.text);
}

/** A run's set figures at `node`, or nothing when its cases form no set. */
function setFigures(result: RunResult, node: string): Pick<RunRow, 'sets'> {
  const b = result.summary.retrieval.breakdown;
  const sets = setPairs(Object.keys(b)).flatMap((p) => p.sets);
  if (!sets.length) return {};
  const none: MeanN = { mean: null, n: 0 };
  return {
    sets: Object.fromEntries(
      sets.map((s) => [s, Object.fromEntries(COMPARE_SET_METRICS.map((m) => [m.key, b[s]?.[node]?.[m.key] ?? none]))]),
    ),
  };
}

/** The comparison row of a run read at `node` (what the table shows and the gate reads). */
export function runRow(r: LoadedRun, node: string, baseline: boolean): RunRow {
  return {
    label: r.label,
    file: r.file,
    name: r.result.name,
    kind: r.result.kind,
    note: r.result.note,
    config_digest: r.result.config_digest,
    baseline,
    ...runFigures(r.result, node),
    ...setFigures(r.result, node),
  };
}

/** Compares `runs` (at least one) against the one at `opts.baseline`. */
export function compareRuns(runs: readonly LoadedRun[], opts: CompareOptions = {}): Comparison {
  if (!runs.length) throw new RangeError('compareRuns: no run to compare');
  const b = opts.baseline ?? 0;
  if (!(b >= 0 && b < runs.length)) throw new RangeError(`compareRuns: baseline index ${b} out of range`);
  const o = {
    seed: opts.seed ?? BOOTSTRAP_DEFAULTS.seed,
    iterations: opts.iterations ?? BOOTSTRAP_DEFAULTS.iterations,
  };
  const nodes = runs.map((r) => pickNode(r.result, opts.node, r.label));
  const rows: RunRow[] = runs.map((r, i) => runRow(r, nodes[i]!, i === b));
  const base = { result: runs[b]!.result, node: nodes[b]! };
  const others = runs.map((r, i) => ({ ...r, node: nodes[i]!, i })).filter((r) => r.i !== b || runs.length === 1);
  return {
    baseline: runs[b]!.label,
    node: opts.node ?? null,
    seed: o.seed,
    iterations: o.iterations,
    rows,
    versus: others.map((r) => versus(base, r, o)),
  };
}

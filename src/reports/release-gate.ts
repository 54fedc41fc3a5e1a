import { z } from 'zod';
import { InputError } from '../errors.js';
import { didYouMean } from '../suggest.js';
import { CalibrationRuleSchema, type CalibrationRule } from '../judge/calibration.js';
import { readYaml, zodProblems } from '../yaml-file.js';
import { figureValue, GATE_METRICS, metric as registryMetric } from '../scoring/registry.js';
import type { RunResult } from '../model/results.js';
import { figureInterval } from '../scoring/figure-interval.js';
import { intervalMethod } from '../scoring/registry.js';
import { runRow, type Comparison, type LoadedRun, type RunRow } from './compare.js';
import { rowFigure } from './compare-metrics.js';
import { fmt } from './format.js';

/**
 * The release gate: rules on a run's figures, read from a YAML file such as
 *   hit_at_5: {max_drop: 0.02}
 *   citation_validity: {min: 1.0}
 *   pass_rate: {min_lower_ci: 0.9}
 *   offtopic_hallucinations: {max: 0}
 *   max_regressions: 3
 * `compare --gate` checks every run but the baseline against it (the CLI refuses a gate without
 * two distinct files whose case ids pair, gatePairingProblem); `gate` and `run --gate` check one
 * run, against a baseline only when given one (a relative rule without one fails, saying so). A
 * figure a run does not measure (faithfulness without a judge) fails its rule rather than
 * passing silently.
 */

/** A gated figure: how to read it from a comparison row. */
interface GateMetric {
  read(row: RunRow): number | null;
  doc: string;
  /** Why the figure does not apply to this row (e.g. post hits on a topic-grain node), else null. */
  notApplicable?(row: RunRow): string | null;
}

/** Every metric a gate file may name: the gated metrics of the registry (src/scoring/registry.ts). */
export const RELEASE_GATE_METRICS: Record<string, GateMetric> = Object.fromEntries(
  GATE_METRICS.map((m): [string, GateMetric] => {
    const na = m.gate?.notApplicable;
    return [
      m.key,
      {
        read: (r) => figureValue(rowFigure(r, m.key)),
        doc: m.gate?.doc ?? m.doc.definition,
        ...(na
          ? { notApplicable: (r: RunRow) => na({ node: r.node, grain: r.post_hit_applies ? 'post' : 'topic' }) }
          : {}),
      },
    ];
  }),
);

const Limit = z.number().refine(Number.isFinite, 'expected a finite number');
const RuleSchema = z
  .object({
    min: Limit.optional(),
    max: Limit.optional(),
    /** The figure's 95 % interval lower bound must reach this (src/scoring/figure-interval.ts). */
    min_lower_ci: Limit.optional(),
    max_drop: Limit.min(0).optional(),
    max_increase: Limit.min(0).optional(),
  })
  .strict()
  // Only for a rule that is otherwise valid: `{minimum: 1}` is reported as an unknown key alone.
  .refine((r) => Object.keys(r).length > 0, {
    message: 'a rule needs at least one of min, max, min_lower_ci, max_drop, max_increase',
    when: (p) => !p.issues.length,
  });
export type IntentRule = z.infer<typeof RuleSchema>;

const GateFileSchema = z
  .object({
    max_regressions: z.number().int().min(0).optional(),
    judge_calibration: CalibrationRuleSchema.optional(),
    ...Object.fromEntries(Object.keys(RELEASE_GATE_METRICS).map((k) => [k, RuleSchema.optional()])),
  })
  .strict();

/** A validated gate file. */
export interface ReleaseGateRules {
  file: string;
  metrics: Record<string, IntentRule>;
  max_regressions?: number;
  /** The calibration the judge-derived rules rest on (docs/labelling.md); absent: not checked. */
  judge_calibration?: CalibrationRule;
}

/** Reads and validates a gate file; every problem names file:line (exit 2). */
export function loadReleaseGate(file: string, text?: string): ReleaseGateRules {
  const src = readYaml(file, text);
  if (src.data === null || src.data === undefined) throw new InputError(`${file}: the gate file has no rules`);
  if (typeof src.data !== 'object' || Array.isArray(src.data))
    throw new InputError(`${file}:1: expected a mapping of metric → rule`);
  const listed = [...Object.keys(RELEASE_GATE_METRICS), 'max_regressions'];
  // judge_calibration is a setting, not a metric: accepted, not listed among the metrics.
  const known = [...listed, 'judge_calibration'];
  const unknown = Object.keys(src.data).filter((k) => !known.includes(k));
  const problems = unknown.map(
    (k) => `${file}:${src.lineOf([k])}: ${k}: unknown metric${didYouMean(k, known)} (known: ${listed.join(', ')})`,
  );
  const known_only = Object.fromEntries(Object.entries(src.data).filter(([k]) => known.includes(k)));
  const parsed = GateFileSchema.safeParse(known_only);
  if (!parsed.success) problems.push(...zodProblems(src, parsed.error));
  // An interval bound is asked only of a figure that has an interval (a share or a mean, higher better).
  for (const [k, rule] of Object.entries(known_only)) {
    if (!RELEASE_GATE_METRICS[k] || !rule || typeof rule !== 'object' || !('min_lower_ci' in rule)) continue;
    if (!intervalMethod(registryMetric(k)))
      problems.push(
        `${file}:${src.lineOf([k, 'min_lower_ci'])}: ${k}.min_lower_ci: ${k} has no 95 % interval (a count, or lower is better): use max`,
      );
  }
  const line = (p: string) => Number(/^.*?:(\d+): /.exec(p.slice(file.length))?.[1] ?? 0);
  problems.sort((x, y) => line(x) - line(y));
  if (problems.length)
    throw new InputError(`invalid gate file: ${problems.length} problem${problems.length > 1 ? 's' : ''}`, problems);
  const data = parsed.data! as Record<string, unknown>;
  const metrics = Object.fromEntries(
    Object.entries(data).filter(([k, v]) => k !== 'max_regressions' && k !== 'judge_calibration' && v !== undefined),
  ) as Record<string, IntentRule>;
  if (!Object.keys(metrics).length && data.max_regressions === undefined)
    throw new InputError(`${file}: the gate file has no rules`);
  return {
    file,
    metrics,
    ...(typeof data.max_regressions === 'number' ? { max_regressions: data.max_regressions } : {}),
    ...(parsed.data!.judge_calibration ? { judge_calibration: parsed.data!.judge_calibration } : {}),
  };
}

/** One rule checked on one run. */
export interface GateCheck {
  run: string;
  /** `hit_at_5.max_drop`, `max_regressions`. */
  rule: string;
  /** The figure (for `min_lower_ci`: the interval's lower bound). */
  value: number | null;
  baseline?: number | null;
  limit: number;
  passed: boolean;
  /** `min_lower_ci`: the figure's 95 % interval and what it is over (src/scoring/figure-interval.ts). */
  interval?: { low: number; high: number; method: string; over: string };
  /** e.g. `weak1: hit_at_5.max_drop: drop 0.030 (0.925 → 0.895), limit 0.02`. */
  message: string;
}

export interface ReleaseGateResult {
  file: string;
  passed: boolean;
  checks: GateCheck[];
}

const EPS = 1e-9;
const show = (v: number | null | undefined) =>
  v === null || v === undefined ? '–' : Number.isInteger(v) ? String(v) : fmt(v);

/** What a relative rule says when the gate has no baseline (one run gated alone). */
export const NEEDS_BASELINE = 'needs a baseline to compare with (--baseline FILE)';

/** One run the gate checks: its row and results, and the baseline it is held against (null: none). */
export interface GateSubject {
  row: RunRow;
  /** Its results, for `min_lower_ci` (the per-case values an interval may need). */
  result?: RunResult | undefined;
  versus: { label: string; row: RunRow; regressed: readonly string[] } | null;
}

interface Outcome {
  ok: boolean;
  text: string;
}

/** Every rule of `rules` on one run. */
export function checkRun(rules: ReleaseGateRules, s: GateSubject): GateCheck[] {
  const checks: GateCheck[] = [];
  const label = s.row.label;
  const base = s.versus?.row;
  const at = { node: s.row.node, grain: s.row.post_hit_applies ? 'post' : 'topic' };
  for (const [metric, rule] of Object.entries(rules.metrics)) {
    const m = RELEASE_GATE_METRICS[metric]!;
    const value = m.read(s.row);
    const before = base ? m.read(base) : null;
    const push = (kind: keyof IntentRule, limit: number, r: Outcome, extra: Partial<GateCheck> = {}) =>
      checks.push({
        run: label,
        rule: `${metric}.${kind}`,
        value,
        limit,
        passed: r.ok,
        ...extra,
        message: `${label}: ${metric}.${kind}: ${r.text}, limit ${show(limit)}`,
      });
    // Why the rule cannot be judged on this run (or against its baseline), else null.
    const unjudged = (withBaseline: boolean): Outcome | null => {
      if (withBaseline && !s.versus) return { ok: false, text: NEEDS_BASELINE };
      const na = m.notApplicable?.(s.row) ?? (withBaseline && base ? m.notApplicable?.(base) : null) ?? null;
      if (na) return { ok: false, text: na };
      if (value === null) return { ok: false, text: `not measured in ${label}` };
      if (withBaseline && before === null) return { ok: false, text: `not measured in ${s.versus!.label}` };
      return null;
    };
    const absolute = (kind: 'min' | 'max', limit: number) =>
      push(
        kind,
        limit,
        unjudged(false) ?? {
          ok: kind === 'min' ? value! >= limit - EPS : value! <= limit + EPS,
          text: `value ${show(value)}`,
        },
      );
    const relative = (kind: 'max_drop' | 'max_increase', limit: number) => {
      const change = kind === 'max_drop' ? before! - value! : value! - before!;
      const word = kind === 'max_drop' ? 'drop' : 'increase';
      push(
        kind,
        limit,
        unjudged(true) ?? {
          ok: change <= limit + EPS,
          text: `${word} ${show(change)} (${show(before)} → ${show(value)})`,
        },
        s.versus ? { baseline: before } : {},
      );
    };
    if (rule.min !== undefined) absolute('min', rule.min);
    if (rule.max !== undefined) absolute('max', rule.max);
    if (rule.min_lower_ci !== undefined) {
      const limit = rule.min_lower_ci;
      const blocked = unjudged(false);
      const ci = blocked
        ? null
        : s.result
          ? figureInterval(metric, s.result, at)
          : { problem: "the run's case records were not read" };
      if (!ci || 'problem' in ci) {
        push('min_lower_ci', limit, blocked ?? { ok: false, text: ci!.problem });
      } else {
        push(
          'min_lower_ci',
          limit,
          {
            ok: ci.low >= limit - EPS,
            text: `lower 95 % bound ${show(ci.low)} (${ci.over}; value ${show(value)})`,
          },
          { value: ci.low, interval: ci },
        );
      }
    }
    if (rule.max_drop !== undefined) relative('max_drop', rule.max_drop);
    if (rule.max_increase !== undefined) relative('max_increase', rule.max_increase);
  }
  if (rules.max_regressions !== undefined) {
    const limit = rules.max_regressions;
    const regressed = s.versus?.regressed;
    const n = regressed?.length ?? null;
    checks.push({
      run: label,
      rule: 'max_regressions',
      value: n,
      limit,
      passed: n !== null && n <= limit,
      message: regressed
        ? `${label}: max_regressions: ${n} regressed question${n === 1 ? '' : 's'}${n ? ` (${regressed.slice(0, 10).join(', ')}${n! > 10 ? ', …' : ''})` : ''}, limit ${limit}`
        : `${label}: max_regressions: ${NEEDS_BASELINE}, limit ${limit}`,
    });
  }
  return checks;
}

/**
 * Checks every rule on every run compared against the baseline; `runs` (the compared results)
 * give `min_lower_ci` its per-case values.
 */
export function evaluateReleaseGate(
  rules: ReleaseGateRules,
  cmp: Comparison,
  runs: readonly LoadedRun[] = [],
): ReleaseGateResult {
  const base = cmp.rows.find((r) => r.baseline)!;
  const checks = cmp.versus.flatMap((v) =>
    checkRun(rules, {
      row: cmp.rows.find((r) => r.label === v.label)!,
      result: runs.find((r) => r.label === v.label)?.result,
      versus: { label: cmp.baseline, row: base, regressed: v.regressed },
    }),
  );
  return { file: rules.file, passed: checks.every((c) => c.passed), checks };
}

/** The gate on one run alone (`gate`, `run --gate` without --baseline): a relative rule fails, saying it needs a baseline. */
export function evaluateRunGate(rules: ReleaseGateRules, run: LoadedRun, node: string): ReleaseGateResult {
  const checks = checkRun(rules, { row: runRow(run, node, false), result: run.result, versus: null });
  return { file: rules.file, passed: checks.every((c) => c.passed), checks };
}

/** How each gated run pairs with the baseline by case id. */
export interface GatePairing {
  run: string;
  paired: number;
  /** Cases of the baseline. */
  baseline_cases: number;
  /** paired / baseline_cases (0 when the baseline has no case). */
  share: number;
  only_in_baseline: number;
  only_in_run: number;
  /** One line for the console and the digest. */
  line: string;
}

/** The pairing of every run with the baseline (what a gate verdict rests on). */
export function gatePairings(cmp: Comparison): GatePairing[] {
  const baseCases = cmp.rows.find((r) => r.baseline)!.cases;
  return cmp.versus.map((v) => {
    const share = baseCases ? v.matched / baseCases : 0;
    return {
      run: v.label,
      paired: v.matched,
      baseline_cases: baseCases,
      share,
      only_in_baseline: v.only_in_baseline.length,
      only_in_run: v.only_in_run.length,
      line: `${v.label} vs ${cmp.baseline}: ${v.matched} of ${baseCases} baseline cases paired by id (${(share * 100).toFixed(1)} %), ${v.only_in_baseline.length} only in ${cmp.baseline}, ${v.only_in_run.length} only in ${v.label}`,
    };
  });
}

/**
 * Why a gate over these pairings would mean nothing, or null when it may run: a run that shares
 * no case with the baseline is never gated; one that shares fewer than `minShare` of the
 * baseline's cases is gated only with `allowPartial`.
 */
export function gatePairingProblem(
  pairings: readonly GatePairing[],
  opts: { minShare: number; allowPartial: boolean },
): string | null {
  const none = pairings.filter((p) => p.paired === 0);
  if (none.length)
    return `${none.map((p) => p.run).join(', ')} share${none.length === 1 ? 's' : ''} no case id with the baseline: there is nothing to gate`;
  if (opts.allowPartial) return null;
  const partial = pairings.filter((p) => p.share + EPS < opts.minShare);
  if (!partial.length) return null;
  return `${partial.map((p) => `${p.run} pairs ${p.paired} of ${p.baseline_cases} baseline cases`).join('; ')}: below the required share ${(opts.minShare * 100).toFixed(1)} % (--min-overlap); pass --allow-partial to gate on the overlap only`;
}

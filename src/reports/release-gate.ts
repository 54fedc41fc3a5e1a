import { z } from 'zod';
import { InputError } from '../errors.js';
import { CalibrationRuleSchema, type CalibrationRule } from '../judge/calibration.js';
import { readYaml, zodProblems } from '../yaml-file.js';
import { figureValue, GATE_METRICS } from '../scoring/registry.js';
import type { Comparison, RunRow } from './compare.js';
import { rowFigure } from './compare-metrics.js';
import { fmt } from './format.js';

/**
 * The release gate: rules on a comparison's figures, read from a YAML file such as
 *   hit_at_5: {max_drop: 0.02}
 *   citation_validity: {min: 1.0}
 *   offtopic_hallucinations: {max: 0}
 *   max_regressions: 3
 * Every run but the baseline is checked; the CLI refuses a gate without two distinct files whose
 * case ids pair (gatePairingProblem). A figure a run does not measure (faithfulness without a judge) fails its rule
 * rather than passing silently.
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
        doc: m.gate?.doc ?? m.definition,
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
    max_drop: Limit.min(0).optional(),
    max_increase: Limit.min(0).optional(),
  })
  .strict()
  // Only for a rule that is otherwise valid: `{minimum: 1}` is reported as an unknown key alone.
  .refine((r) => Object.keys(r).length > 0, {
    message: 'a rule needs at least one of min, max, max_drop, max_increase',
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
  const problems = unknown.map((k) => `${file}:${src.lineOf([k])}: ${k}: unknown metric (known: ${listed.join(', ')})`);
  const known_only = Object.fromEntries(Object.entries(src.data).filter(([k]) => known.includes(k)));
  const parsed = GateFileSchema.safeParse(known_only);
  if (!parsed.success) problems.push(...zodProblems(src, parsed.error));
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
  value: number | null;
  baseline?: number | null;
  limit: number;
  passed: boolean;
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

/** Checks every rule on every run compared against the baseline. */
export function evaluateReleaseGate(rules: ReleaseGateRules, cmp: Comparison): ReleaseGateResult {
  const checks: GateCheck[] = [];
  const base = cmp.rows.find((r) => r.baseline)!;
  for (const v of cmp.versus) {
    const row = cmp.rows.find((r) => r.label === v.label)!;
    for (const [metric, rule] of Object.entries(rules.metrics)) {
      const m = RELEASE_GATE_METRICS[metric]!;
      const value = m.read(row);
      const before = m.read(base);
      const check = (
        kind: keyof IntentRule,
        limit: number,
        test: () => { ok: boolean; text: string },
        withBaseline = false,
      ) => {
        const name = `${metric}.${kind}`;
        const missing = value === null || (withBaseline && before === null);
        const na = m.notApplicable?.(row) ?? (withBaseline ? m.notApplicable?.(base) : null) ?? null;
        const r = na
          ? { ok: false, text: na }
          : missing
            ? { ok: false, text: `not measured in ${value === null ? v.label : cmp.baseline}` }
            : test();
        checks.push({
          run: v.label,
          rule: name,
          value,
          ...(withBaseline ? { baseline: before } : {}),
          limit,
          passed: r.ok,
          message: `${v.label}: ${name}: ${r.text}, limit ${show(limit)}`,
        });
      };
      if (rule.min !== undefined)
        check('min', rule.min, () => ({ ok: value! >= rule.min! - EPS, text: `value ${show(value)}` }));
      if (rule.max !== undefined)
        check('max', rule.max, () => ({ ok: value! <= rule.max! + EPS, text: `value ${show(value)}` }));
      if (rule.max_drop !== undefined) {
        check(
          'max_drop',
          rule.max_drop,
          () => ({
            ok: before! - value! <= rule.max_drop! + EPS,
            text: `drop ${show(before! - value!)} (${show(before)} → ${show(value)})`,
          }),
          true,
        );
      }
      if (rule.max_increase !== undefined) {
        check(
          'max_increase',
          rule.max_increase,
          () => ({
            ok: value! - before! <= rule.max_increase! + EPS,
            text: `increase ${show(value! - before!)} (${show(before)} → ${show(value)})`,
          }),
          true,
        );
      }
    }
    if (rules.max_regressions !== undefined) {
      const n = v.regressed.length;
      checks.push({
        run: v.label,
        rule: 'max_regressions',
        value: n,
        limit: rules.max_regressions,
        passed: n <= rules.max_regressions,
        message: `${v.label}: max_regressions: ${n} regressed question${n === 1 ? '' : 's'}${n ? ` (${v.regressed.slice(0, 10).join(', ')}${n > 10 ? ', …' : ''})` : ''}, limit ${rules.max_regressions}`,
      });
    }
  }
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

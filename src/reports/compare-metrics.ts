import { InputError } from '../errors.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import { findScore } from '../model/scores.js';
import { CASE_CHANGE_METRICS, isFigure, type Figure, type Metric } from '../scoring/registry.js';
import type { RunFigures } from '../scoring/run-row.js';

/**
 * What `compare`, the gate and the HTML report read from a results file: the run-level figures
 * (src/scoring/run-row.ts, from its summary blocks) and the per-case values (from its case records).
 */
export { runFigures, type RunFigures } from '../scoring/run-row.js';

/** The default node: the rerank node when the run has one, else the last node. */
export function defaultNode(result: RunResult): string | null {
  return result.nodes.find((n) => n.kind === 'rerank')?.name ?? result.nodes.at(-1)?.name ?? null;
}

/** The node to read: `flag` when given (it must exist in the run), else the default. */
export function pickNode(result: RunResult, flag: string | undefined, label: string): string {
  if (flag !== undefined) {
    if (!result.nodes.some((n) => n.name === flag)) {
      throw new InputError(
        `--node ${flag}: ${label} has no such node (its nodes: ${result.nodes.map((n) => n.name).join(', ') || 'none'})`,
      );
    }
    return flag;
  }
  const node = defaultNode(result);
  if (!node) throw new InputError(`${label}: the results file has no retrieval node`);
  return node;
}

/** A run row's figure of a metric key (null when the row has no such figure). */
export function rowFigure(row: RunFigures, key: string): Figure {
  const v: unknown = Object.entries(row).find(([k]) => k === key)?.[1];
  return isFigure(v) ? v : null;
}

/** How a per-case metric is compared. */
export type MetricKind = 'binary' | 'continuous' | 'category';

/** A per-case metric: how to read it from a record, and which direction is better. */
export interface CaseMetric {
  key: string;
  label: string;
  kind: MetricKind;
  /** null: a change is neither a regression nor an improvement (zone, stance). */
  better: 'higher' | 'lower' | null;
  /** Part of the statistics table (binary and continuous metrics that score quality). */
  stats: boolean;
  get(record: CaseRecord, node: string): number | string | null;
}

/** The stance: the judge's when present, else the deterministic pattern's. */
export function caseStance(r: CaseRecord): string | null {
  return (
    findScore(r.scores, 'judge_stance')?.details?.stance ??
    findScore(r.scores, 'stance_pattern')?.details?.stance ??
    null
  );
}

/** A registry metric compared question by question. */
function caseMetric(m: Metric): CaseMetric {
  if (!m.perCase) throw new Error(`internal: metric ${m.key} has no per-case value`);
  return {
    key: m.perCase.key,
    label: m.perCase.label,
    kind: m.perCase.kind,
    better: m.higherIsBetter ? 'higher' : 'lower',
    stats: true,
    get: m.perCase.read,
  };
}

/** The per-case metrics compared question by question, in display order. */
export const CASE_METRICS: readonly CaseMetric[] = [
  { key: 'status', label: 'status', kind: 'category', better: null, stats: false, get: (r) => r.status },
  ...CASE_CHANGE_METRICS.retrieval.map(caseMetric),
  { key: 'zone', label: 'zone', kind: 'category', better: null, stats: false, get: (r) => r.zone ?? null },
  { key: 'stance', label: 'stance', kind: 'category', better: null, stats: false, get: caseStance },
  ...CASE_CHANGE_METRICS.answer.map(caseMetric),
];

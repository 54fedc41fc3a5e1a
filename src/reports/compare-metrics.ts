import { InputError } from '../errors.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import { findScore } from '../model/scores.js';
import type { CountN, MeanN } from '../model/summary.js';
import { storedEvidenceNode } from '../summary/generation-summary.js';
import { postHitApplies } from '../scoring/definitions.js';
import {
  CASE_CHANGE_METRICS,
  countFigure,
  figureValue,
  isFigure,
  meanFigure,
  summaryFigure,
  type Figure,
  type Metric,
} from '../scoring/registry.js';
import { NUGGET_METRIC_KEYS } from '../scoring/nugget-metrics.js';
import { PPI_METRIC_KEYS } from '../scoring/ppi-metrics.js';

/**
 * What `compare`, the gate and the HTML report read from a results file: the run-level figures
 * (from its summary blocks) and the per-case values (from its case records). The judge block is
 * optional: runs made without a judge, and retrieval-only files, show `–` for its figures.
 * Every figure follows the definitions of src/scoring/definitions.ts (docs/metrics.md).
 */

/** The run-level figures of one results file, as the comparison table shows them. */
export interface RunFigures {
  /** Node the retrieval figures are read from. */
  node: string;
  cases: number;
  errors: number;
  hit_at_5: MeanN;
  /** Mean null with n = 0 on a topic-grain node: not applicable (shown n/a), never 0. */
  post_hit_at_5: MeanN;
  /** False when the node is topic-grain (src/scoring/definitions.ts postHitApplies). */
  post_hit_applies: boolean;
  mrr_at_10: MeanN;
  content_mrr_at_10: MeanN;
  /** Share of valid [[n]] markers (generation.citation_validity); null for retrieval-only files. */
  citation_validity: MeanN | null;
  faithfulness: MeanN | null;
  correct_abstention: MeanN | null;
  /** Which scorer gave correct_abstention: the judge's when present, else the pattern check. */
  correct_abstention_source: 'judge' | 'pattern' | null;
  offtopic_hallucinations: CountN | null;
  wrong_abstentions: CountN | null;
  /** Post hit@5 of the node that fed the model (summary.generation.evidence); null when not recorded. */
  evidence: { node: string; post_hit_at_5: MeanN } | null;
  judge_errors: number | null;
  /** Forbidden passages per case at the node; present only when some case names something forbidden. */
  forbidden_hits?: MeanN;
  /** Answered cases holding something forbidden; present only when some answered case names it. */
  forbidden?: CountN;
  /** Cases whose verdict passed, of those with a verdict; present only when the run has verdicts. */
  pass_rate?: MeanN;
  /** With human labels of the run's answers: the PPI figures by registry key (PPI_METRIC_KEYS), for the gate. */
  [ppi: `${string}_ppi` | `${string}_ppi_low`]: MeanN | undefined;
  /** When cases declare nuggets: nugget recall by registry key (NUGGET_METRIC_KEYS), for the gate. */
  [nuggets: `nugget_recall${string}`]: MeanN | undefined;
}

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

/** The run-level figures of a results file at `node`, read through the metric registry. */
export function runFigures(result: RunResult, node: string): RunFigures {
  const at = { node, grain: result.nodes.find((n) => n.name === node)?.grain ?? 'post' };
  const f = (key: string) => summaryFigure(key, result.summary, at);
  const mean = (key: string): MeanN => meanFigure(f(key)) ?? { mean: null, n: 0 };
  const abstention = meanFigure(f('correct_abstention'));
  const evidence = meanFigure(f('evidence_post_hit_at_5'));
  const evidenceNode = storedEvidenceNode(result.summary);
  const forbiddenHits = meanFigure(f('forbidden_hits'));
  const forbidden = countFigure(f('forbidden'));
  const passRate = meanFigure(f('pass_rate'));
  return {
    node,
    cases: result.cases.length,
    errors: result.cases.filter((c) => c.status === 'error').length,
    hit_at_5: mean('hit_at_5'),
    post_hit_at_5: mean('post_hit_at_5'),
    post_hit_applies: postHitApplies(at.grain),
    mrr_at_10: mean('mrr_at_10'),
    content_mrr_at_10: mean('content_mrr_at_10'),
    citation_validity: meanFigure(f('citation_validity')),
    faithfulness: meanFigure(f('faithfulness')),
    correct_abstention: abstention,
    correct_abstention_source: abstention ? (result.summary.judge ? 'judge' : 'pattern') : null,
    offtopic_hallucinations: countFigure(f('offtopic_hallucinations')),
    wrong_abstentions: countFigure(f('wrong_abstentions')),
    judge_errors: figureValue(f('judge_errors')),
    evidence: evidenceNode !== undefined && evidence ? { node: evidenceNode, post_hit_at_5: evidence } : null,
    ...(forbiddenHits && forbiddenHits.n > 0 ? { forbidden_hits: forbiddenHits } : {}),
    ...(forbidden ? { forbidden } : {}),
    ...(passRate ? { pass_rate: passRate } : {}),
    ...Object.fromEntries(
      [...PPI_METRIC_KEYS, ...NUGGET_METRIC_KEYS].flatMap((k) => (meanFigure(f(k)) ? [[k, meanFigure(f(k))]] : [])),
    ),
  };
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

/**
 * The run-level figures of one results file as compare, the release gate and the HTML cards read
 * them: which registry metrics (src/scoring/registry.ts) a run row holds, in the order a stored
 * comparison lists them, and how each is kept when a run does not measure it. The row's type is
 * derived from this list, so a metric added here is typed in every row, and no report names a
 * metric to read it. Also the metrics shown per case set.
 */
import type { RunResult } from '../model/results.js';
import type { MeanN } from '../model/summary.js';
import { postHitApplies } from './definitions.js';
import { NUGGET_METRIC_KEYS } from './nugget-metrics.js';
import { PPI_METRIC_KEYS } from './ppi-metrics.js';
import { countFigure, figureValue, meanFigure, metric, summaryFigure, type Figure, type NodeRef } from './registry.js';

/** How a row keeps a figure. */
const KEEP = {
  /** A mean; `{mean: null, n: 0}` (shown n/a) when not measured. */
  mean: (f: Figure) => meanFigure(f) ?? { mean: null, n: 0 },
  meanOrNull: (f: Figure) => meanFigure(f),
  countOrNull: (f: Figure) => countFigure(f),
  /** The figure as one number (a count without its n). */
  valueOrNull: (f: Figure) => figureValue(f),
  /** Present only when some case measured it (n > 0). */
  measuredMean: (f: Figure) => {
    const m = meanFigure(f);
    return m && m.n > 0 ? m : undefined;
  },
  /** Present only when the run has the figure. */
  presentMean: (f: Figure) => meanFigure(f) ?? undefined,
  presentCount: (f: Figure) => countFigure(f) ?? undefined,
  /** Not kept under its own key: only what the row carries beside it (see BESIDE). */
  beside: () => undefined,
} as const;
type Keep = keyof typeof KEEP;

/** The registry metrics of a run row, in stored order, with how each is kept. */
export const RUN_ROW_METRICS = {
  hit_at_5: 'mean',
  post_hit_at_5: 'mean',
  mrr_at_10: 'mean',
  content_mrr_at_10: 'mean',
  citation_validity: 'meanOrNull',
  faithfulness: 'meanOrNull',
  correct_abstention: 'meanOrNull',
  offtopic_hallucinations: 'countOrNull',
  wrong_abstentions: 'countOrNull',
  judge_errors: 'valueOrNull',
  evidence_post_hit_at_5: 'beside',
  forbidden_hits: 'measuredMean',
  forbidden: 'presentCount',
  pass_rate: 'presentMean',
} as const satisfies Record<string, Keep>;

type Row = typeof RUN_ROW_METRICS;
type Optional = 'measuredMean' | 'presentMean' | 'presentCount';
type Kept<K extends Keep> = Exclude<ReturnType<(typeof KEEP)[K]>, undefined>;

/** What a row carries beside a metric's figure, written right after it. */
export interface RowCompanions {
  /** False when the node is topic-grain (src/scoring/definitions.ts postHitApplies). */
  post_hit_applies: boolean;
  /** Which scorer gave correct_abstention: the judge's when present, else the pattern check. */
  correct_abstention_source: 'judge' | 'pattern' | null;
  /** Post hit@5 of the node that fed the model (summary.generation.evidence); null when not recorded. */
  evidence: { node: string; post_hit_at_5: MeanN } | null;
}

const BESIDE: Partial<Record<keyof Row, (r: RunResult, figure: Figure, at: NodeRef) => Partial<RowCompanions>>> = {
  post_hit_at_5: (_r, _f, at) => ({ post_hit_applies: postHitApplies(at.grain) }),
  correct_abstention: (r, f) => ({
    correct_abstention_source: meanFigure(f) ? (r.summary.judge ? 'judge' : 'pattern') : null,
  }),
  evidence_post_hit_at_5: (r, f) => {
    const node = r.summary.generation?.evidence?.node;
    const m = meanFigure(f);
    return { evidence: node !== undefined && m ? { node, post_hit_at_5: m } : null };
  },
};

/**
 * The run-level figures of one results file, as the comparison table shows them. The judge block
 * is optional: runs made without a judge, and retrieval-only files, have null for its figures.
 * Every figure follows the definitions of src/scoring/definitions.ts (docs/metrics.md).
 */
export type RunFigures = {
  /** Node the retrieval figures are read from. */
  node: string;
  cases: number;
  errors: number;
} & { [K in keyof Row as Row[K] extends Optional | 'beside' ? never : K]: Kept<Row[K]> } & {
  [K in keyof Row as Row[K] extends Optional ? K : never]?: Kept<Row[K]>;
} & RowCompanions & {
    /** With human labels of the run's answers: the PPI figures by registry key (PPI_METRIC_KEYS), for the gate. */
    [ppi: `${string}_ppi` | `${string}_ppi_low`]: MeanN | undefined;
    /** When cases declare nuggets: nugget recall by registry key (NUGGET_METRIC_KEYS), for the gate. */
    [nuggets: `nugget_recall${string}`]: MeanN | undefined;
  };

/** The run-level figures of a results file at `node`, read through the metric registry. */
export function runFigures(result: RunResult, node: string): RunFigures {
  const at = { node, grain: result.nodes.find((n) => n.name === node)?.grain ?? 'post' };
  const out: Record<string, unknown> = {
    node,
    cases: result.cases.length,
    errors: result.cases.filter((c) => c.status === 'error').length,
  };
  for (const [key, keep] of Object.entries(RUN_ROW_METRICS) as [keyof Row, Keep][]) {
    const figure = summaryFigure(key, result.summary, at);
    const kept = KEEP[keep](figure);
    if (kept !== undefined) out[key] = kept;
    Object.assign(out, BESIDE[key]?.(result, figure, at));
  }
  for (const k of [...PPI_METRIC_KEYS, ...NUGGET_METRIC_KEYS]) {
    const m = meanFigure(summaryFigure(k, result.summary, at));
    if (m) out[k] = m;
  }
  // Built key by key from RUN_ROW_METRICS and BESIDE, the lists the type is mapped from.
  return out as unknown as RunFigures;
}

/** The retrieval figures shown per case set (the breakdown's set tables, earlier turns). */
export const SET_TABLE_METRICS = ['hit_at_1', 'hit_at_5', 'mrr_at_10', 'content_mrr_at_10'].map(metric);
/** Of those, the ones shown only when some case of the sets measures them. */
export const SET_TABLE_WHEN_MEASURED = ['content_mrr_at_10'].map(metric);
/** Compare's figures per case set at the compared node (the console keeps to the first, to fit its width). */
export const COMPARE_SET_METRICS = ['hit_at_5', 'mrr_at_10'].map(metric);

/**
 * The metric registry: per metric its key, label, grain, kind, direction, how to read it from a
 * run summary and from a case record, its format, whether a release gate may name it, and its
 * one-line definition. The retrieval table, the HTML cards, compare (run table and per-question
 * changes), the release gate and the matrix table read their metrics from here. What a metric
 * means is its definition in src/scoring/definitions.ts (docs/metrics.md), which every
 * entry names: a metric cannot be listed here without one.
 *
 * Adding a metric is its scorer, its entry here (placed in the views that show it) and its
 * definition in src/scoring/definitions.ts, which docs/metrics.md then shows.
 * A retrieval metric is a field of RetrievalCaseMetricsSchema and its computation, both in
 * src/scoring/retrieval-metrics.ts; an answer metric is a scorer in src/scoring/scorers.ts whose
 * score carries a value (a plain score, src/model/scores.ts). Only a score that also writes
 * typed details adds a member to the model's score union.
 */
import type { CaseRecord } from '../model/results.js';
import { findScore, type ScoreName } from '../model/scores.js';
import type { CountN, MeanN, RunSummary } from '../model/summary.js';
import { metricDefinition, type MetricDefinition } from './definitions.js';
import { NUGGET_METRIC_KEYS, nuggetMetrics } from './nugget-metrics.js';
import { PPI_METRIC_KEYS, ppiMetrics } from './ppi-metrics.js';
import type { RetrievalMetricKey } from './retrieval-metrics.js';

/** Where a metric is measured: a node's ranked list per case, an answered case, or the whole run. */
export type MetricGrain = 'node' | 'answer' | 'run';

/** How a metric's values are compared: 0/1 per case, a share or mean, or a count of cases. */
export type MetricValueKind = 'binary' | 'continuous' | 'count';

/** How a figure is written: a decimal (`digits` places), a percentage, or `count/n`. */
export type MetricFormat = 'decimal' | 'percent' | 'count';

/** A run-level figure as summaries store it. */
export type Figure = MeanN | CountN | number | null;

/** What a node reading needs to know: the node and whether it is post-grain. */
export interface NodeRef {
  node: string;
  grain: string;
}

export interface Metric {
  /** Stable snake_case key: summary fields, gate files, compare rows. */
  key: string;
  /** Label in the run tables (compare, matrix); views may use their own below. */
  label: string;
  grain: MetricGrain;
  kind: MetricValueKind;
  /** Higher is better (true), lower is better (false). */
  higherIsBetter: boolean;
  format: MetricFormat;
  /** Decimal places for `decimal` (default 3). */
  digits?: number;
  /** Its definition as docs/metrics.md gives it (src/scoring/definitions.ts; several metrics may share one). */
  doc: MetricDefinition;
  /** For a node metric: the per-case retrieval metric it averages (src/scoring/retrieval-metrics.ts). */
  retrievalKey?: RetrievalMetricKey;
  /** The run-level figure from a results file's summary, at the compared node; null when the file does not measure it. */
  fromSummary?: (summary: RunSummary, at: NodeRef) => Figure;
  /** The per-case value compared question by question (key and label as compare shows them). */
  perCase?: {
    key: string;
    label: string;
    kind: 'binary' | 'continuous';
    read: (record: CaseRecord, node: string) => number | null;
  };
  /**
   * Labels of the views that name it otherwise: the HTML summary cards (`cardSub` follows n on the
   * card, or is what a count is out of) and the matrix table.
   */
  labels?: { card?: string; cardSub?: string; matrix?: string };
  /** A release gate may name it; `notApplicable` says why a figure does not apply to a run. */
  gate?: { doc: string; notApplicable?: (at: NodeRef) => string | null };
  /** The judge's figure when the run was judged, else the wording pattern's: the views say which. */
  patternFallback?: boolean;
  /** A figure of the judge alone: its HTML card shows only when the run was judged. */
  judgeOnly?: boolean;
  /** Read at the node that fed the model (the evidence node), not at the compared one. */
  atEvidenceNode?: boolean;
  /**
   * How its 95 % interval is had (a gate's `min_lower_ci`), when not by its kind (see
   * {@link intervalMethod}): `wilson` for a share of n units, `bootstrap` over its per-case values.
   */
  interval?: IntervalMethod;
}

/** How a figure's 95 % interval is computed (src/scoring/figure-interval.ts). */
export type IntervalMethod = 'wilson' | 'bootstrap';

const node =
  (key: RetrievalMetricKey) =>
  (s: RunSummary, at: NodeRef): MeanN =>
    s.retrieval.nodes[at.node]?.[key] ?? { mean: null, n: 0 };
const caseNode =
  (key: RetrievalMetricKey) =>
  (r: CaseRecord, at: string): number | null =>
    r.retrieval[at]?.metrics[key] ?? null;
const caseScore = (name: ScoreName) => (r: CaseRecord) => findScore(r.scores, name)?.value ?? null;
const plain = (m: MeanN | CountN): MeanN | CountN =>
  'mean' in m ? { mean: m.mean, n: m.n } : { count: m.count, n: m.n };

/** The judge's correct abstention when the run has a judge, else the pattern check's. */
function correctAbstentionFigure(s: RunSummary): MeanN | null {
  if (s.judge) return { mean: s.judge.correct_abstention.mean, n: s.judge.correct_abstention.n };
  return s.generation?.correct_abstention_pattern ?? null;
}

/**
 * Correct abstention of one case: the judge's score when the case was judged (null when its
 * verdict failed, as the run-level figure leaves it out), else the pattern one.
 */
export function caseCorrectAbstention(r: CaseRecord): number | null {
  const judged = r.scores.some(
    (s) => s.name === 'correct_abstention' || s.name === 'judge_error' || s.name === 'judge_stance',
  );
  return judged ? caseScore('correct_abstention')(r) : caseScore('correct_abstention_pattern')(r);
}

const retrieval = (
  key: RetrievalMetricKey,
  label: string,
  kind: MetricValueKind,
  doc: string,
  extra: Partial<Metric> = {},
): Metric => ({
  key,
  label,
  grain: 'node',
  kind,
  higherIsBetter: true,
  format: 'decimal',
  doc: metricDefinition(doc),
  retrievalKey: key,
  fromSummary: node(key),
  ...extra,
});

/** Every metric, in one list. */
const ALL: readonly Metric[] = [
  retrieval('hit_at_1', 'Hit@1', 'binary', 'hit_at_k'),
  retrieval('hit_at_3', 'Hit@3', 'binary', 'hit_at_k'),
  retrieval('hit_at_5', 'Hit@5', 'binary', 'hit_at_k', {
    perCase: { key: 'hit_at_5', label: 'hit@5', kind: 'binary', read: caseNode('hit_at_5') },
    labels: { card: 'Hit@5 (topic)', matrix: 'Hit@5 topic' },
    gate: { doc: 'topic Hit@5 at the compared node' },
  }),
  retrieval('hit_at_10', 'Hit@10', 'binary', 'hit_at_k'),
  retrieval('post_hit_at_5', 'PostHit@5', 'binary', 'post_hit_at_5', {
    perCase: { key: 'post_hit_at_5', label: 'post hit@5', kind: 'binary', read: caseNode('post_hit_at_5') },
    labels: { matrix: 'post hit@5' },
    gate: {
      doc: 'post Hit@5 at the compared node (not applicable on a topic-grain node)',
      notApplicable: (at) =>
        at.grain === 'post'
          ? null
          : `not applicable: node ${at.node} is topic-grain (pick a post-grain node with --node)`,
    },
  }),
  retrieval('mrr_at_10', 'MRR@10', 'continuous', 'mrr_at_10', {
    perCase: { key: 'mrr_at_10', label: 'mrr@10', kind: 'continuous', read: caseNode('mrr_at_10') },
    labels: { card: 'MRR@10', matrix: 'MRR@10' },
    gate: { doc: 'MRR@10 at the compared node' },
  }),
  retrieval('content_recall_at_5', 'CRecall@5', 'binary', 'content_recall_at_5'),
  retrieval('content_mrr_at_10', 'CMRR@10', 'continuous', 'content_mrr_at_10', {
    perCase: {
      key: 'content_mrr_at_10',
      label: 'content mrr@10',
      kind: 'continuous',
      read: caseNode('content_mrr_at_10'),
    },
    labels: { card: 'Content MRR@10', matrix: 'content MRR@10' },
    gate: { doc: 'content MRR@10 at the compared node' },
  }),
  retrieval('pollution_topics_at_5', 'Topics@5', 'count', 'pollution_at_5', {
    higherIsBetter: false,
    digits: 2,
  }),
  retrieval('pollution_dominant_share_at_5', 'Dominant@5', 'continuous', 'pollution_at_5', { higherIsBetter: false }),
  retrieval('forbidden_hits', 'Forbidden', 'count', 'forbidden_hits', {
    higherIsBetter: false,
    digits: 2,
    perCase: { key: 'forbidden_hits', label: 'forbidden hits', kind: 'continuous', read: caseNode('forbidden_hits') },
    gate: { doc: 'forbidden passages per case at the compared node, mean (cases that name one)' },
  }),
  retrieval('index_recall', 'IdxRecall', 'continuous', 'index_recall', { digits: 3 }),
  retrieval('index_golden_lost', 'IdxLost', 'binary', 'index_golden_lost', {
    higherIsBetter: false,
    perCase: {
      key: 'index_golden_lost',
      label: 'golden lost by the index',
      kind: 'binary',
      read: caseNode('index_golden_lost'),
    },
  }),
  {
    key: 'evidence_post_hit_at_5',
    label: 'PostHit@5 (evidence node)',
    grain: 'node',
    kind: 'binary',
    higherIsBetter: true,
    format: 'decimal',
    doc: metricDefinition('evidence_post_hit_at_5'),
    fromSummary: (s) => s.generation?.evidence?.post_hit_at_5 ?? null,
    labels: { card: 'PostHit@5 (evidence node)' },
    atEvidenceNode: true,
  },
  {
    key: 'citation_validity',
    label: 'real links',
    grain: 'answer',
    kind: 'continuous',
    higherIsBetter: true,
    format: 'percent',
    doc: metricDefinition('citation_validity'),
    fromSummary: (s) => (s.generation ? plain(s.generation.citation_validity) : null),
    perCase: {
      key: 'citation_validity',
      label: 'citation validity',
      kind: 'continuous',
      read: caseScore('citation_validity'),
    },
    labels: { card: 'Real links', cardSub: 'valid [[n]] markers, ' },
    gate: { doc: 'share of valid [[n]] markers (real links)' },
    // A share of the markers (n = markers), not a mean of per-case shares.
    interval: 'wilson',
  },
  {
    key: 'faithfulness',
    label: 'faithfulness',
    grain: 'answer',
    kind: 'continuous',
    higherIsBetter: true,
    format: 'decimal',
    doc: metricDefinition('faithfulness'),
    fromSummary: (s) => (s.judge ? plain(s.judge.faithfulness) : null),
    perCase: { key: 'faithfulness', label: 'faithfulness', kind: 'continuous', read: caseScore('faithfulness') },
    labels: { card: 'Faithfulness', cardSub: 'judge, ' },
    gate: { doc: 'judge faithfulness, mean' },
    judgeOnly: true,
  },
  {
    key: 'correct_abstention',
    label: 'correct abst.',
    grain: 'answer',
    kind: 'binary',
    higherIsBetter: true,
    format: 'percent',
    doc: metricDefinition('correct_abstention'),
    fromSummary: correctAbstentionFigure,
    perCase: { key: 'correct_abstention', label: 'correct abstention', kind: 'binary', read: caseCorrectAbstention },
    labels: { card: 'Correct abstention' },
    gate: { doc: 'correct abstention rate (judge, else pattern)' },
    patternFallback: true,
  },
  {
    key: 'offtopic_hallucinations',
    label: 'off-topic halluc.',
    grain: 'answer',
    kind: 'count',
    higherIsBetter: false,
    format: 'count',
    doc: metricDefinition('offtopic_hallucination'),
    fromSummary: (s) => (s.generation ? plain(s.generation.offtopic_hallucinations) : null),
    perCase: {
      key: 'offtopic_hallucination',
      label: 'off-topic hallucination',
      kind: 'binary',
      read: caseScore('offtopic_hallucination'),
    },
    labels: { card: 'Off-topic hallucinations', cardSub: 'off-topic answers' },
    gate: { doc: 'off-topic answers that assert and cite (count)' },
  },
  {
    key: 'forbidden',
    label: 'forbidden',
    grain: 'answer',
    kind: 'count',
    higherIsBetter: false,
    format: 'count',
    doc: metricDefinition('forbidden'),
    fromSummary: (s) => (s.generation?.forbidden ? plain(s.generation.forbidden) : null),
    perCase: { key: 'forbidden', label: 'forbidden', kind: 'binary', read: caseScore('forbidden') },
    gate: { doc: 'answered cases whose evidence or answer holds something forbidden (count)' },
  },
  {
    key: 'wrong_abstentions',
    label: 'wrong abstentions',
    grain: 'answer',
    kind: 'count',
    higherIsBetter: false,
    format: 'count',
    doc: metricDefinition('wrong_abstentions'),
    fromSummary: (s) =>
      s.judge ? plain(s.judge.wrong_abstentions) : s.generation ? plain(s.generation.wrong_abstentions) : null,
    gate: { doc: 'in-domain abstentions (count)' },
  },
  {
    key: 'pass_rate',
    label: 'pass rate',
    grain: 'run',
    kind: 'binary',
    higherIsBetter: true,
    format: 'percent',
    doc: metricDefinition('pass_rate'),
    fromSummary: (s) => (s.verdicts ? { mean: s.verdicts.pass_rate, n: s.verdicts.passed + s.verdicts.failed } : null),
    gate: { doc: 'cases whose verdict passed, of those with a verdict (docs/verdicts.md)' },
  },
  {
    key: 'judge_errors',
    label: 'judge errors',
    grain: 'run',
    kind: 'count',
    higherIsBetter: false,
    format: 'count',
    doc: metricDefinition('judge_errors'),
    fromSummary: (s) => s.judge?.judge_errors ?? null,
    gate: { doc: 'judge errors (count)' },
  },
  {
    key: 'errors',
    label: 'errors',
    grain: 'run',
    kind: 'count',
    higherIsBetter: false,
    format: 'count',
    doc: metricDefinition('errors'),
    fromSummary: (s) => s.retrieval.errors,
    gate: { doc: 'cases that ended in error (count)' },
  },
  ...ppiMetrics(),
  ...nuggetMetrics(),
];

/** Every metric, by key. */
export const METRICS: Readonly<Record<string, Metric>> = Object.fromEntries(ALL.map((m) => [m.key, m]));

/** The metric of `key` (a key not in the registry is a programming error). */
export function metric(key: string): Metric {
  const m = METRICS[key];
  if (!m) throw new Error(`internal: no metric ${key} in the registry`);
  return m;
}

/** The per-case retrieval metrics a run summary averages per node, in the order the summary stores them. */
export const SUMMARY_RETRIEVAL_KEYS: readonly RetrievalMetricKey[] = ALL.flatMap((m) =>
  m.retrievalKey ? [m.retrievalKey] : [],
);

/** The metrics of `keys`, in that order. */
const view = (keys: readonly string[]): readonly Metric[] => keys.map(metric);

/** The per-node retrieval table's columns. */
export const RETRIEVAL_TABLE_METRICS = view([
  'hit_at_1',
  'hit_at_3',
  'hit_at_5',
  'hit_at_10',
  'post_hit_at_5',
  'mrr_at_10',
  'content_recall_at_5',
  'content_mrr_at_10',
  'pollution_topics_at_5',
]);

/** The metrics a release gate may name, in the order they are listed. */
export const GATE_METRICS = view([
  'hit_at_5',
  'post_hit_at_5',
  'mrr_at_10',
  'content_mrr_at_10',
  'citation_validity',
  'faithfulness',
  'correct_abstention',
  'offtopic_hallucinations',
  'wrong_abstentions',
  'judge_errors',
  'errors',
  'forbidden_hits',
  'forbidden',
  'pass_rate',
  ...PPI_METRIC_KEYS,
  ...NUGGET_METRIC_KEYS,
]);

/** The per-question metrics compare pairs across runs, in display order (between its category columns). */
export const CASE_CHANGE_METRICS = {
  retrieval: view(['hit_at_5', 'post_hit_at_5', 'mrr_at_10', 'content_mrr_at_10']),
  answer: view(['correct_abstention', 'faithfulness', 'citation_validity', 'offtopic_hallucinations']),
};

/** The metric columns of compare's run table. */
export const RUN_TABLE_METRICS = view([
  'hit_at_5',
  'post_hit_at_5',
  'mrr_at_10',
  'content_mrr_at_10',
  'citation_validity',
  'faithfulness',
  'correct_abstention',
  'offtopic_hallucinations',
  'judge_errors',
]);

/**
 * Columns the per-node retrieval table adds only when some node of the summary measured them
 * (index recall runs only with --index-recall: a table without it keeps its columns).
 */
export const RETRIEVAL_TABLE_WHEN_MEASURED = view(['index_recall', 'index_golden_lost']);

/** The retrieval table's columns for one summary: the fixed ones, then those measured in it. */
export function retrievalTableMetrics(nodes: RunSummary['retrieval']['nodes']): readonly Metric[] {
  const measured = RETRIEVAL_TABLE_WHEN_MEASURED.filter((m) =>
    Object.values(nodes).some((figures) => (figures[m.key]?.n ?? 0) > 0),
  );
  return [...RETRIEVAL_TABLE_METRICS, ...measured];
}

/** The summary cards of the HTML report, in order (a missing figure says "not measured"; faithfulness shows only when judged). */
export const CARD_METRICS = view([
  'hit_at_5',
  'mrr_at_10',
  'evidence_post_hit_at_5',
  'content_mrr_at_10',
  'citation_validity',
  'correct_abstention',
  'offtopic_hallucinations',
  'faithfulness',
]);

/** The retrieval columns of the matrix table (its generation columns are the pattern figures of a full run). */
export const MATRIX_RETRIEVAL_METRICS = view(['hit_at_5', 'post_hit_at_5', 'mrr_at_10', 'content_mrr_at_10']);

/** The run-level figures of a results file at `at`, keyed by metric (what compare rows and the gate read). */
export function summaryFigure(key: string, summary: RunSummary, at: NodeRef): Figure {
  return metric(key).fromSummary?.(summary, at) ?? null;
}

/** The figure as a mean with n, when it is one. */
export function meanFigure(f: Figure | undefined): MeanN | null {
  return f !== null && f !== undefined && typeof f === 'object' && 'mean' in f ? f : null;
}

/** The figure as a count out of n, when it is one. */
export function countFigure(f: Figure | undefined): CountN | null {
  return f !== null && f !== undefined && typeof f === 'object' && 'count' in f ? f : null;
}

/** Whether a value read from a row of figures is a figure. */
export function isFigure(v: unknown): v is Figure {
  if (v === null || typeof v === 'number') return true;
  if (typeof v !== 'object' || Object.keys(v).length !== 2) return false;
  return 'n' in v && ('mean' in v || 'count' in v);
}

/** A figure as one number for a gate rule: a mean, a count, or the number itself. */
export function figureValue(f: Figure | undefined): number | null {
  if (f === null || f === undefined) return null;
  if (typeof f === 'number') return f;
  return 'mean' in f ? f.mean : f.count;
}

/**
 * How a metric's 95 % interval is computed, or null when it has none (a count, a figure lower is
 * better, or a mean with no per-case value to resample): its own `interval`, else Wilson for a
 * binary figure (a share of cases), else the bootstrap over the per-case values of a continuous one.
 */
export function intervalMethod(m: Metric): IntervalMethod | null {
  if (!m.higherIsBetter || m.kind === 'count') return null;
  if (m.interval) return m.interval;
  if (m.kind === 'binary') return 'wilson';
  return m.perCase ? 'bootstrap' : null;
}

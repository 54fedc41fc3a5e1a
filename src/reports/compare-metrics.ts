import { InputError } from '../errors.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import { findScore, type ScoreName } from '../model/scores.js';
import type { CountN, MeanN, RetrievalMetricKey } from '../model/summary.js';
import { postHitApplies } from '../scoring/definitions.js';

/**
 * What `compare`, the gate and the HTML report read from a results file: the run-level figures
 * (from its summary blocks) and the per-case values (from its case records). The judge block is
 * optional: runs made without a judge, and retrieval-only files, show `–` for its figures.
 * Every figure follows the definitions of src/scoring/definitions.ts (the README's "Metrics").
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

/** The run-level figures of a results file at `node`. */
export function runFigures(result: RunResult, node: string): RunFigures {
  const at = result.summary.retrieval.nodes[node] ?? {};
  const r = (key: string): MeanN => at[key] ?? { mean: null, n: 0 };
  const gen = result.summary.generation ?? null;
  const judge = result.summary.judge ?? null;
  const plain = (m: MeanN) => ({ mean: m.mean, n: m.n });
  const judgeAbstention = judge ? plain(judge.correct_abstention) : null;
  const patternAbstention = gen ? gen.correct_abstention_pattern : null;
  const abstention = judgeAbstention ?? patternAbstention;
  return {
    node,
    cases: result.cases.length,
    errors: result.cases.filter((c) => c.status === 'error').length,
    hit_at_5: r('hit_at_5'),
    post_hit_at_5: r('post_hit_at_5'),
    post_hit_applies: postHitApplies(result.nodes.find((n) => n.name === node)?.grain ?? 'post'),
    mrr_at_10: r('mrr_at_10'),
    content_mrr_at_10: r('content_mrr_at_10'),
    citation_validity: gen ? gen.citation_validity : null,
    faithfulness: judge ? plain(judge.faithfulness) : null,
    correct_abstention: abstention,
    correct_abstention_source: judgeAbstention ? 'judge' : patternAbstention ? 'pattern' : null,
    offtopic_hallucinations: gen ? gen.offtopic_hallucinations : null,
    wrong_abstentions: judge
      ? { count: judge.wrong_abstentions.count, n: judge.wrong_abstentions.n }
      : (gen?.wrong_abstentions ?? null),
    judge_errors: judge ? judge.judge_errors : null,
    evidence: gen?.evidence ?? null,
  };
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

const value = (r: CaseRecord, name: ScoreName): number | null => findScore(r.scores, name)?.value ?? null;
const retrieval =
  (key: RetrievalMetricKey) =>
  (r: CaseRecord, node: string): number | null =>
    r.retrieval[node]?.metrics[key] ?? null;

/** The stance: the judge's when present, else the deterministic pattern's. */
export function caseStance(r: CaseRecord): string | null {
  return (
    findScore(r.scores, 'judge_stance')?.details?.stance ??
    findScore(r.scores, 'stance_pattern')?.details?.stance ??
    null
  );
}

/**
 * Correct abstention: the judge's score when the case was judged (null when its verdict failed,
 * as the run-level figure leaves it out), else the pattern one.
 */
export function caseCorrectAbstention(r: CaseRecord): number | null {
  const judged = r.scores.some(
    (s) => s.name === 'correct_abstention' || s.name === 'judge_error' || s.name === 'judge_stance',
  );
  return judged ? value(r, 'correct_abstention') : value(r, 'correct_abstention_pattern');
}

/** The per-case metrics compared question by question, in display order. */
export const CASE_METRICS: readonly CaseMetric[] = [
  { key: 'status', label: 'status', kind: 'category', better: null, stats: false, get: (r) => r.status },
  { key: 'hit_at_5', label: 'hit@5', kind: 'binary', better: 'higher', stats: true, get: retrieval('hit_at_5') },
  {
    key: 'post_hit_at_5',
    label: 'post hit@5',
    kind: 'binary',
    better: 'higher',
    stats: true,
    get: retrieval('post_hit_at_5'),
  },
  { key: 'mrr_at_10', label: 'mrr@10', kind: 'continuous', better: 'higher', stats: true, get: retrieval('mrr_at_10') },
  {
    key: 'content_mrr_at_10',
    label: 'content mrr@10',
    kind: 'continuous',
    better: 'higher',
    stats: true,
    get: retrieval('content_mrr_at_10'),
  },
  { key: 'zone', label: 'zone', kind: 'category', better: null, stats: false, get: (r) => r.zone ?? null },
  { key: 'stance', label: 'stance', kind: 'category', better: null, stats: false, get: caseStance },
  {
    key: 'correct_abstention',
    label: 'correct abstention',
    kind: 'binary',
    better: 'higher',
    stats: true,
    get: caseCorrectAbstention,
  },
  {
    key: 'faithfulness',
    label: 'faithfulness',
    kind: 'continuous',
    better: 'higher',
    stats: true,
    get: (r) => value(r, 'faithfulness'),
  },
  {
    key: 'citation_validity',
    label: 'citation validity',
    kind: 'continuous',
    better: 'higher',
    stats: true,
    get: (r) => value(r, 'citation_validity'),
  },
  {
    key: 'offtopic_hallucination',
    label: 'off-topic hallucination',
    kind: 'binary',
    better: 'lower',
    stats: true,
    get: (r) => value(r, 'offtopic_hallucination'),
  },
];

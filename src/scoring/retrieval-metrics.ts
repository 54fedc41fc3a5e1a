import type { Case } from '../cases/schema.js';
import type { RetrievedItem } from '../model/retrieved-item.js';
import { carriesTerm, readerText, termAlternatives } from '../text.js';
import { z } from 'zod';
import { KEPT_ITEMS } from '../model/results.js';
import type { MeanN } from '../model/summary.js';
import { postHitApplies } from './definitions.js';
import { forbiddenHits, type ForbiddenSpec } from './forbidden.js';
import { SUMMARY_RETRIEVAL_KEYS } from './registry.js';

const num = z.number().nullable();

/** Per-case retrieval metrics of one node; null = not applicable to this case (src/scoring/definitions.ts). */
export const RetrievalCaseMetricsSchema = z
  .object({
    hit_at_1: num,
    hit_at_3: num,
    hit_at_5: num,
    hit_at_10: num,
    post_hit_at_5: num,
    mrr_at_10: num,
    content_recall_at_5: num,
    content_mrr_at_10: num,
    /** Distinct topics among the first 5 results. */
    pollution_topics_at_5: num,
    /** Share of the first 5 results held by the most frequent topic. */
    pollution_dominant_share_at_5: num,
    /** 1-based rank of the first result with an expected topic (no cutoff), null if none. */
    first_topic_rank: num,
    /**
     * Passages among the node's first KEPT_ITEMS (those its record keeps) that carry a forbidden
     * post, topic or term; present only on a case that names something forbidden
     * (src/scoring/forbidden.ts).
     */
    forbidden_hits: num.optional(),
    /**
     * Index recall (semantic channels under `retrieval.index_recall`): share of the exact search's
     * list that the ANN search also returned, both at the channel's k; null when exact found nothing.
     */
    index_recall: num.optional(),
    /** 1 when a golden topic (or, post grain, golden post) of the exact list is missing from the ANN list; null without goldens. */
    index_golden_lost: num.optional(),
  })
  .strict();
export type RetrievalCaseMetrics = z.infer<typeof RetrievalCaseMetricsSchema>;
export type RetrievalMetricKey = keyof RetrievalCaseMetrics;

/** Cutoffs reported for topic hits. */
export const HIT_KS = [1, 3, 5, 10] as const;

/** 1/rank of the first of the first `k` items satisfying `pred`, else 0. */
export function reciprocalRank<T>(items: readonly T[], k: number, pred: (t: T) => boolean): number {
  const n = Math.min(k, items.length);
  for (let i = 0; i < n; i++) if (pred(items[i]!)) return 1 / (i + 1);
  return 0;
}

/** 1 if any of the first `k` items satisfies `pred`. */
export function hitAt<T>(items: readonly T[], k: number, pred: (t: T) => boolean): number {
  return items.slice(0, k).some(pred) ? 1 : 0;
}

/**
 * Does this passage carry the term (any of its `a|b` alternatives)? `passage` is reader text
 * ({@link readerText}): markup stripped, whitespace collapsed, case and accents folded; a term
 * matches on word boundaries. The one rule for content recall, content MRR and the corpus check.
 */
export function passageCarries(passage: string, term: string): boolean {
  return termAlternatives(term).some((alt) => carriesTerm(passage, alt));
}

/** Distinct passages whose reader text is kept (about 2 KB each, raw and reader text). */
const PASSAGE_MEMO = 2048;
const passageTexts = new Map<string, string>();

/**
 * {@link readerText} of a retrieved passage, kept for the last {@link PASSAGE_MEMO} distinct ones:
 * the same posts come back in several nodes' lists of a case (content recall@5 reads the first five
 * of the ten content MRR@10 reads) and across a forum's questions.
 */
function passageText(text: string): string {
  let reader = passageTexts.get(text);
  if (reader === undefined) {
    if (passageTexts.size >= PASSAGE_MEMO) passageTexts.clear();
    reader = readerText(text);
    passageTexts.set(text, reader);
  }
  return reader;
}

/**
 * content_recall@k: 1 if every term occurs in the passage text of some result in the first k.
 * Passage text is the post's own text (not its title or category).
 */
export function contentRecallAt(items: readonly RetrievedItem[], terms: readonly string[], k: number): number {
  const texts = items.slice(0, k).map((i) => passageText(i.text));
  return terms.every((t) => texts.some((x) => passageCarries(x, t))) ? 1 : 0;
}

/**
 * content_mrr@k: the mean over the case's terms of 1/rank of the earliest result in the first k
 * whose passage carries the term (0 if none); 1.0 only if every term rides the rank-1 passage.
 */
export function contentReciprocalRankAt(items: readonly RetrievedItem[], terms: readonly string[], k = 10): number {
  const texts = items.slice(0, k).map((i) => passageText(i.text));
  let sum = 0;
  for (const term of terms) sum += reciprocalRank(texts, k, (x) => passageCarries(x, term));
  return terms.length ? sum / terms.length : 0;
}

/** All retrieval metrics of one node's ranked list for one case. */
export function caseRetrievalMetrics(
  c: Pick<Case, 'expected_topic_ids' | 'expected_post_ids' | 'expected_content'> & ForbiddenSpec,
  items: readonly RetrievedItem[],
  grain: 'post' | 'topic',
): RetrievalCaseMetrics {
  // Counted over the items the record keeps, so the figure can be rechecked from the file and
  // does not grow with top_k alone (forbidden_hits in src/scoring/definitions.ts).
  const forbidden = forbiddenHits(c, items.slice(0, KEPT_ITEMS));
  const topics = new Set(c.expected_topic_ids);
  const posts = new Set(c.expected_post_ids);
  const hasTopics = topics.size > 0;
  const isGolden = (i: RetrievedItem) => topics.has(i.topic_id);
  const top5 = items.slice(0, 5);
  const counts = new Map<number, number>();
  for (const i of top5) counts.set(i.topic_id, (counts.get(i.topic_id) ?? 0) + 1);
  // Over the kept items too: a rank the file cannot show is not stated (first_topic_rank, definitions.ts).
  const firstIdx = items.slice(0, KEPT_ITEMS).findIndex(isGolden);
  const hit = (k: number) => (hasTopics ? hitAt(items, k, isGolden) : null);
  return {
    hit_at_1: hit(1),
    hit_at_3: hit(3),
    hit_at_5: hit(5),
    hit_at_10: hit(10),
    post_hit_at_5: posts.size > 0 && postHitApplies(grain) ? hitAt(items, 5, (i) => posts.has(i.post_id)) : null,
    mrr_at_10: hasTopics ? reciprocalRank(items, 10, isGolden) : null,
    content_recall_at_5: c.expected_content.length ? contentRecallAt(items, c.expected_content, 5) : null,
    content_mrr_at_10: c.expected_content.length ? contentReciprocalRankAt(items, c.expected_content, 10) : null,
    pollution_topics_at_5: top5.length ? counts.size : null,
    pollution_dominant_share_at_5: top5.length ? Math.max(...counts.values()) / top5.length : null,
    first_topic_rank: hasTopics && firstIdx >= 0 ? firstIdx + 1 : null,
    ...(forbidden === null ? {} : { forbidden_hits: forbidden }),
  };
}

/**
 * Index recall of one node for one case: recall@k of the ANN list against the exact one (k: the
 * channel's list size, which both lists are cut at), and whether a golden was lost by the index
 * alone: in the exact list, not in the ANN list. Items are compared by post id on post-grain
 * nodes and topic id on topic-grain ones.
 */
export function indexRecallMetrics(
  c: Pick<Case, 'expected_topic_ids' | 'expected_post_ids'>,
  lists: { ann: readonly RetrievedItem[]; exact: readonly RetrievedItem[] },
  grain: 'post' | 'topic',
): Pick<RetrievalCaseMetrics, 'index_recall' | 'index_golden_lost'> {
  const idOf = (i: RetrievedItem) => (grain === 'post' ? i.post_id : i.topic_id);
  const ann = new Set(lists.ann.map(idOf));
  const recall = lists.exact.length ? lists.exact.filter((i) => ann.has(idOf(i))).length / lists.exact.length : null;
  const topics = new Set(c.expected_topic_ids);
  const posts = new Set(grain === 'post' ? c.expected_post_ids : []);
  if (!topics.size && !posts.size) return { index_recall: recall, index_golden_lost: null };
  const annTopics = new Set(lists.ann.map((i) => i.topic_id));
  const annPosts = new Set(lists.ann.map((i) => i.post_id));
  const lost = lists.exact.some(
    (i) => (topics.has(i.topic_id) && !annTopics.has(i.topic_id)) || (posts.has(i.post_id) && !annPosts.has(i.post_id)),
  );
  return { index_recall: recall, index_golden_lost: lost ? 1 : 0 };
}

/** Plain mean over the values that apply (non-null), with their count. */
export function meanN(values: readonly (number | null | undefined)[]): MeanN {
  let sum = 0;
  let n = 0;
  for (const v of values) {
    if (v === null || v === undefined || Number.isNaN(v)) continue;
    sum += v;
    n++;
  }
  return { mean: n ? sum / n : null, n };
}

/** The metrics averaged in summaries: the registry's node metrics (first_topic_rank is per-case detail only). */
export const SUMMARY_METRICS: readonly RetrievalMetricKey[] = SUMMARY_RETRIEVAL_KEYS;

/** Metrics measured only on some cases: a summary names them only where some case has them. */
const WHEN_MEASURED: ReadonlySet<RetrievalMetricKey> = new Set(['forbidden_hits', 'index_recall', 'index_golden_lost']);

/** Aggregates per-case metrics into means with n. */
export function aggregateRetrieval(perCase: readonly Partial<RetrievalCaseMetrics>[]): Record<string, MeanN> {
  const out: Record<string, MeanN> = {};
  for (const key of SUMMARY_METRICS) {
    const figure = meanN(perCase.map((m) => m[key]));
    if (figure.n > 0 || !WHEN_MEASURED.has(key)) out[key] = figure;
  }
  return out;
}

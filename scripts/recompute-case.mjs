/**
 * Per-case figures of scripts/recompute.mjs, recomputed from a stored case record and the forum's
 * posts alone, following src/scoring/definitions.ts and /work/shared/DESIGN.md §4 (not ragaudit's
 * code): retrieval metrics per node, citations, golden citations, CTA, abstention, forbidden
 * content, the judge's per-case shares, and the zone. Imports nothing from src/ or dist/.
 */
import { carries, citationIds, ctaPresent, distinctTerms, passageText, termAlternatives } from './recompute-text.mjs';

const KS = [1, 3, 5, 10];

/** What a case names as forbidden, or null when it names nothing. */
export function forbiddenOf(rec) {
  const posts = rec.forbidden_post_ids ?? [];
  const topics = rec.forbidden_topic_ids ?? [];
  const terms = rec.must_not_contain ?? [];
  if (
    rec.forbidden_post_ids === undefined &&
    rec.forbidden_topic_ids === undefined &&
    rec.must_not_contain === undefined
  )
    return null;
  return { posts: new Set(posts), topics: new Set(topics), terms: terms.map(termAlternatives) };
}

const holdsTerm = (text, forbidden) => forbidden.terms.some((alts) => carries(passageText(text), alts));

/**
 * One node's metrics for one case. `passage(post_id)` gives the normalised passage text, or
 * undefined when the forum is not at hand (the content and term figures are then left out).
 */
export function nodeMetrics(rec, items, grain, passage, withText) {
  const m = {};
  const topics = new Set(rec.expected_topic_ids);
  const posts = new Set(rec.expected_post_ids);
  const inTopics = (i) => topics.has(i.topic_id);
  for (const k of KS) m[`hit_at_${k}`] = topics.size ? (items.slice(0, k).some(inTopics) ? 1 : 0) : null;
  // PostHit applies only to cases that declare posts, and only on post-grain nodes (the file's
  // grain: a post channel, a fusion with a post-grain input, the rerank of such a node).
  for (const k of KS)
    m[`post_hit_at_${k}`] =
      posts.size && grain === 'post' ? (items.slice(0, k).some((i) => posts.has(i.post_id)) ? 1 : 0) : null;
  const first = items.slice(0, 10).findIndex(inTopics);
  m.mrr_at_10 = topics.size ? (first === -1 ? 0 : 1 / (first + 1)) : null;
  // first topic rank: within the first 25 results, the items a record keeps; null when none is expected.
  const firstKept = items.slice(0, 25).findIndex(inTopics);
  m.first_topic_rank = topics.size && firstKept !== -1 ? firstKept + 1 : null;

  if (withText) {
    const terms = distinctTerms(rec.expected_content);
    const texts = items.slice(0, 10).map((i) => passage(i.post_id) ?? '');
    if (terms.length) {
      m.content_recall_at_5 = terms.every((alts) => texts.slice(0, 5).some((t) => carries(t, alts))) ? 1 : 0;
      const rr = terms.map((alts) => {
        const r = texts.findIndex((t) => carries(t, alts));
        return r === -1 ? 0 : 1 / (r + 1);
      });
      m.content_mrr_at_10 = rr.reduce((a, b) => a + b, 0) / rr.length;
    } else {
      m.content_recall_at_5 = null;
      m.content_mrr_at_10 = null;
    }
  }

  // The definition is silent on an empty list: with no result the dominant share is undefined,
  // and the pair is read as not applicable (n/a) rather than as 0 topics.
  const top5 = items.slice(0, 5);
  const counts = new Map();
  for (const i of top5) counts.set(i.topic_id, (counts.get(i.topic_id) ?? 0) + 1);
  m.pollution_topics_at_5 = top5.length ? counts.size : null;
  m.pollution_dominant_share_at_5 = top5.length ? Math.max(...counts.values()) / top5.length : null;

  const forbidden = forbiddenOf(rec);
  if (forbidden) {
    // Over the node's whole list as stored; an item is counted once whatever makes it forbidden.
    m.forbidden_hits = items.filter(
      (i) =>
        forbidden.posts.has(i.post_id) ||
        forbidden.topics.has(i.topic_id) ||
        (withText && forbidden.terms.some((alts) => carries(passage(i.post_id) ?? '', alts))),
    ).length;
  }
  return m;
}

/** The zone from the top-1 score: strictly below abstain_below empty, strictly below weak_below weak. */
export function zoneOf(top1, zones) {
  if (top1 === null || top1 === undefined) return 'empty';
  if (top1 < zones.abstain_below) return 'empty';
  if (top1 < zones.weak_below) return 'weak';
  return 'normal';
}

const scoreOf = (rec, name) => rec.scores?.find((s) => s.name === name);

/** The judge's correct abstention (definitions.ts `correct_abstention`). */
export function judgeCorrectAbstention(kind, stance, assertsUnsupported) {
  if (!stance) return null;
  if (kind === 'off_topic') return stance === 'abstained' || (stance === 'hedged' && !assertsUnsupported) ? 1 : 0;
  return stance === 'abstained' ? 0 : 1;
}

/** The pattern check's correct abstention: off-topic abstained or hedged; in-domain not abstained. */
export function patternCorrectAbstention(kind, stance) {
  if (!stance) return null;
  if (kind === 'off_topic') return stance === 'abstained' || stance === 'hedged' ? 1 : 0;
  return stance === 'abstained' ? 0 : 1;
}

/**
 * An answered record's generation figures: the cited ids with their validity and goldenness, and
 * each deterministic and judge per-case score that the stored record lets us recompute.
 * `isPublic(post_id)` is undefined when the forum is not at hand (validity then rests on the range).
 */
export function answerFigures(rec, cta, isPublic) {
  const sources = rec.sources ?? [];
  const topics = new Set(rec.expected_topic_ids);
  const posts = new Set(rec.expected_post_ids);
  const cites = citationIds(rec.answer).map((n) => {
    const src = Number.isInteger(n) && n >= 1 && n <= sources.length ? sources[n - 1] : undefined;
    const valid = src !== undefined && (isPublic ? isPublic(src.post_id) : true);
    return {
      n,
      valid,
      post_id: valid ? src.post_id : undefined,
      golden: valid ? topics.has(src.topic_id) || posts.has(src.post_id) : undefined,
      src,
    };
  });
  const markers = cites.length;
  const invalid = cites.filter((c) => !c.valid).length;
  const f = {
    cites,
    markers,
    invalid,
    citation_validity: markers ? (markers - invalid) / markers : null,
  };
  const distinct = [...new Map(cites.filter((c) => c.valid).map((c) => [c.n, c])).values()];
  const hasGoldens = topics.size > 0 || posts.size > 0;
  f.golden_citation =
    rec.kind === 'off_topic' || !hasGoldens || distinct.length === 0
      ? null
      : distinct.filter((c) => c.golden).length / distinct.length;
  f.cta = ctaPresent(rec.answer, cta);
  const stance = scoreOf(rec, 'stance_pattern')?.details?.stance;
  f.stance = stance;
  f.correct_abstention_pattern = patternCorrectAbstention(rec.kind, stance);
  f.offtopic_hallucination =
    rec.kind !== 'off_topic' || stance === undefined ? null : stance === 'answered' && markers > 0 ? 1 : 0;

  const forbidden = forbiddenOf(rec);
  if (forbidden) {
    const shown = sources.some(
      (s) =>
        forbidden.posts.has(s.post_id) ||
        forbidden.topics.has(s.topic_id) ||
        holdsTerm(s.excerpt, forbidden) ||
        (s.neighbours ?? []).some((nb) => forbidden.posts.has(nb.post_id) || holdsTerm(nb.excerpt, forbidden)),
    );
    const said =
      holdsTerm(rec.answer ?? '', forbidden) ||
      cites.some((c) => c.src && (forbidden.posts.has(c.src.post_id) || forbidden.topics.has(c.src.topic_id)));
    f.forbidden = shown || said ? 1 : 0;
  }

  const claims = scoreOf(rec, 'faithfulness')?.details?.claims;
  if (claims)
    f.faithfulness = claims.length ? claims.filter((c) => c.label === 'supported').length / claims.length : null;
  f.contradicted = (claims ?? []).filter((c) => c.label === 'contradicted').length;
  const judged = scoreOf(rec, 'citation_relevance')?.details?.citations;
  if (judged) f.citation_relevance = judged.length ? judged.filter((c) => c.supports).length / judged.length : null;
  const js = scoreOf(rec, 'judge_stance')?.details;
  f.judge_stance = js?.stance;
  if (js) f.correct_abstention = judgeCorrectAbstention(rec.kind, js.stance, js.asserts_unsupported_facts);
  f.judge_hallucination = rec.kind !== 'off_topic' || !js ? null : js.stance === 'answered' && markers > 0 ? 1 : 0;
  return f;
}

/**
 * The retrieval metrics of src/scoring/definitions.ts on hand-built ranked lists. Every expected
 * value is computed by hand in the comment beside it.
 */
import { describe, expect, it } from 'vitest';
import type { RetrievedItem } from '../src/model/retrieved-item.js';
import {
  aggregateRetrieval,
  caseRetrievalMetrics,
  contentRecallAt,
  contentReciprocalRankAt,
  meanN,
} from '../src/scoring/retrieval-metrics.js';
import { rrf } from '../src/retrieval/rrf.js';
import type { Case } from '../src/cases/schema.js';
import { KEPT_ITEMS } from '../src/model/results.js';
import { retrievalRecord } from '../src/runs/retrieve-case.js';

let nextId = 1;
function item(topic: number, text: string, extra: Partial<RetrievedItem> = {}): RetrievedItem {
  const id = nextId++;
  return {
    post_id: topic * 1000 + id,
    topic_id: topic,
    post_number: id,
    title: `Title ${topic}`,
    slug: `t-${topic}`,
    category: 'c',
    posts_count: 3,
    text,
    reply_to_post_number: null,
    score: 0,
    ...extra,
  };
}

const noContent = { expected_post_ids: [] as number[], expected_content: [] as string[] };

describe('topic hits and MRR', () => {
  // Golden topic 7 at rank 3 of [1, 2, 7, 7, 9].
  const list = [item(1, 'a'), item(2, 'b'), item(7, 'c'), item(7, 'd'), item(9, 'e')];
  const m = caseRetrievalMetrics({ expected_topic_ids: [7], ...noContent }, list, 'post');

  it('hit@k is 1 from the first k that reaches the golden', () => {
    expect([m.hit_at_1, m.hit_at_3, m.hit_at_5, m.hit_at_10]).toEqual([0, 1, 1, 1]);
  });
  it('mrr@10 is 1/rank of the first golden: 1/3', () => {
    expect(m.mrr_at_10).toBeCloseTo(1 / 3, 12);
    expect(m.first_topic_rank).toBe(3);
  });
  it('pollution@5: 4 distinct topics among 5, dominant topic 7 holds 2/5', () => {
    expect(m.pollution_topics_at_5).toBe(4);
    expect(m.pollution_dominant_share_at_5).toBeCloseTo(0.4, 12);
  });
  it('a golden missing from the list scores 0, not null', () => {
    const miss = caseRetrievalMetrics({ expected_topic_ids: [42], ...noContent }, list, 'post');
    expect([miss.hit_at_10, miss.mrr_at_10, miss.first_topic_rank]).toEqual([0, 0, null]);
  });
  it('a golden at rank 11 is outside mrr@10 (0) and hit@10 (0)', () => {
    const long = [...Array.from({ length: 10 }, (_, i) => item(100 + i, 'x')), item(7, 'y')];
    const r = caseRetrievalMetrics({ expected_topic_ids: [7], ...noContent }, long, 'post');
    expect([r.hit_at_10, r.mrr_at_10, r.first_topic_rank]).toEqual([0, 0, 11]);
  });
  it('first topic rank is stated only within the 25 items a record keeps', () => {
    // Golden at rank 25: stated; at rank 26: beyond what the file holds, so null (definitions.ts).
    const at = (rank: number) => [...Array.from({ length: rank - 1 }, (_, i) => item(100 + i, 'x')), item(7, 'y')];
    expect(caseRetrievalMetrics({ expected_topic_ids: [7], ...noContent }, at(25), 'post').first_topic_rank).toBe(25);
    expect(caseRetrievalMetrics({ expected_topic_ids: [7], ...noContent }, at(26), 'post').first_topic_rank).toBeNull();
  });
  it('off-topic cases (no expected topic) are not applicable: null, left out of means', () => {
    const off = caseRetrievalMetrics({ expected_topic_ids: [], ...noContent }, list, 'post');
    expect([off.hit_at_5, off.mrr_at_10]).toEqual([null, null]);
    // Means over [1, null, 0] = 0.5 with n = 2.
    expect(meanN([1, null, 0])).toEqual({ mean: 0.5, n: 2 });
  });
  it('post hit@5 applies only to post-grain lists of cases that declare posts', () => {
    const golden = list[3]!.post_id; // rank 4
    const c = { expected_topic_ids: [7], expected_post_ids: [golden], expected_content: [] };
    expect(caseRetrievalMetrics(c, list, 'post').post_hit_at_5).toBe(1);
    expect(caseRetrievalMetrics(c, list, 'topic').post_hit_at_5).toBeNull();
    expect(caseRetrievalMetrics({ ...c, expected_post_ids: [] }, list, 'post').post_hit_at_5).toBeNull();
  });
});

describe('content metrics (passage grain)', () => {
  it("the original audit's guard: demoting the answer passage below a distractor drops content_mrr@10 1.0 → 0.5 while content_recall@5 stays 1.0", () => {
    const answer = item(5, 'Use a suede renovator spray, then brush.');
    const distractor = item(6, 'Suede is lovely in autumn.');
    const terms = ['renovator'];
    expect(contentReciprocalRankAt([answer, distractor], terms, 10)).toBe(1);
    expect(contentRecallAt([answer, distractor], terms, 5)).toBe(1);
    // Demoted: the term first appears at rank 2 → 1/2.
    expect(contentReciprocalRankAt([distractor, answer], terms, 10)).toBe(0.5);
    expect(contentRecallAt([distractor, answer], terms, 5)).toBe(1);
  });
  it('is the mean over terms of 1/rank of the earliest passage carrying each term', () => {
    // "wax" at rank 1, "water" first at rank 3, "cloth" absent: (1 + 1/3 + 0) / 3 = 4/9.
    const list = [item(1, 'Hard wax only.'), item(1, 'Patience.'), item(2, 'A drop of WATER and wax.')];
    expect(contentReciprocalRankAt(list, ['wax', 'water', 'cloth'], 10)).toBeCloseTo(4 / 9, 12);
    // Recall@5 needs every term: cloth is missing → 0.
    expect(contentRecallAt(list, ['wax', 'water', 'cloth'], 5)).toBe(0);
  });
  it('alternatives (a|b) count when any matches; matching folds case and accents', () => {
    const list = [item(1, 'La calcéophilie, c’est la passion des souliers.')];
    expect(contentReciprocalRankAt(list, ['calceophilie|shoe love'], 10)).toBe(1);
    expect(contentReciprocalRankAt(list, ['CALCÉOPHILIE'], 10)).toBe(1);
  });
  it('reads the passage text only, never the title', () => {
    const list = [item(1, 'Nothing here.', { title: 'Renovator spray review' })];
    expect(contentReciprocalRankAt(list, ['renovator'], 10)).toBe(0);
  });
  it('ties: two passages carrying the term keep list order, the earlier rank counts', () => {
    const list = [item(1, 'no'), item(2, 'cedar trees'), item(3, 'cedar trees')];
    expect(contentReciprocalRankAt(list, ['cedar'], 10)).toBe(0.5);
  });
  it('cases without content terms are left out of the content means (n counts only the others)', () => {
    const withTerms = caseRetrievalMetrics(
      { expected_topic_ids: [1], expected_post_ids: [], expected_content: ['wax'] },
      [item(2, 'x'), item(1, 'wax')],
      'post',
    );
    const without = caseRetrievalMetrics({ expected_topic_ids: [1], ...noContent }, [item(1, 'wax')], 'post');
    const agg = aggregateRetrieval([withTerms, without]);
    // content_mrr: only the first case applies, with 1/2 → mean 0.5, n 1; mrr over both: (1/2 + 1)/2.
    expect(agg.content_mrr_at_10).toEqual({ mean: 0.5, n: 1 });
    expect(agg.mrr_at_10).toEqual({ mean: 0.75, n: 2 });
  });
});

describe('RRF fusion', () => {
  const p = (topic: number, post: number) => item(topic, 't', { post_id: post });
  it('sums 1/(k + rank) per key; post lists fuse by post', () => {
    const a = { grain: 'post' as const, items: [p(1, 11), p(2, 21)] };
    const b = { grain: 'post' as const, items: [p(2, 21), p(3, 31)] };
    const fused = rrf([a, b], 60);
    // 21: 1/62 + 1/61; 11: 1/61; 31: 1/62.
    expect(fused.items.map((i) => i.post_id)).toEqual([21, 11, 31]);
    expect(fused.items[0]!.score).toBeCloseTo(1 / 62 + 1 / 61, 15);
    expect(fused.grain).toBe('post');
  });
  it('with a topic-grain input, fuses by topic; a post list votes at the rank of its best post and keeps that post as the passage', () => {
    const posts = { grain: 'post' as const, items: [p(5, 501), p(5, 502), p(6, 601)] };
    const topics = { grain: 'topic' as const, items: [p(6, 600), p(5, 500)] };
    const fused = rrf([posts, topics], 60);
    // topic 5: 1/61 (posts rank 1) + 1/62 (topics rank 2); topic 6: 1/62 (posts rank 2) + 1/61. Equal sums:
    // tie broken by best single rank (both 1), then key ascending → 5 first.
    // Its passages are the post list's posts: the fused list is post-grain (PostHit applies).
    expect(fused.grain).toBe('post');
    expect(fused.items.map((i) => i.topic_id)).toEqual([5, 6]);
    expect(fused.items.map((i) => i.post_id)).toEqual([501, 601]);
  });
  // Fails before this change: the fused list was topic-grain and its PostHit@5 null (n/a).
  it('a fusion with a post-grain input, and its rerank, are post-grain: PostHit@5 applies', async () => {
    const { graphNodes } = await import('../src/retrieval/graph.js');
    const { ConfigSchema } = await import('../src/config/schema.js');
    const posts = { grain: 'post' as const, items: [p(5, 502), p(6, 601)] };
    const topics = { grain: 'topic' as const, items: [p(6, 600), p(5, 500)] };
    const fused = rrf([posts, topics], 60);
    // topic 5: 1/61 + 1/62, topic 6: 1/62 + 1/61: tie, best rank 1 each, key 5 first; passage 502 (the post list's).
    expect(fused.items.map((i) => i.post_id)).toEqual([502, 601]);
    const c = { ...noContent, expected_topic_ids: [5], expected_post_ids: [502] };
    expect(caseRetrievalMetrics(c, fused.items, fused.grain).post_hit_at_5).toBe(1);
    // Two topic lists stay topic-grain: their items are first posts only.
    expect(rrf([topics, topics], 60).grain).toBe('topic');
    const config = ConfigSchema.parse({
      retrieval: {
        channels: [
          { name: 'posts', kind: 'semantic', grain: 'post' },
          { name: 'topics', kind: 'keyword', grain: 'topic' },
          { name: 'kw2', kind: 'keyword', grain: 'topic' },
        ],
        fusions: [
          { name: 'mixed', kind: 'rrf', inputs: ['posts', 'topics'] },
          { name: 'tt', kind: 'rrf', inputs: ['topics', 'kw2'] },
        ],
      },
      rerank: { node: 'mixed', provider: 'offline', model: 'lexical' },
    });
    const grains = Object.fromEntries(graphNodes(config).map((n) => [n.name, n.grain]));
    expect(grains).toMatchObject({ mixed: 'post', tt: 'topic', rerank: 'post' });
  });
});

describe('summaries', () => {
  it('break every node down by kind, difficulty and tag, each mean with its n', async () => {
    const { summariseRetrieval } = await import('../src/summary/retrieval-summary.js');
    const rec = (id: string, kind: string, difficulty: string, tags: string[], hit: number | null) =>
      ({
        id,
        kind,
        difficulty,
        tags,
        status: 'ok',
        retrieval: { posts: { items: [], latency_ms: 2, metrics: { hit_at_5: hit } } },
        scores: [],
      }) as never;
    const s = summariseRetrieval(
      [
        rec('a', 'in_domain', 'easy', ['care'], 1),
        rec('b', 'in_domain', 'hard', ['care', 'sizing'], 0),
        rec('c', 'off_topic', 'easy', [], null),
      ],
      ['posts'],
    );
    // hit@5 over the two in-domain cases: (1 + 0) / 2; the off-topic case does not apply.
    expect(s.nodes.posts!.hit_at_5).toEqual({ mean: 0.5, n: 2 });
    expect(s.breakdown['tag:care']!.posts!.hit_at_5).toEqual({ mean: 0.5, n: 2 });
    expect(s.breakdown['tag:sizing']!.posts!.hit_at_5).toEqual({ mean: 0, n: 1 });
    expect(s.breakdown['difficulty:easy']!.posts!.hit_at_5).toEqual({ mean: 1, n: 1 });
    expect(s.breakdown['kind:off_topic']!.posts!.hit_at_5).toEqual({ mean: null, n: 0 });
    expect(s.latency.posts).toEqual({ median: 2, p90: 2, n: 3 });
  });
});

describe('forbidden hits count what the record keeps', () => {
  // top_k 40: a node returns 40 items, the record keeps the first KEPT_ITEMS (25).
  // Forbidden: the term "mink oil" (ranks 12 and 31) and post of rank 26.
  // Among the first 25: rank 12 only → 1. Over all 40 it would be 3 (12, 26, 31), of which the
  // file could support only the one at rank 12.
  const list = Array.from({ length: 40 }, (_, i) =>
    item(200 + i, i === 11 || i === 30 ? 'Rub in a little mink oil.' : 'Brush the welt.'),
  );
  const c: Case = {
    id: 'f',
    question: 'q',
    kind: 'in_domain',
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: [],
    expected_post_ids: [],
    expected_content: [],
    forbidden_post_ids: [list[25]!.post_id],
    must_not_contain: ['mink oil'],
  };

  it('counts among the first 25 of a 40-item list', () => {
    expect(caseRetrievalMetrics(c, list, 'post').forbidden_hits).toBe(1);
    expect(KEPT_ITEMS).toBe(25);
  });

  it('the stored figure is recomputed from the stored items alone', () => {
    const node = { name: 'posts', kind: 'semantic' as const, grain: 'post' as const, items: list, latencyMs: 1 };
    const stored = retrievalRecord(c, { posts: node }).posts!;
    expect(stored.items).toHaveLength(25);
    // Recheck from the file: a stored item is a hit when its post is forbidden or its post's
    // text (looked up by id) carries the term.
    const text = new Map(list.map((i) => [i.post_id, i.text]));
    const recomputed = stored.items.filter(
      (i) => c.forbidden_post_ids!.includes(i.post_id) || /\bmink oil\b/i.test(text.get(i.post_id)!),
    ).length;
    expect(stored.metrics.forbidden_hits).toBe(recomputed);
    expect(recomputed).toBe(1);
  });
});

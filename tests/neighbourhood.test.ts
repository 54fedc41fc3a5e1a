/**
 * Config D's neighbourhood evidence: each source gets its parent post, k posts before and after
 * it and the topic's first post, in that order of priority, within a character budget per
 * source. The database side is a hand-built topic behind the one profile method it uses.
 */
import { describe, expect, it } from 'vitest';
import type { DiscourseProfile } from '../src/corpus/discourse.js';
import type { RetrievedItem } from '../src/model/retrieved-item.js';
import { addNeighbourhood, type NeighbourhoodOptions } from '../src/evidence/neighbourhood.js';
import { buildSources } from '../src/evidence/block.js';
import type { SourceRecord } from '../src/model/results.js';

const TOPIC = 7;
/** Post n's text: "pN " then words up to exactly `len` characters (default 100). */
function text(n: number, len = 100): string {
  let s = `p${n}`;
  while (s.length < len) s += ' word';
  return s.slice(0, len);
}
const post = (n: number, reply: number | null, body = text(n)): RetrievedItem => ({
  post_id: TOPIC * 1000 + n,
  topic_id: TOPIC,
  post_number: n,
  title: 'Heel slip in new boots',
  slug: 'heel-slip-in-new-boots',
  category: 'Sizing',
  posts_count: 8,
  text: body,
  reply_to_post_number: reply,
  score: 0,
});

/** Posts 1..8 of one topic (post 4 is not public: the database never returns it). */
const POSTS = [post(1, null), post(2, 1), post(3, null), post(5, 2), post(6, 5), post(7, null), post(8, 7)];
const calls: [number, number, number][] = [];
const profile = {
  postsAround: async (topicId: number, lo: number, hi: number) => {
    calls.push([topicId, lo, hi]);
    return POSTS.filter((p) => p.topic_id === topicId && p.post_number >= lo && p.post_number <= hi);
  },
} as unknown as DiscourseProfile;

const ALL: NeighbourhoodOptions = { parent: true, before: 1, after: 1, first_post: true, budget_chars: 10_000 };

/** Sources built as the audit builds them, from the evidence node's items. */
function sourcesFor(items: RetrievedItem[]): { sources: SourceRecord[]; replyTo: Map<number, number | null> } {
  return {
    sources: buildSources(items, { count: items.length, excerptChars: 700, forumUrl: 'https://forum.example' }),
    replyTo: new Map(items.map((i) => [i.post_id, i.reply_to_post_number] as const)),
  };
}
const used = (s: SourceRecord) => (s.neighbours ?? []).reduce((n, nb) => n + nb.excerpt.length, 0);

describe('neighbourhood evidence', () => {
  it('adds parent, before, after and first post in that order, fetching one window per source', async () => {
    const source = post(6, 5);
    const { sources, replyTo } = sourcesFor([{ ...source, reply_to_post_number: 2 }]);
    calls.length = 0;
    await addNeighbourhood(profile, sources, replyTo, ALL);
    expect(sources[0]!.neighbours!.map((n) => [n.role, n.post_number])).toEqual([
      ['parent', 2],
      ['before', 5],
      ['after', 7],
      ['first post', 1],
    ]);
    expect(calls).toEqual([[TOPIC, 1, 7]]);
    expect(sources[0]!.neighbours![0]).toMatchObject({ post_id: 7002, excerpt: text(2) });
  });

  it('leaves the source itself untouched and lists a post once (a parent that is also the post before)', async () => {
    const items = [post(6, 5)];
    const { sources, replyTo } = sourcesFor(items);
    const before = structuredClone(sources[0]!);
    await addNeighbourhood(profile, sources, replyTo, ALL);
    const { neighbours, ...rest } = sources[0]!;
    expect(rest).toEqual(before);
    expect(neighbours!.map((n) => [n.role, n.post_number])).toEqual([
      ['parent', 5],
      ['after', 7],
      ['first post', 1],
    ]);
  });

  it('takes k posts on each side, nearest first, skipping posts the database does not return', async () => {
    const { sources, replyTo } = sourcesFor([post(5, 2)]);
    await addNeighbourhood(profile, sources, replyTo, {
      ...ALL,
      parent: false,
      first_post: false,
      before: 2,
      after: 2,
    });
    // Post 4 is not public: the nearest "before" is then post 3.
    expect(sources[0]!.neighbours!.map((n) => [n.role, n.post_number])).toEqual([
      ['after', 6],
      ['before', 3],
      ['after', 7],
    ]);
  });

  it('adds nothing that was not asked for, and no neighbours field when there is none', async () => {
    const { sources, replyTo } = sourcesFor([post(1, null), post(6, 5)]);
    await addNeighbourhood(profile, sources, replyTo, {
      parent: false,
      before: 0,
      after: 0,
      first_post: true,
      budget_chars: 1500,
    });
    // The first post is the source itself: nothing to add.
    expect(sources[0]!.neighbours).toBeUndefined();
    expect(sources[1]!.neighbours!.map((n) => n.role)).toEqual(['first post']);
  });

  it('stays within the budget: whole neighbours first, the next one cut to what is left', async () => {
    const { sources, replyTo } = sourcesFor([{ ...post(6, 5), reply_to_post_number: 2 }]);
    await addNeighbourhood(profile, sources, replyTo, { ...ALL, budget_chars: 250 });
    const nb = sources[0]!.neighbours!;
    // parent 100 + before 100, then 50 left: the after post is cut to fit, the first post dropped.
    expect(nb.map((n) => [n.role, n.excerpt.length <= 100])).toEqual([
      ['parent', true],
      ['before', true],
      ['after', true],
    ]);
    expect(nb[0]!.excerpt).toBe(text(2));
    expect(nb[2]!.excerpt.endsWith('…')).toBe(true);
    expect(used(sources[0]!)).toBeLessThanOrEqual(250);
  });

  it('drops a neighbour when under 40 characters of budget would remain for it', async () => {
    const { sources, replyTo } = sourcesFor([{ ...post(6, 5), reply_to_post_number: 2 }]);
    await addNeighbourhood(profile, sources, replyTo, { ...ALL, budget_chars: 230 });
    expect(sources[0]!.neighbours!.map((n) => n.role)).toEqual(['parent', 'before']);
    expect(used(sources[0]!)).toBe(200);
  });

  it('never exceeds the budget, even when the cut falls inside a long word', async () => {
    const long = post(3, null, 'x'.repeat(400));
    const saved = POSTS.splice(2, 1, long);
    try {
      const { sources, replyTo } = sourcesFor([post(4, 3)]);
      await addNeighbourhood(profile, sources, replyTo, {
        parent: true,
        before: 0,
        after: 0,
        first_post: false,
        budget_chars: 120,
      });
      expect(sources[0]!.neighbours!.map((n) => n.post_number)).toEqual([3]);
      expect(used(sources[0]!)).toBeLessThanOrEqual(120);
    } finally {
      POSTS.splice(2, 1, ...saved);
    }
  });

  it('gives each source its own budget', async () => {
    const { sources, replyTo } = sourcesFor([post(6, 5), post(8, 7)]);
    await addNeighbourhood(profile, sources, replyTo, { ...ALL, budget_chars: 150 });
    for (const s of sources) {
      expect(s.neighbours!.length).toBeGreaterThan(0);
      expect(used(s)).toBeLessThanOrEqual(150);
    }
    expect(sources[0]!.neighbours![0]).toMatchObject({ role: 'parent', post_number: 5 });
    expect(sources[1]!.neighbours![0]).toMatchObject({ role: 'parent', post_number: 7 });
  });
});

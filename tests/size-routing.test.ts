/**
 * Size routing (the original audit's config G), as a mechanism: a topic-grain channel with
 * `max_posts_count: [N…]` gives one node per N, each leaving out the topics with more than N
 * posts inside the query (before the top-k limit), and fusions over those nodes see only what
 * is left. Whether that helps is what a run measures; nothing here assumes the original audit's finding.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../src/config/load.js';
import { pgliteWriter } from '../src/demo/demo-db.js';
import { DiscourseProfile } from '../src/corpus/discourse.js';
import type { Forum, ForumTopic } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { pgliteClient } from '../src/db/sql-client.js';
import { ConfigError } from '../src/errors.js';
import { graphNodes, RetrievalGraph } from '../src/retrieval/graph.js';
import { HashEmbedder } from '../src/embedding/hash-embedder.js';

/** A topic of `size` posts, every one about its title. */
function topic(id: number, title: string, size: number): ForumTopic {
  const posts = Array.from({ length: size }, (_, i) => ({
    n: i + 1,
    id: id * 1000 + i + 1,
    user: `u${i % 3}`,
    raw: `${title}: note ${i + 1} from the thread, with a few more words about ${title.toLowerCase()}.`,
    hidden: false,
    deleted: false,
    post_type: 1,
    ...(i > 0 ? { reply_to: i } : {}),
  }));
  return {
    id,
    title,
    slug: `t${id}`,
    category: 'care',
    tags: [],
    archetype: 'regular',
    visible: true,
    deleted: false,
    posts,
  };
}

/** posts_count: 12, 6, 4, 2, 3. Topic 1 is the "megathread". */
const FORUM: Forum = {
  categories: [{ id: 1, name: 'Care', slug: 'care', read_restricted: false }],
  topics: [
    topic(1, 'Suede care megathread', 12),
    topic(2, 'Suede brush choice', 6),
    topic(3, 'Suede spray protection', 4),
    topic(4, 'Suede shoes in the rain', 2),
    topic(5, 'Goodyear welt resoling', 3),
  ],
};
const SIZE = new Map(FORUM.topics.map((t) => [t.id, t.posts.length] as const));
const LIMITS = [3, 5, 10] as const;
const QUESTION = 'how do I care for suede shoes';

function routedConfig(topK: number) {
  return validateConfig(
    {
      retrieval: {
        top_k: topK,
        channels: [
          { name: 'posts', kind: 'semantic', grain: 'post', top_k: 25 },
          { name: 'semantic', kind: 'semantic', grain: 'topic', max_posts_count: [...LIMITS] },
          { name: 'keyword', kind: 'keyword', grain: 'topic', max_posts_count: [...LIMITS] },
        ],
        fusions: [
          { name: 'hybrid', kind: 'rrf', inputs: ['semantic', 'keyword'] },
          ...LIMITS.map((n) => ({ name: `hybrid_${n}`, kind: 'rrf', inputs: [`semantic_${n}`, `keyword_${n}`] })),
          ...LIMITS.map((n) => ({ name: `rrf_posts_hybrid_${n}`, kind: 'rrf', inputs: ['posts', `hybrid_${n}`] })),
        ],
      },
    },
    null,
    {},
  );
}

let raw: PGlite;
let profile: DiscourseProfile;
const embedder = new HashEmbedder(64);
beforeAll(async () => {
  raw = await PGlite.create({ extensions: { vector } });
  await loadForum(pgliteWriter(raw), FORUM, { embedder });
  profile = new DiscourseProfile(pgliteClient(raw, { owned: false }));
});
afterAll(async () => raw.close());

const topics = (items: { topic_id: number }[]) => items.map((i) => i.topic_id);

describe('size routing', () => {
  it('gives one node per N, named <channel>_<N>, beside the unrouted channel', () => {
    const nodes = graphNodes(routedConfig(25));
    const channels = nodes.filter((n) => n.kind === 'semantic' || n.kind === 'keyword');
    expect(channels.map((n) => [n.name, n.kind === 'rrf' || n.kind === 'rerank' ? null : n.maxPostsCount])).toEqual([
      ['posts', null],
      ['semantic', null],
      ['semantic_3', 3],
      ['semantic_5', 5],
      ['semantic_10', 10],
      ['keyword', null],
      ['keyword_3', 3],
      ['keyword_5', 5],
      ['keyword_10', 10],
    ]);
  });

  it('leaves out exactly the topics above N: each routed list is the unrouted one without them, in the same order', async () => {
    const out = await new RetrievalGraph(routedConfig(25), { profile, embedder }).run(QUESTION);
    // The unrouted channels do reach the megathread, so the filter has something to remove.
    expect(topics(out.semantic!.items)).toContain(1);
    expect(topics(out.keyword!.items)).toContain(1);
    for (const n of LIMITS) {
      for (const ch of ['semantic', 'keyword']) {
        const routed = out[`${ch}_${n}`]!.items;
        expect(routed.every((i) => i.posts_count <= n && SIZE.get(i.topic_id) === i.posts_count)).toBe(true);
        expect(topics(routed)).toEqual(topics(out[ch]!.items).filter((t) => SIZE.get(t)! <= n));
      }
    }
    expect(topics(out.keyword_3!.items)).toEqual([4]);
    expect(topics(out.keyword_5!.items).sort()).toEqual([3, 4]);
  });

  it('routes before fusion: hybrid_N fuses only the routed lists', async () => {
    const out = await new RetrievalGraph(routedConfig(25), { profile, embedder }).run(QUESTION);
    expect(topics(out.hybrid!.items)).toContain(1);
    for (const n of LIMITS) {
      const fused = topics(out[`hybrid_${n}`]!.items);
      expect(fused.every((t) => SIZE.get(t)! <= n)).toBe(true);
      expect(fused.sort()).toEqual(
        [...new Set([...topics(out[`semantic_${n}`]!.items), ...topics(out[`keyword_${n}`]!.items)])].sort(),
      );
    }
  });

  it('does not route the post channel: a long thread can still come back through its posts', async () => {
    const out = await new RetrievalGraph(routedConfig(25), { profile, embedder }).run(QUESTION);
    expect(topics(out.hybrid_3!.items)).not.toContain(1);
    expect(topics(out.posts!.items)).toContain(1);
    expect(topics(out.rrf_posts_hybrid_3!.items)).toContain(1);
  });

  it('filters inside the query, before the top-k limit: a routed node still fills its k slots', async () => {
    const full = await new RetrievalGraph(routedConfig(25), { profile, embedder }).run(QUESTION);
    const top2 = await new RetrievalGraph(routedConfig(2), { profile, embedder }).run(QUESTION);
    // The unrouted top 2 hold a topic above 3 posts: filtering after the limit would leave < 2.
    expect(topics(top2.semantic!.items).some((t) => SIZE.get(t)! > 3)).toBe(true);
    for (const n of LIMITS) {
      const eligible = topics(full[`semantic_${n}`]!.items);
      expect(topics(top2[`semantic_${n}`]!.items)).toEqual(eligible.slice(0, 2));
    }
  });

  it('a single N routes the channel under its own name', async () => {
    const config = validateConfig(
      { retrieval: { channels: [{ name: 'keyword', kind: 'keyword', grain: 'topic', max_posts_count: 5 }] } },
      null,
      {},
    );
    expect(graphNodes(config).map((n) => n.name)).toEqual(['keyword']);
    const out = await new RetrievalGraph(config, { profile, embedder }).run(QUESTION);
    expect(topics(out.keyword!.items).sort()).toEqual([3, 4]);
  });

  it('is refused on post grain, and a fusion may only name an N the channel declares', () => {
    expect(() =>
      validateConfig(
        { retrieval: { channels: [{ name: 'posts', kind: 'semantic', grain: 'post', max_posts_count: [5] }] } },
        null,
        {},
      ),
    ).toThrow(/size routing applies to topic-grain channels only/);
    const bad = () =>
      validateConfig(
        {
          retrieval: {
            channels: [
              { name: 'semantic', kind: 'semantic', grain: 'topic', max_posts_count: [5] },
              { name: 'keyword', kind: 'keyword', grain: 'topic', max_posts_count: [5] },
            ],
            fusions: [{ name: 'hybrid_7', kind: 'rrf', inputs: ['semantic_7', 'keyword_5'] }],
          },
        },
        null,
        {},
      );
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/unknown node 'semantic_7'/);
  });
});

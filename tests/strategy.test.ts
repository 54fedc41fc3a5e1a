/**
 * Embedding strategy per semantic channel (the original audit's configs B and C): a channel's `model_id`
 * and `strategy_id` pick the discourse-ai vectors it reads. Hand-set vectors make native and
 * enriched rankings disagree on purpose; then the loader's own strategies are checked against
 * vectors recomputed from the texts each strategy embeds.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadConfig, validateConfig } from '../src/config/load.js';
import { pgliteWriter } from '../src/demo/demo-db.js';
import { DiscourseProfile } from '../src/corpus/discourse.js';
import type { Forum, ForumTopic } from '../src/demo/forum.js';
import { STRATEGIES } from '../src/corpus/embedding-text.js';
import { forumPostText as postEmbeddingText, loadForum } from '../src/demo/load-forum.js';
import { pgliteClient } from '../src/db/sql-client.js';
import type { Embedder } from '../src/embedding/embedder.js';
import { RetrievalGraph } from '../src/retrieval/graph.js';
import { HashEmbedder, vectorLiteral } from '../src/embedding/hash-embedder.js';

const DIMS = 64;
const OP =
  'Carmina Simpson last sizing: I take a 9 UK in Loake 1880. What size should I order on the Simpson last? The toe feels roomy in photos.';

function thread(id: number, title: string, raws: string[], replyTo: (n: number) => number | undefined): ForumTopic {
  const posts = raws.map((raw, i) => {
    const to = replyTo(i + 1);
    return {
      n: i + 1,
      id: id * 1000 + i + 1,
      user: `u${i}`,
      raw,
      hidden: false,
      deleted: false,
      post_type: 1,
      ...(to ? { reply_to: to } : {}),
    };
  });
  return {
    id,
    title,
    slug: `t${id}`,
    category: 'sizing',
    tags: ['carmina'],
    archetype: 'regular',
    visible: true,
    deleted: false,
    posts,
  };
}

const FORUM: Forum = {
  categories: [{ id: 1, name: 'Sizing', slug: 'sizing', read_restricted: false }],
  topics: [
    thread(
      1,
      'Carmina Simpson last sizing',
      [
        OP,
        'Go half a size down, it runs long.',
        'Agreed, half down worked for me too.',
        'Off on a tangent: anyone tried the Rain last in shell cordovan?',
      ],
      (n) => (n === 3 ? 2 : n > 1 ? 1 : undefined),
    ),
    thread(
      2,
      'Suede cleaning basics',
      ['Use a crepe brush on dry suede.', 'An eraser block lifts stains from the nap.'],
      (n) => (n > 1 ? 1 : undefined),
    ),
  ],
};

/** A query embedder that always answers `e1`, so a post's score is the first component of its unit vector. */
const fixed: Embedder = { id: 'test:e1', offline: true, dimensions: DIMS, embed: async (t) => t.map(() => unit(0)) };
function unit(degrees: number): number[] {
  const v = new Array<number>(DIMS).fill(0);
  v[0] = Math.cos((degrees * Math.PI) / 180);
  v[1] = Math.sin((degrees * Math.PI) / 180);
  return v;
}

/** Hand-set vectors under model 9 (and 10): angle to the query per post id. */
const HAND: { model: number; strategy: number; angles: Record<number, number> }[] = [
  { model: 9, strategy: STRATEGIES.native, angles: { 1001: 0, 1002: 30, 1003: 60, 1004: 85 } },
  { model: 9, strategy: STRATEGIES.enriched, angles: { 1001: 85, 1002: 60, 1003: 30, 1004: 0 } },
  { model: 10, strategy: STRATEGIES.native, angles: { 1001: 60, 1002: 0, 1003: 85, 1004: 30 } },
];

let raw: PGlite;
let profile: DiscourseProfile;
const hash = new HashEmbedder(DIMS);
beforeAll(async () => {
  raw = await PGlite.create({ extensions: { vector } });
  await loadForum(pgliteWriter(raw), FORUM, { embedder: hash });
  for (const h of HAND) {
    for (const [post, angle] of Object.entries(h.angles)) {
      await raw.query(
        'INSERT INTO ai_posts_embeddings (post_id, model_id, strategy_id, embeddings) VALUES ($1, $2, $3, $4::halfvec)',
        [Number(post), h.model, h.strategy, vectorLiteral(unit(angle))],
      );
    }
  }
  profile = new DiscourseProfile(pgliteClient(raw, { owned: false }));
});
afterAll(async () => raw.close());

const channel = (name: string, model_id: number, strategy_id: number) => ({
  name,
  kind: 'semantic',
  grain: 'post',
  model_id,
  strategy_id,
});

describe('embedding strategy per channel', () => {
  it('each channel returns the ranking of its own vectors (native, enriched, another model)', async () => {
    const config = validateConfig(
      { retrieval: { channels: [channel('native', 9, 1), channel('enriched', 9, 2), channel('other_model', 10, 1)] } },
      null,
      {},
    );
    const out = await new RetrievalGraph(config, { profile, embedder: fixed }).run('what size on the Simpson last?');
    expect(out.native!.items.map((i) => i.post_id)).toEqual([1001, 1002, 1003, 1004]);
    expect(out.enriched!.items.map((i) => i.post_id)).toEqual([1004, 1003, 1002, 1001]);
    expect(out.other_model!.items.map((i) => i.post_id)).toEqual([1002, 1004, 1001, 1003]);
    // Scores are the cosine to the query: cos(0°) = 1, cos(30°) ≈ 0.866 (halfvec precision).
    expect(out.native!.items[0]!.score).toBeCloseTo(1, 2);
    expect(out.enriched!.items[1]!.score).toBeCloseTo(Math.cos(Math.PI / 6), 2);
  });

  it("a model or strategy with no vectors returns nothing (never another strategy's vectors)", async () => {
    const config = validateConfig(
      { retrieval: { channels: [channel('missing', 9, 3), channel('other', 10, 2)] } },
      null,
      {},
    );
    const out = await new RetrievalGraph(config, { profile, embedder: fixed }).run('anything');
    expect(out.missing!.items).toEqual([]);
    expect(out.other!.items).toEqual([]);
  });

  it('the loader embeds the enriched text for strategy 2: first post and parent excerpts after the native text', () => {
    const t = FORUM.topics[0]!;
    const native = postEmbeddingText(t, t.posts[2]!, 'Sizing', STRATEGIES.native);
    const enriched = postEmbeddingText(t, t.posts[2]!, 'Sizing', STRATEGIES.enriched);
    expect(native).toBe('Carmina Simpson last sizing\nSizing\ncarmina\nAgreed, half down worked for me too.');
    expect(enriched).toBe(`${native}\n${OP.slice(0, 500)}\nGo half a size down, it runs long.`);
    // The first post has neither: both strategies embed the same text.
    expect(postEmbeddingText(t, t.posts[0]!, 'Sizing', STRATEGIES.enriched)).toBe(
      postEmbeddingText(t, t.posts[0]!, 'Sizing', STRATEGIES.native),
    );
  });

  it("a channel reads the vectors of exactly its strategy's texts (scores match a recomputation)", async () => {
    const question = 'What size should I take on the Carmina Simpson last?';
    const config = validateConfig(
      { retrieval: { channels: [channel('native', 1, 1), channel('enriched', 1, 2)] } },
      null,
      {},
    );
    const out = await new RetrievalGraph(config, { profile, embedder: hash }).run(question);
    const q = hash.embedOne(question);
    const cos = (a: number[], b: number[]) =>
      a.reduce((s, x, i) => s + x * b[i]!, 0) / (Math.hypot(...a) * Math.hypot(...b));
    const posts = FORUM.topics.flatMap((t) => t.posts.map((p) => ({ t, p })));
    for (const [name, strategy] of [
      ['native', 1],
      ['enriched', 2],
    ] as const) {
      const items = out[name]!.items;
      expect(items).toHaveLength(posts.length);
      for (const item of items) {
        const { t, p } = posts.find((x) => x.p.id === item.post_id)!;
        expect(item.score).toBeCloseTo(cos(q, hash.embedOne(postEmbeddingText(t, p, 'Sizing', strategy))), 2);
      }
    }
    const score = (name: string, id: number) => out[name]!.items.find((i) => i.post_id === id)!.score;
    // Replies differ between strategies (the OP excerpt pulls them toward the question); first posts do not.
    expect(score('enriched', 1003)).toBeGreaterThan(score('native', 1003) + 0.05);
    expect(score('enriched', 1001)).toBeCloseTo(score('native', 1001), 3);
  });

  it('the shipped configs B and C differ only in the strategy their post channel reads', () => {
    const dir = join(import.meta.dirname, '..', 'configs');
    const b = loadConfig(join(dir, 'B-native-posts.yml'), process.env).config;
    const c = loadConfig(join(dir, 'C-enriched-posts.yml'), process.env).config;
    expect(b.retrieval.channels[0]).toMatchObject({ grain: 'post', model_id: 1, strategy_id: 1 });
    expect(c.retrieval.channels[0]).toMatchObject({ grain: 'post', model_id: 1, strategy_id: 2 });
    const strip = (x: typeof b) => ({ ...x.retrieval, channels: x.retrieval.channels.slice(1) });
    expect(strip(c)).toEqual(strip(b));
  });
});

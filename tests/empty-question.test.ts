/**
 * Questions with no content word ("Why?", "What is it?", an emoji) embed to the zero vector on
 * the offline embedder, whose cosine distance to anything is NaN in pgvector; the keyword channels
 * find no lexeme in them. Every node must still give finite scores (or nothing), never NaN.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { pgliteWriter } from '../src/demo/demo-db.js';
import { DiscourseProfile } from '../src/corpus/discourse.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { pgliteClient } from '../src/db/sql-client.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { HashEmbedder, vectorLiteral } from '../src/embedding/hash-embedder.js';
import { createRunContext, type RunContext } from '../src/wiring/context.js';

const EMPTY = ['Why?', 'What is it?', '🙂', '?!', 'the and of'];

describe('questions with no content word on the demo', () => {
  let ctx: RunContext;
  beforeAll(async () => {
    ctx = await createRunContext(loadConfig(undefined, {}), { env: {}, cwd: PACKAGE_ROOT });
  }, 120_000);
  afterAll(async () => ctx?.close());

  it.each(EMPTY)('%s: every node of the graph has finite scores, and the channels find nothing', async (question) => {
    const nodes = await ctx.graph.run(question);
    expect(Object.keys(nodes).sort()).toEqual(['hybrid', 'keyword', 'posts', 'rerank', 'rrf_posts_hybrid', 'semantic']);
    for (const node of Object.values(nodes)) {
      for (const item of node.items)
        expect([node.name, item.post_id, Number.isFinite(item.score)]).toEqual([node.name, item.post_id, true]);
      expect(Number.isFinite(node.latencyMs)).toBe(true);
    }
    // No direction (zero vector) and no lexeme: nothing is near, nothing matches.
    for (const name of ['posts', 'semantic', 'keyword', 'hybrid', 'rrf_posts_hybrid', 'rerank'])
      expect([name, nodes[name]!.items]).toEqual([name, []]);
  });

  it('a question with content words still finds its thread (the guard is only for the zero vector)', async () => {
    const nodes = await ctx.graph.run('How do I revive faded suede?');
    expect(nodes.semantic!.items.length).toBeGreaterThan(0);
    expect(nodes.keyword!.items.length).toBeGreaterThan(0);
  });
});

describe('a stored zero vector (a post with no content word)', () => {
  let raw: PGlite;
  let profile: DiscourseProfile;
  const embedder = new HashEmbedder(64);
  beforeAll(async () => {
    raw = await PGlite.create({ extensions: { vector } });
    await loadForum(pgliteWriter(raw), readForum(join(import.meta.dirname, 'fixtures', 'forum')), { embedder });
    // Post 10001 (public) as if its text had no content word: its stored vector is all zeros.
    await raw.query(`UPDATE ai_posts_embeddings SET embeddings = $1::halfvec WHERE post_id = 10001`, [
      vectorLiteral(new Array(64).fill(0)),
    ]);
    profile = new DiscourseProfile(pgliteClient(raw, { owned: false }));
  });
  afterAll(async () => raw.close());

  it('is left out of the semantic list instead of scoring NaN', async () => {
    const items = await profile.semanticPosts({
      vector: vectorLiteral(embedder.embedOne('faded suede colour')),
      dimensions: 64,
      modelId: 1,
      strategyId: 1,
      limit: 25,
    });
    expect(items.length).toBeGreaterThan(0);
    expect(items.map((i) => i.post_id)).not.toContain(10001);
    for (const i of items) expect(Number.isFinite(i.score)).toBe(true);
  });
});

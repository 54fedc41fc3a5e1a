/**
 * What the embedded engine computes for a batch statement of the shared shape, counted by the
 * engine itself (track_functions = all, pg_stat_user_functions): each stored vector and each
 * question vector converted from halfvec once, not once per (question, row).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { vectorLiteral } from '../src/embedding/hash-embedder.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { createRunContext, type RunContext } from '../src/wiring/context.js';

describe('shared batch statements on the embedded demo', () => {
  let ctx: RunContext;
  beforeAll(async () => {
    const loaded = loadConfig(undefined, {}, [
      { path: ['cache_dir'], flag: '--cache-dir', value: join(PACKAGE_ROOT, '.cache', 'ragaudit') },
    ]);
    ctx = await createRunContext(loaded, { env: {}, cwd: PACKAGE_ROOT });
  }, 120_000);
  afterAll(async () => ctx?.close());

  /** Calls of pgvector's C functions by name since the session's counts were last flushed. */
  async function calls(run: () => Promise<unknown>): Promise<Record<string, number>> {
    const read = async () => {
      await ctx.db.query('SELECT pg_stat_force_next_flush()');
      await ctx.db.query('SELECT pg_stat_clear_snapshot()');
      const rows = await ctx.db.query<{ funcname: string; calls: string | number }>(
        "SELECT funcname, calls FROM pg_stat_user_functions WHERE funcname IN ('halfvec_to_vector', 'cosine_distance')",
      );
      return Object.fromEntries(rows.map((r) => [r.funcname, Number(r.calls)]));
    };
    await ctx.db.query("SET track_functions = 'all'");
    const before = await read();
    await run();
    const after = await read();
    return Object.fromEntries(Object.entries(after).map(([k, n]) => [k, n - (before[k] ?? 0)]));
  }

  it('converts each stored and each question vector once (posts: rows + questions conversions)', async () => {
    const questions = ['How do I revive faded suede?', 'Are Loake shoes made in England?', 'Cordovan or calf?'];
    const vectors = (await ctx.embedder.embed(questions)).map(vectorLiteral);
    const base = { dimensions: 384, modelId: 1, strategyId: 1, limit: 25, shape: 'shared' as const };
    const rows = await ctx.db.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM ai_posts_embeddings e JOIN posts p ON p.id = e.post_id JOIN topics t ON t.id = p.topic_id
       LEFT JOIN categories c ON c.id = t.category_id
       WHERE e.model_id = 1 AND e.strategy_id = 1 AND p.post_type = 1 AND NOT p.hidden AND p.deleted_at IS NULL
         AND t.visible AND t.deleted_at IS NULL AND t.archetype <> 'private_message' AND c.id IS NOT NULL AND NOT c.read_restricted`,
    );
    const candidates = Number(rows[0]!.n);
    const got = await calls(() => ctx.profile.semanticPostsBatch({ ...base, vectors }));
    // One distance per (question, public post); one conversion per public post and per question.
    // Before the query vectors were kept apart (OFFSET 0), the count was candidates × (1 + questions).
    expect(got.cosine_distance).toBe(candidates * questions.length);
    expect(got.halfvec_to_vector).toBe(candidates + questions.length);
    // Topics: the same, over the public topics' vectors (distances ÷ questions of them).
    const topics = await calls(() => ctx.profile.semanticTopicsBatch({ ...base, vectors }));
    expect(topics.cosine_distance).toBeGreaterThan(0);
    expect(topics.halfvec_to_vector).toBe(topics.cosine_distance! / questions.length + questions.length);
  }, 120_000);
});

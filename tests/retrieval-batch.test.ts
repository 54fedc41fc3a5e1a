/**
 * Batched retrieval replay gives exactly the per-query path's lists: every node's items (ids,
 * text, scores), their order and tie-breaks, the title gate's counts and the metrics, on the
 * embedded demo (semantic and keyword channels) and on the real PostgreSQL test server (keyword
 * channels). The semantic statements' shapes and ANN mode: tests/retrieval-batch-ann.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Located } from '../src/cases/load.js';
import { loadCases } from '../src/cases/load.js';
import type { Case } from '../src/cases/schema.js';
import { validateConfig, type LoadedConfig } from '../src/config/load.js';
import { byQuery, ITEM_COLUMNS, postsOnce } from '../src/corpus/discourse-sql.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { PACKAGE_ROOT, DEMO_FORUM_DIR } from '../src/paths.js';
import { createRunContext, type RunContext } from '../src/wiring/context.js';
import { freshDatabase } from './helpers/pg.js';
import { CASE_FILES, demoConfig, expectSameLists, expectSameRun, withOdd } from './helpers/batch-lists.js';

describe.each([
  ['the built-in demo graph (posts, topics, keyword, fusions, rerank)', undefined],
  ['size routing and the title gate (G)', 'G-size-routing.yml'],
])('batched retrieval on the embedded demo: %s', (_label, file) => {
  let ctx: RunContext;
  let cases: Located<Case>[];
  beforeAll(async () => {
    ctx = await createRunContext(demoConfig(file), { env: {}, cwd: PACKAGE_ROOT });
    cases = withOdd(loadCases(CASE_FILES));
  }, 120_000);
  afterAll(async () => ctx?.close());

  it('every node of every case gets the per-query lists', async () => {
    await expectSameLists(
      ctx,
      cases.map((c) => c.value.question),
    );
  }, 120_000);

  it('a batched run writes the per-query run records (items, scores, metrics, gated counts)', async () => {
    await expectSameRun(ctx, cases);
  }, 120_000);
});

describe('batched retrieval on PostgreSQL (keyword channels, title gate, size routing, rerank)', () => {
  let ctx: RunContext;
  let close: () => Promise<void>;
  let cases: Located<Case>[];
  beforeAll(async () => {
    const fresh = await freshDatabase('batch');
    await loadForum(fresh.writer, readForum(DEMO_FORUM_DIR), { textSearchConfig: 'english' });
    await fresh.close();
    const config = validateConfig(
      {
        retrieval: {
          top_k: 25,
          title_gate_max_df: 0.05,
          channels: [
            { name: 'kw_posts', kind: 'keyword', grain: 'post' },
            { name: 'kw_topics', kind: 'keyword', grain: 'topic', title_gate: true, max_posts_count: [12, 40] },
            { name: 'kw_small', kind: 'keyword', grain: 'topic', top_k: 5, max_posts_count: 20 },
          ],
          fusions: [
            { name: 'hybrid', kind: 'rrf', inputs: ['kw_posts', 'kw_topics'] },
            { name: 'all', kind: 'rrf', inputs: ['kw_topics_12', 'kw_small', 'hybrid'] },
          ],
        },
        rerank: { node: 'kw_posts', candidates: 25, provider: 'offline', model: 'lexical' },
      },
      null,
      {},
    );
    const loaded: LoadedConfig = { ...demoConfig(), config };
    ctx = await createRunContext(loaded, { env: {}, cwd: PACKAGE_ROOT, dbUrl: fresh.url });
    close = () => ctx.close();
    cases = withOdd(loadCases(CASE_FILES));
  }, 120_000);
  afterAll(async () => close?.());

  it('runs on a pg pool with the lateral shape', () => {
    expect(ctx.db.kind).toBe('pg');
    expect(ctx.profile.batchShape({})).toBe('lateral');
  });

  it('every node of every case gets the per-query lists', async () => {
    await expectSameLists(
      ctx,
      cases.map((c) => c.value.question),
    );
  }, 120_000);

  it('a batched run writes the per-query run records', async () => {
    await expectSameRun(ctx, cases);
  }, 120_000);

  it('sends a channel’s batch in chunks: 2 questions in its first statement, the rest sized to the timeout', async () => {
    // A fresh graph (chunk sizes are measured per graph): each channel's first statement carries
    // the first 2 questions, and every question is in exactly one statement of each channel.
    const { RetrievalGraph } = await import('../src/retrieval/graph.js');
    const sent: { sql: string; texts: string[] }[] = [];
    const db = ctx.profile.db;
    const query = db.query.bind(db);
    const spy = vi.spyOn(db, 'query').mockImplementation((sql, params, opts) => {
      if (Array.isArray(params?.[0])) sent.push({ sql, texts: params[0] as string[] });
      return query(sql, params, opts);
    });
    try {
      const graph = new RetrievalGraph(ctx.config, { profile: ctx.profile, embedder: ctx.embedder });
      const questions = [...new Set(cases.map((c) => c.value.question))].slice(0, 30);
      await graph.prepareBatch(questions);
      for (const grain of ['post', 'topic'] as const) {
        const statements = sent.filter((s) => s.sql.includes(`${grain}_search_data`));
        const channels = graph.nodes.filter((n) => n.kind === 'keyword' && n.grain === grain).length;
        expect(channels).toBeGreaterThan(0);
        // Each channel's first statement: the first 2 questions; in all, each question once per channel.
        const first = statements.filter((s) => JSON.stringify(s.texts) === JSON.stringify(questions.slice(0, 2)));
        expect(first.length).toBe(channels);
        expect(statements.every((s) => s.texts.length <= questions.length - 2)).toBe(true);
        expect(statements.flatMap((s) => s.texts).sort()).toEqual(
          Array.from({ length: channels }, () => questions)
            .flat()
            .sort(),
        );
      }
    } finally {
      spy.mockRestore();
    }
  }, 120_000);
});

describe('batch rows with each post once (postsOnce / byQuery)', () => {
  const post = (id: number, topic: number) => ({
    ord: 0,
    post_id: id,
    topic_id: topic,
    post_number: 1,
    title: `topic ${topic}`,
    slug: `topic-${topic}`,
    category: 'Care',
    posts_count: 3,
    text: `post ${id}`,
    reply_to_post_number: null,
    ranked: null,
  });
  /** The row that carries the ranking: [query, post, score] entries, as the statement's JSON text. */
  const ranking = (...entries: unknown[]) => ({ ord: 1, post_id: null, ranked: JSON.stringify(entries) });

  it('gives each ranked entry its post columns, in the single query column order, lists in query order', () => {
    const rows = [post(7, 1), post(9, 2), ranking([1, 9, 0.9], [1, 7, 0.5], [3, 7, 0.8])];
    const lists = byQuery(rows as never, 3, 'test search');
    expect(lists.map((l) => l.map((i) => [i.post_id, i.score]))).toEqual([
      [
        [9, 0.9],
        [7, 0.5],
      ],
      [],
      [[7, 0.8]],
    ]);
    // Keys as the single query returns them: the item columns, then the score.
    expect(Object.keys(lists[0]![0]!)).toEqual(
      ITEM_COLUMNS.split(',')
        .map((c) =>
          c
            .trim()
            .split(/\s+/)
            .at(-1)!
            .replace(/^\w+\./, ''),
        )
        .concat('score'),
    );
    expect(lists[0]![0]).toMatchObject({ topic_id: 2, title: 'topic 2', text: 'post 9' });
  });

  it('an empty ranking (no query found anything) is empty lists', () => {
    expect(byQuery([{ ord: 1, ranked: null }] as never, 2, 'test search')).toEqual([[], []]);
  });

  it('refuses a ranked post without its columns, a query that was not asked, and a malformed ranking', () => {
    expect(() => byQuery([ranking([1, 7, 0.5])] as never, 1, 'test search')).toThrow(
      /ranked post 7 without its columns/,
    );
    expect(() => byQuery([post(7, 1), ranking([2, 7, 0.5])] as never, 1, 'test search')).toThrow(/not asked \(2\)/);
    expect(() => byQuery([post(7, 1), ranking([1, 7])] as never, 1, 'test search')).toThrow(
      /not \[query, post, score\]/,
    );
    expect(() => byQuery([{ ord: 1, ranked: '{"a":1}' }] as never, 1, 'test search')).toThrow(/not a list/);
    // A score PostgreSQL could only write as a JSON string ("NaN") is refused as any non-finite score is.
    expect(() => byQuery([post(7, 1), ranking([1, 7, 'NaN'])] as never, 1, 'test search')).toThrow(/non-finite score/);
  });

  it('the statement sends the posts, then the ranking ordered by query and rank', () => {
    const sql = postsOnce(
      { select: 'SELECT 1 AS ord, 2 AS post_id, 0.5 AS score, 0.5 AS rank_key, 2 AS rank_tie' },
      'DESC',
    );
    expect(sql).toMatch(/WITH ranked AS MATERIALIZED/);
    expect(sql).toMatch(/json_agg\(json_build_array\(ord, post_id, score\) ORDER BY ord, rank_key DESC, rank_tie\)/);
  });
});

/**
 * Batched retrieval replay gives exactly the per-query path's lists: every node's items (ids,
 * text, scores), their order and tie-breaks, the title gate's counts and the metrics, on the
 * embedded demo (semantic and keyword channels, both statement shapes) and on the real PostgreSQL
 * test server (keyword channels: pgvector is not installed there).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Located } from '../src/cases/load.js';
import { loadCases } from '../src/cases/load.js';
import type { Case } from '../src/cases/schema.js';
import { loadConfig, validateConfig, type LoadedConfig } from '../src/config/load.js';
import { byQuery, ITEM_COLUMNS, postsOnce } from '../src/corpus/discourse-sql.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { vectorLiteral } from '../src/embedding/hash-embedder.js';
import { PACKAGE_ROOT, DEMO_FORUM_DIR } from '../src/paths.js';
import type { NodeResult } from '../src/retrieval/graph.js';
import { createRunContext, type RunContext } from '../src/wiring/context.js';
import { runRetrieval } from '../src/runs/retrieval-run.js';
import type { RunResult } from '../src/model/results.js';
import { freshDatabase } from './helpers/pg.js';

const CASE_FILES = ['questions-core.yml', 'questions-more.yml'].map((f) => join(PACKAGE_ROOT, 'cases', 'demo', f));

/** Questions that test the edges: no content word (zero vector, no lexeme), quotes, backslashes, SQL. */
const ODD = ['Why?', '🙂', "wax'); DROP TABLE posts; --", 'C:\\shoes\\ "quoted" it\'s', 'suede suede suede'];

function withOdd(cases: Located<Case>[]): Located<Case>[] {
  const odd = ODD.map((question, i) => ({
    ...cases[0]!,
    value: { ...cases[0]!.value, id: `odd-${i}`, question },
  }));
  // Repeated questions (with new ids) share one retrieval in a batch.
  const again = cases.slice(0, 5).map((c) => ({ ...c, value: { ...c.value, id: `${c.value.id}-again` } }));
  return [...cases, ...odd, ...again];
}

/** A node's list without its timing (the only part that may differ between the paths). */
function lists(nodes: Record<string, NodeResult>) {
  return Object.fromEntries(
    Object.entries(nodes).map(([name, { latencyMs, ...rest }]) => (void latencyMs, [name, rest])),
  );
}

/** Records without their timings. */
function withoutLatency(result: RunResult) {
  return result.cases.map((r) => ({
    ...r,
    retrieval: Object.fromEntries(
      Object.entries(r.retrieval).map(([name, { latency_ms, ...rest }]) => (void latency_ms, [name, rest])),
    ),
  }));
}

/** Every case through graph.run, then all of them through one batch: the same lists. */
async function expectSameLists(ctx: RunContext, questions: readonly string[]): Promise<void> {
  const single = [];
  for (const q of questions) single.push(lists(await ctx.graph.run(q)));
  const batch = await ctx.graph.prepareBatch(questions);
  const batched = [];
  for (const [i, q] of questions.entries())
    batched.push(lists(await ctx.graph.completePrepared(q, batch.prepared[i]!)));
  expect(batched).toEqual(single);
  // Not vacuous: most questions find something.
  expect(single.filter((n) => Object.values(n).some((l) => l.items.length > 0)).length).toBeGreaterThan(
    questions.length / 2,
  );
}

/** runRetrieval with batches of a few questions (several batches, a latency sample) against the per-query run. */
async function expectSameRun(ctx: RunContext, cases: Located<Case>[]): Promise<void> {
  const perQuery = await runRetrieval(ctx, cases, [], undefined, { batch: false });
  const batched = await runRetrieval(ctx, cases, [], undefined, { batchSize: 7, latencySample: 3 });
  expect(withoutLatency(batched)).toEqual(withoutLatency(perQuery));
  const b = batched.summary.retrieval_batch!;
  // Every case is served by a batch; the sample is the last 3 distinct questions run again per
  // query once the cases are done, and their per-query lists are those the batches gave.
  const distinct = [...new Set(cases.map((c) => c.value.question))];
  expect(b.latency_sample).toBe(3);
  expect(b.latency_sample_ms?.map((t) => t.question)).toEqual(distinct.slice(-3));
  expect(b.latency_sample_ms?.map((t) => ('nodes' in t ? t.same_lists : t.error))).toEqual([true, true, true]);
  expect(b.batched).toBe(cases.length);
  expect(b.distinct_questions).toBe(distinct.length);
  expect(b.batches).toBeGreaterThan(1);
  expect(b.fallbacks).toBe(0);
  expect(perQuery.summary.retrieval_batch).toBeUndefined();
}

const demoConfig = (file?: string): LoadedConfig =>
  loadConfig(file ? join(PACKAGE_ROOT, 'configs', file) : undefined, {}, [
    { path: ['cache_dir'], flag: '--cache-dir', value: join(PACKAGE_ROOT, '.cache', 'ragaudit') },
  ]);

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

describe('batched semantic statements on the embedded demo: both shapes', () => {
  let ctx: RunContext;
  beforeAll(async () => {
    ctx = await createRunContext(demoConfig(), { env: {}, cwd: PACKAGE_ROOT });
  }, 120_000);
  afterAll(async () => ctx?.close());

  it('lateral (one query per vector) and shared (candidates once) return the single query lists', async () => {
    const questions = [
      ...loadCases(CASE_FILES)
        .map((c) => c.value.question)
        .slice(0, 40),
      'suede suede suede',
      'Why?',
    ];
    const vectors = (await ctx.embedder.embed(questions)).map(vectorLiteral);
    for (const maxPostsCount of [null, 12]) {
      for (const operator of ['<=>', '<#>'] as const) {
        const base = { dimensions: 384, modelId: 1, strategyId: 1, limit: 25, operator, maxPostsCount };
        const posts = [];
        const topics = [];
        for (const vector of vectors) {
          posts.push(await ctx.profile.semanticPosts({ ...base, vector }));
          topics.push(await ctx.profile.semanticTopics({ ...base, vector }));
        }
        for (const shape of ['lateral', 'shared'] as const) {
          expect(await ctx.profile.semanticPostsBatch({ ...base, vectors, shape })).toEqual(posts);
          expect(await ctx.profile.semanticTopicsBatch({ ...base, vectors, shape })).toEqual(topics);
        }
      }
    }
  }, 120_000);

  it('ann mode: the batch returns the single ANN query lists (few candidates, so visibility leaves short lists)', async () => {
    const questions = [
      ...loadCases(CASE_FILES)
        .map((c) => c.value.question)
        .slice(0, 30),
      'suede suede suede',
    ];
    const vectors = (await ctx.embedder.embed(questions)).map(vectorLiteral);
    let short = 0;
    for (const candidates of [20, 200]) {
      for (const operator of ['<=>', '<#>'] as const) {
        for (const maxPostsCount of [null, 12]) {
          const base = { dimensions: 384, modelId: 1, strategyId: 1, limit: 25, operator, maxPostsCount };
          // 20 candidates, then a second pass of 24: never 25 places filled, so short lists go through both passes.
          const q = {
            ...base,
            search: 'ann' as const,
            candidates,
            ...(candidates === 20 ? { maxCandidates: 24 } : {}),
          };
          const posts = [];
          const topics = [];
          for (const vector of vectors) {
            posts.push(await ctx.profile.semanticPosts({ ...q, vector }));
            topics.push(await ctx.profile.semanticTopics({ ...q, vector }));
          }
          short += posts.filter((l) => l.length < 25).length;
          expect(await ctx.profile.semanticPostsBatch({ ...q, vectors })).toEqual(posts);
          expect(await ctx.profile.semanticTopicsBatch({ ...q, vectors })).toEqual(topics);
        }
      }
    }
    // Not vacuous: 20 (then 24) candidates leave fewer than 25 public posts.
    expect(short).toBeGreaterThan(0);
  }, 120_000);
});

describe('batched retrieval on the embedded demo: ann channels with index recall', () => {
  let ctx: RunContext;
  let cases: Located<Case>[];
  beforeAll(async () => {
    const loaded = demoConfig();
    const config = {
      ...loaded.config,
      retrieval: {
        ...loaded.config.retrieval,
        index_recall: true,
        channels: loaded.config.retrieval.channels.map((ch) =>
          ch.kind === 'semantic' ? { ...ch, search: 'ann' as const, ann_candidates: 30 } : ch,
        ),
      },
    };
    ctx = await createRunContext({ ...loaded, config }, { env: {}, cwd: PACKAGE_ROOT });
    cases = withOdd(loadCases(CASE_FILES)).slice(0, 40);
  }, 120_000);
  afterAll(async () => ctx?.close());

  it('every node of every case gets the per-query lists, short-list notes and index recall lists', async () => {
    const questions = cases.map((c) => c.value.question);
    await expectSameLists(ctx, questions);
    const nodes = await ctx.graph.run(questions[0]!);
    const semantic = Object.values(nodes).filter((n) => n.kind === 'semantic');
    expect(semantic.length).toBeGreaterThan(0);
    for (const n of semantic) expect(n.indexRecall?.exact.length).toBeGreaterThan(0);
  }, 120_000);

  it('a batched run writes the per-query run records (ann_short, index recall metrics)', async () => {
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

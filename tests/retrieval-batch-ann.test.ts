/**
 * Batched semantic statements on the embedded demo give exactly the single queries' lists: both
 * statement shapes (lateral, shared) in exact mode, and ANN mode with short lists, second passes
 * and index recall (apart from tests/retrieval-batch.test.ts so the two files run side by side).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Located } from '../src/cases/load.js';
import { loadCases } from '../src/cases/load.js';
import type { Case } from '../src/cases/schema.js';
import { vectorLiteral } from '../src/embedding/hash-embedder.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { createRunContext, type RunContext } from '../src/wiring/context.js';
import { CASE_FILES, demoConfig, expectSameLists, expectSameRun, withOdd } from './helpers/batch-lists.js';

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

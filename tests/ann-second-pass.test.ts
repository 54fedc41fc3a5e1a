/**
 * The `ann` second pass on a real PostgreSQL with pgvector 0.8 and discourse-ai's partial HNSW
 * indexes: on a forum where the vectors nearest a question are nearly all invisible (private
 * messages, a restricted category), a short first list is asked again with more candidates, the
 * index scanning iteratively (hnsw.iterative_scan = relaxed_order) inside the statement's own
 * READ ONLY transaction; an older pgvector gets the second pass with ef_search raised instead,
 * bounded at 1,000; a list still short after the bounded second pass is still said.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../src/config/schema.js';
import { ANN_MAX_CANDIDATES, secondPass, secondPassCandidates } from '../src/corpus/ann-passes.js';
import { DiscourseProfile, type SemanticQuery } from '../src/corpus/discourse.js';
import type { RetrievedItem } from '../src/model/retrieved-item.js';
import { planScans } from '../src/doctor/index-checks.js';
import type { Forum, ForumTopic } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { connectPostgres, type QueryOptions, type SqlClient } from '../src/db/sql-client.js';
import { HashEmbedder } from '../src/embedding/hash-embedder.js';
import { annShortLines } from '../src/reports/ann-short.js';
import { RetrievalGraph } from '../src/retrieval/graph.js';
import { retrievalRecord } from '../src/runs/retrieve-case.js';
import { CaseSchema } from '../src/cases/schema.js';
import { freshDatabase } from './helpers/pg.js';

const embedder = new HashEmbedder(64);
const QUESTION = 'How do I bring faded suede colour back?';
const EXTRA = ['brush', 'spray', 'sun', 'shoe', 'boot', 'dye', 'cloth', 'steam', 'water', 'nap', 'eraser', 'heel'];

/** One-post topics: the question's own words in 300 invisible ones (private messages, a restricted category), 24 public ones about suede care. */
function crowdedForum(): Forum {
  const topics: ForumTopic[] = [];
  const topic = (id: number, title: string, raw: string, extra: Partial<ForumTopic> = {}): ForumTopic => ({
    id,
    title,
    slug: `t-${id}`,
    category: 'care',
    tags: [],
    archetype: 'regular',
    visible: true,
    deleted: false,
    posts: [{ id: id * 1000 + 1, n: 1, user: `u${id % 7}`, raw, hidden: false, deleted: false, post_type: 1 }],
    ...extra,
  });
  for (let i = 0; i < 300; i++) {
    const [a, b] = [EXTRA[i % EXTRA.length]!, EXTRA[Math.floor(i / EXTRA.length) % EXTRA.length]!];
    const raw = `Bring faded suede colour back: ${a} and ${b}, note ${i}.`;
    topics.push(
      i % 2
        ? topic(100 + i, 'Faded suede colour back', raw, { archetype: 'private_message' })
        : topic(100 + i, 'Faded suede colour back', raw, { category: 'staff' }),
    );
  }
  for (let i = 0; i < 24; i++)
    topics.push(
      topic(
        1000 + i,
        `Suede care ${EXTRA[i % EXTRA.length]}`,
        `Suede care with a ${EXTRA[i % EXTRA.length]}, tip ${i}.`,
      ),
    );
  return {
    categories: [
      { id: 1, name: 'Care', slug: 'care', read_restricted: false },
      { id: 2, name: 'Staff', slug: 'staff', read_restricted: true },
    ],
    topics,
  };
}

const INDEXES = `
CREATE INDEX ai_posts_embeddings_1_1_search ON ai_posts_embeddings
  USING hnsw ((embeddings::halfvec(64)) halfvec_cosine_ops) WHERE model_id = 1 AND strategy_id = 1;
CREATE INDEX ai_topics_embeddings_1_1_search ON ai_topics_embeddings
  USING hnsw ((embeddings::halfvec(64)) halfvec_cosine_ops) WHERE model_id = 1 AND strategy_id = 1;`;

/** A client that records each statement's settings (what the second pass set for its transaction). */
function recording(db: SqlClient): { client: SqlClient; settings: (readonly (readonly [string, string])[])[] } {
  const settings: (readonly (readonly [string, string])[])[] = [];
  return {
    settings,
    client: {
      kind: db.kind,
      label: db.label,
      query: <T extends object>(sql: string, params?: unknown[], opts?: QueryOptions) => {
        if (opts?.settings?.length) settings.push(opts.settings);
        return db.query<T>(sql, params, opts);
      },
      close: () => db.close(),
    },
  };
}

const ids = (items: RetrievedItem[]) => items.map((i) => i.post_id);

describe('the ann second pass on PostgreSQL (pgvector 0.8)', () => {
  let db: SqlClient;
  let vector: string;
  const base = { dimensions: 64, modelId: 1, strategyId: 1, limit: 10 };
  beforeAll(async () => {
    const fresh = await freshDatabase('ann2');
    await loadForum(fresh.writer, crowdedForum(), { embedder });
    await fresh.writer.script(INDEXES);
    // A small table: without this the planner rightly reads it whole and the HNSW path is never taken.
    const name = new URL(fresh.url).pathname.slice(1);
    await fresh.writer.script(
      `ALTER DATABASE ${name} SET enable_seqscan = off; ALTER DATABASE ${name} SET enable_sort = off; ANALYZE;`,
    );
    await fresh.close();
    db = await connectPostgres(fresh.url);
    vector = `[${(await embedder.embed([QUESTION]))[0]!.join(',')}]`;
  });
  afterAll(() => db?.close());

  it('the server has iterative scans, and the statement is planned over the HNSW index', async () => {
    const profile = new DiscourseProfile(db);
    expect(await profile.iterativeScans()).toBe(true);
    const plan = await planScans(profile.semanticStatement('post', { ...base, vector, search: 'ann' }));
    expect(plan.map((s) => s.index)).toContain('ai_posts_embeddings_1_1_search');
  });

  // Fails before this change: the first pass's 100 nearest vectors are all invisible, so both grains returned 0 of 10.
  it('a forum whose nearest vectors are nearly all invisible returns full lists, the exact ones, single and batched', async () => {
    const { client, settings } = recording(db);
    const profile = new DiscourseProfile(client);
    for (const grain of ['post', 'topic'] as const) {
      const search = (q: SemanticQuery) => (grain === 'post' ? profile.semanticPosts(q) : profile.semanticTopics(q));
      const exact = await search({ ...base, vector, search: 'exact' });
      expect(exact).toHaveLength(10);
      // The first pass alone (no room for a second): the nearest candidates are all invisible.
      expect(await search({ ...base, vector, search: 'ann', maxCandidates: 100 })).toHaveLength(0);
      // A channel's own small ef_search: only the iterative scan lets the index hand up more than 40 rows.
      const ann = await search({ ...base, vector, search: 'ann', efSearch: 40 });
      expect(ids(ann)).toEqual(ids(exact));
      const batch = await (grain === 'post'
        ? profile.semanticPostsBatch({ ...base, search: 'ann', efSearch: 40, vectors: [vector, vector] })
        : profile.semanticTopicsBatch({ ...base, search: 'ann', efSearch: 40, vectors: [vector, vector] }));
      expect(batch).toEqual([ann, ann]);
    }
    // The second pass asked ten times the first pass's 100 candidates, scanning iteratively.
    const second = settings.filter((s) => s.some(([n]) => n === 'hnsw.iterative_scan'));
    expect(second.length).toBeGreaterThan(0);
    for (const s of second)
      expect(Object.fromEntries(s)).toEqual({
        'hnsw.ef_search': '40',
        'hnsw.iterative_scan': 'relaxed_order',
        'ivfflat.iterative_scan': 'relaxed_order',
        'hnsw.max_scan_tuples': '20000',
      });
    // The settings were the statement's own: the session keeps pgvector's defaults.
    const [row] = await db.query<{ v: string }>('SELECT current_setting($1) AS v', ['hnsw.iterative_scan']);
    expect(row?.v).toBe('off');
  });

  it('without iterative scans the index stops at ef_search: the 0.8 path is what fills the list', async () => {
    const profile = new DiscourseProfile(db);
    const asked = { ...base, vector, search: 'ann' as const, candidates: 1000, efSearch: 40, maxCandidates: 1000 };
    // 1,000 candidates asked but ef_search 40 and no iterative scan: 40 rows, all invisible.
    expect(await profile.semanticPosts(asked)).toHaveLength(0);
    expect(await profile.semanticPosts({ ...asked, iterative: true })).toHaveLength(10);
  });

  it('an older pgvector gets the second pass with ef_search raised, bounded at 1,000, and no iterative setting', async () => {
    const { client, settings } = recording(db);
    const profile = new DiscourseProfile(client, { pgvector: '0.7.4' });
    expect(await profile.iterativeScans()).toBe(false);
    const exact = await profile.semanticPosts({ ...base, vector, search: 'exact' });
    const ann = await profile.semanticPosts({ ...base, vector, search: 'ann', efSearch: 40 });
    expect(ids(ann)).toEqual(ids(exact));
    expect(settings.map((s) => Object.fromEntries(s))).toEqual([
      { 'hnsw.ef_search': '40' },
      { 'hnsw.ef_search': '1000' },
    ]);
    // The bounds, by hand: ten times the first pass (100 → 1,000), within 10,000 with iterative
    // scans, within ef_search's 1,000 without; a bound no larger than the first pass means no second pass.
    expect(secondPassCandidates({ limit: 10 }, true)).toBe(1000);
    expect(secondPassCandidates({ limit: 10, candidates: 2000 }, true)).toBe(ANN_MAX_CANDIDATES);
    expect(secondPassCandidates({ limit: 10, candidates: 2000 }, false)).toBe(1000);
    expect(secondPass({ limit: 10, candidates: 1000 }, false)).toBeUndefined();
    expect(secondPass({ limit: 10, candidates: 4, maxCandidates: 4 }, true)).toBeUndefined();
  });

  it('a list still short after the bounded second pass is said on the node and in the short-list line', async () => {
    const config = ConfigSchema.parse({
      embedder: { dimensions: 64 },
      retrieval: {
        top_k: 10,
        channels: [{ name: 'sem', kind: 'semantic', grain: 'post', ann_candidates: 4, ann_max_candidates: 40 }],
      },
    });
    const graph = new RetrievalGraph(config, { profile: new DiscourseProfile(db), embedder });
    const c = CaseSchema.parse({ id: 'c', question: QUESTION, expected_topic_ids: [1000] });
    const nodes = await graph.run(c.question);
    // 4 candidates, then 40: the 40 nearest vectors are all invisible.
    expect(nodes.sem!.annShort).toEqual({ returned: 0, wanted: 10 });
    expect(annShortLines([{ retrieval: retrievalRecord(c, nodes) }])).toEqual([
      'sem: 1 of 1 case returned fewer than top_k (10 wanted, 0 the fewest, 10 items short in all): visibility left fewer of the index candidates (raise ann_candidates or ann_max_candidates)',
    ]);
  });
});

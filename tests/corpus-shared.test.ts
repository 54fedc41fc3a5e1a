/**
 * One suite, two SqlClients: a throwaway PostgreSQL server (started by the global setup) and
 * PGlite. Retrieval, visibility and read-only behaviour must be the same on both. Vector SQL
 * runs on PGlite only (pgvector is not packaged for the server here).
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { pgliteWriter } from '../src/demo/demo-db.js';
import { DiscourseProfile } from '../src/corpus/discourse.js';
import { readForum } from '../src/demo/forum.js';
import { STRATEGIES } from '../src/corpus/embedding-text.js';
import { loadForum } from '../src/demo/load-forum.js';
import { connectPostgres, pgliteClient, type SqlClient } from '../src/db/sql-client.js';
import { DatabaseError } from '../src/errors.js';
import { HashEmbedder, vectorLiteral } from '../src/embedding/hash-embedder.js';
import { freshDatabase } from './helpers/pg.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'forum');
const forum = readForum(FIXTURE);
const embedder = new HashEmbedder(64);

/** Every post id of the fixture that must never come back (see tests/fixtures/forum/topics.yml). */
const NEVER = [10003, 10004, 10005, 12001, 13001, 14001];

const clients: Record<string, () => Promise<{ db: SqlClient; close: () => Promise<void> }>> = {
  postgres: async () => {
    const fresh = await freshDatabase('shared');
    await loadForum(fresh.writer, forum);
    await fresh.close();
    const db = await connectPostgres(fresh.url, { statementTimeoutMs: 500 });
    return { db, close: () => db.close() };
  },
  pglite: async () => {
    const raw = await PGlite.create({ extensions: { vector } });
    await loadForum(pgliteWriter(raw), forum, { embedder });
    const db = pgliteClient(raw);
    return { db, close: () => db.close() };
  },
};

describe.each(Object.keys(clients))('discourse profile on %s', (kind) => {
  let db: SqlClient;
  let close: () => Promise<void>;
  let profile: DiscourseProfile;
  beforeAll(async () => {
    ({ db, close } = await clients[kind]!());
    profile = new DiscourseProfile(db);
  });
  afterAll(async () => close());

  it('keyword search over posts returns only public posts, best first', async () => {
    const items = await profile.keywordPosts({ text: 'faded suede colour', config: 'english', limit: 25 });
    const ids = items.map((i) => i.post_id);
    expect(ids[0]).toBe(10001);
    expect(ids).toEqual(expect.arrayContaining([10001, 10002]));
    for (const id of NEVER) expect(ids).not.toContain(id);
    expect(items[0]).toMatchObject({
      topic_id: 10,
      post_number: 1,
      title: 'Reviving faded suede',
      slug: 'reviving-faded-suede',
      category: 'Care',
      posts_count: 5,
    });
  });

  it('keyword search over topics never returns private messages, restricted or unlisted topics', async () => {
    const items = await profile.keywordTopics({ text: 'suede', config: 'english', limit: 25 });
    expect(items.map((i) => i.topic_id)).toEqual([10]);
    expect(items[0]!.post_number).toBe(1);
  });

  it('knows which posts and topics are public (citation validity, golden checks)', async () => {
    expect([...(await profile.publicPostIds([10001, 11002, 99999, ...NEVER]))].sort()).toEqual([10001, 11002]);
    expect([...(await profile.publicTopicIds([10, 11, 12, 13, 14, 15, 77]))].sort()).toEqual([10, 11, 15]);
  });

  it('counts a post retrieval returned as checked: a citation of it asks the database nothing more', async () => {
    // A profile of its own over a client that counts statements (the shared one already checked some posts).
    let statements = 0;
    const counted: SqlClient = {
      kind: db.kind,
      label: db.label,
      query: (sql, params, opts) => {
        statements++;
        return db.query(sql, params, opts);
      },
      close: async () => undefined,
    };
    const fresh = new DiscourseProfile(counted);
    const items = await fresh.keywordPosts({ text: 'faded suede colour', config: 'english', limit: 25 });
    const [batched] = await fresh.keywordTopicsBatch({ texts: ['wax'], config: 'english', limit: 25 });
    const retrieved = [...items, ...batched!].map((i) => i.post_id);
    expect(retrieved.length).toBeGreaterThan(2);
    const before = statements;
    expect([...(await fresh.publicPostIds(retrieved))].sort()).toEqual([...new Set(retrieved)].sort());
    expect(statements).toBe(before);
    // A post no statement returned is still asked, once, and a non-public one is still refused.
    expect([...(await fresh.publicPostIds([...retrieved, 11002, NEVER[0]!]))]).toContain(11002);
    expect(await fresh.publicPostIds([NEVER[0]!])).toEqual(new Set());
    expect(statements).toBe(before + 1);
  });

  it('size routing drops topics with more posts than the limit', async () => {
    const all = await profile.keywordTopics({ text: 'suede wax resole', config: 'english', limit: 25 });
    const small = await profile.keywordTopics({
      text: 'suede wax resole',
      config: 'english',
      limit: 25,
      maxPostsCount: 3,
    });
    expect(all.map((i) => i.topic_id).sort()).toEqual([10, 11, 15]);
    expect(small.map((i) => i.topic_id).sort()).toEqual([11, 15]);
  });

  it('runs every query read-only: writes are refused and nothing changes', async () => {
    await expect(db.query(`INSERT INTO categories (id, name, slug) VALUES (9, 'x', 'x')`)).rejects.toThrow(/read-only/);
    await expect(db.query('DELETE FROM posts')).rejects.toThrow(/read-only/);
    const rows = await db.query<{ n: string }>('SELECT count(*) AS n FROM posts');
    expect(Number(rows[0]!.n)).toBe(13);
  });

  it('passes the question as a parameter: SQL in it is just text', async () => {
    const items = await profile.keywordPosts({ text: "wax'); DROP TABLE posts; --", config: 'english', limit: 5 });
    expect(items.map((i) => i.topic_id)).toContain(11);
    expect(Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM posts'))[0]!.n)).toBe(13);
  });
});

describe('PostgreSQL server specifics', () => {
  it('ends a query at the statement timeout', async () => {
    const fresh = await freshDatabase('timeout');
    await fresh.close();
    const db = await connectPostgres(fresh.url, { statementTimeoutMs: 200 });
    try {
      await expect(db.query('SELECT pg_sleep(3)')).rejects.toThrow(/statement timeout/);
    } finally {
      await db.close();
    }
  });

  it('an unreachable server is a DatabaseError naming host:port and never the password', async () => {
    const err = await connectPostgres('postgres://auditor:hunter2secret@127.0.0.1:1/forum').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseError);
    expect((err as Error).message).toMatch(/cannot connect to PostgreSQL at postgres:\/\/127\.0\.0\.1:1\/forum/);
    expect((err as Error).message).not.toContain('hunter2secret');
  });
});

describe('semantic channels (PGlite with pgvector)', () => {
  let raw: PGlite;
  let profile: DiscourseProfile;
  beforeAll(async () => {
    raw = await PGlite.create({ extensions: { vector } });
    await loadForum(pgliteWriter(raw), forum, { embedder });
    profile = new DiscourseProfile(pgliteClient(raw, { owned: false }));
  });
  afterAll(async () => raw.close());

  const query = async (text: string, strategyId: number) => ({
    vector: vectorLiteral((await embedder.embed([text]))[0]!),
    dimensions: 64,
    modelId: 1,
    strategyId,
    limit: 25,
  });

  it('ranks the nearest public post first and never returns hidden kinds', async () => {
    const items = await profile.semanticPosts(await query('mirror shine hard wax toe caps', STRATEGIES.native));
    expect(items[0]!.topic_id).toBe(11);
    for (const id of NEVER) expect(items.map((i) => i.post_id)).not.toContain(id);
    expect(items.length).toBe(7);
  });

  it('reads the strategy a channel names: enriched vectors differ from native ones', async () => {
    const native = await raw.query<{ d: number }>(
      `SELECT (a.embeddings <=> b.embeddings) AS d FROM ai_posts_embeddings a JOIN ai_posts_embeddings b USING (post_id, model_id)
       WHERE a.strategy_id = 1 AND b.strategy_id = 2 AND post_id = 10002`,
    );
    expect(native.rows[0]!.d).toBeGreaterThan(0.01);
    const missing = await profile.semanticPosts({ ...(await query('wax', 1)), strategyId: 3 });
    expect(missing).toEqual([]);
  });

  it('topic channel returns topics represented by their first post', async () => {
    const items = await profile.semanticTopics(await query('resoling Goodyear welted boots', STRATEGIES.native));
    expect(items[0]).toMatchObject({ topic_id: 15, post_number: 1 });
    expect(items.map((i) => i.topic_id).sort()).toEqual([10, 11, 15]);
  });
});

describe('text-search configuration', () => {
  it('french stems French words (cirer ~ cirées) where english does not', async () => {
    const fr = readForum(join(import.meta.dirname, 'fixtures', 'forum-fr'));
    const raw = await PGlite.create();
    await loadForum(pgliteWriter(raw), fr, { textSearchConfig: 'french' });
    const profile = new DiscourseProfile(pgliteClient(raw));
    try {
      expect((await profile.keywordPosts({ text: 'cirer', config: 'french', limit: 5 })).map((i) => i.post_id)).toEqual(
        [20001],
      );
      expect(await profile.keywordPosts({ text: 'cirer', config: 'english', limit: 5 })).toEqual([]);
    } finally {
      await profile.db.close();
    }
  });
});

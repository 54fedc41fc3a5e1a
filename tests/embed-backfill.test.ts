/**
 * `ragaudit embed`'s engine on real PostgreSQL servers with pgvector: vectors for the fixture
 * forum's public posts and topics, per strategy, into a separate target; never into the source;
 * resumable after a crash; an edited post embedded again. Counts read off tests/fixtures/forum by
 * hand: 7 public posts and 3 public topics (see tests/doctor.test.ts).
 */
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillEmbeddings, type BackfillOptions } from '../src/corpus/embed-backfill.js';
import { postEmbeddingText } from '../src/corpus/embedding-text.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { connectPostgres, type SqlClient } from '../src/db/sql-client.js';
import type { Embedder } from '../src/embedding/embedder.js';
import { HashEmbedder } from '../src/embedding/hash-embedder.js';
import { InputError } from '../src/errors.js';
import { freshDatabase } from './helpers/pg.js';

const forum = readForum(join(import.meta.dirname, 'fixtures', 'forum'));
const hash = new HashEmbedder(64);

/** Counts texts embedded; fails on the call numbered `failOn` (a crash half-way). */
function counting(failOn?: number): Embedder & { calls: number; texts: number } {
  const e = {
    id: hash.id,
    offline: true,
    dimensions: 64,
    calls: 0,
    texts: 0,
    async embed(texts: string[]) {
      e.calls++;
      if (e.calls === failOn) throw new Error('embedding server went away');
      e.texts += texts.length;
      return hash.embed(texts);
    },
  };
  return e;
}

async function rows(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

describe('embedding backfill into a side database', () => {
  let sourceUrl: string;
  let source: SqlClient;
  let writeSource: (sql: string) => Promise<void>;
  let closeWriter: () => Promise<void>;
  beforeAll(async () => {
    const fresh = await freshDatabase('embed_src');
    await loadForum(fresh.writer, forum);
    sourceUrl = fresh.url;
    writeSource = (sql) => fresh.writer.script(sql);
    closeWriter = fresh.close;
    source = await connectPostgres(sourceUrl);
  });
  afterAll(async () => {
    await source?.close();
    await closeWriter?.();
  });

  const base = (targetUrl: string, extra: Partial<BackfillOptions> = {}): BackfillOptions => ({
    source,
    target: { url: targetUrl },
    embedder: hash,
    model_id: 7,
    strategies: [1, 2],
    ...extra,
  });

  it('refuses to write into the source database; a schema of its own there is allowed', async () => {
    const same = backfillEmbeddings(base(sourceUrl));
    await expect(same).rejects.toBeInstanceOf(InputError);
    await expect(backfillEmbeddings(base(sourceUrl))).rejects.toThrow(/is the source database itself/);
    const report = await backfillEmbeddings(base(sourceUrl, { target: { url: sourceUrl, schema: 'ragaudit_side' } }));
    expect(report.tables.map((t) => [t.table, t.strategy_id, t.written])).toEqual([
      ['ai_posts_embeddings', 1, 7],
      ['ai_topics_embeddings', 1, 3],
      ['ai_posts_embeddings', 2, 7],
      ['ai_topics_embeddings', 2, 3],
    ]);
    // The forum's own schema got no table.
    expect(await rows(sourceUrl, "SELECT to_regclass('public.ai_posts_embeddings') IS NULL AS none")).toEqual([
      { none: true },
    ]);
  });

  it("refuses PostgreSQL's own schemas before connecting, and creates nothing there", async () => {
    // Port 1 has no server: an InputError (not a DatabaseError) shows the check came first.
    for (const schema of ['information_schema', 'pg_catalog', 'pg_toast', 'pg_temp_1'])
      await expect(
        backfillEmbeddings(base('postgres://127.0.0.1:1/x', { target: { url: 'postgres://127.0.0.1:1/x', schema } })),
      ).rejects.toMatchObject({
        name: 'InputError',
        message: `--target-schema ${schema}: a system schema of PostgreSQL; give the vectors a schema of their own (e.g. ragaudit_vectors)`,
      });
    // On the forum's own database, information_schema was accepted and got the tables.
    await expect(
      backfillEmbeddings(base(sourceUrl, { target: { url: sourceUrl, schema: 'information_schema' } })),
    ).rejects.toBeInstanceOf(InputError);
    expect(
      await rows(sourceUrl, "SELECT to_regclass('information_schema.ai_posts_embeddings') IS NULL AS none"),
    ).toEqual([{ none: true }]);
  });

  it('fills strategies 1 and 2 with the texts each strategy defines, and resumes after a crash', async () => {
    const target = await freshDatabase('embed_dst');
    await target.close();
    const crashing = counting(3);
    await expect(backfillEmbeddings(base(target.url, { embedder: crashing, batch_size: 3 }))).rejects.toThrow(
      /went away/,
    );
    // Two batches of 3 posts were committed before the third call failed.
    expect(await rows(target.url, 'SELECT count(*)::int AS n FROM ai_posts_embeddings')).toEqual([{ n: 6 }]);

    const resumed = counting();
    const report = await backfillEmbeddings(base(target.url, { embedder: resumed, batch_size: 3 }));
    expect(report.stopped).toBe(false);
    expect(report.tables[0]).toMatchObject({ strategy_id: 1, written: 1, current: 6, total: 7 });
    // Only what was missing was embedded again: 1 post + 3 topics + 7 posts + 3 topics.
    expect(resumed.texts).toBe(14);
    const counts = await rows(
      target.url,
      `SELECT 'p' AS t, strategy_id AS s, count(*)::int AS n FROM ai_posts_embeddings WHERE model_id = 7 GROUP BY 2
       UNION ALL SELECT 't', strategy_id, count(*)::int FROM ai_topics_embeddings WHERE model_id = 7 GROUP BY 2 ORDER BY 1, 2`,
    );
    expect(counts).toEqual([
      { t: 'p', s: 1, n: 7 },
      { t: 'p', s: 2, n: 7 },
      { t: 't', s: 1, n: 3 },
      { t: 't', s: 2, n: 3 },
    ]);

    // Post 10002 replies to post 1 of topic 10: the enriched text adds the first post, then the parent (the same post).
    const topic = forum.topics.find((t) => t.id === 10)!;
    const text = postEmbeddingText(
      {
        title: topic.title,
        category: 'Care',
        tags: topic.tags,
        raw: topic.posts[1]!.raw,
        post_number: 2,
        first_raw: topic.posts[0]!.raw,
        parent_raw: topic.posts[0]!.raw,
      },
      2,
    );
    const [expected] = await hash.embed([text]);
    const [stored] = await rows(
      target.url,
      'SELECT embeddings::text AS v FROM ai_posts_embeddings WHERE model_id = 7 AND strategy_id = 2 AND post_id = 10002',
    );
    const got = JSON.parse(String(stored!.v)) as number[];
    got.forEach((x, i) => expect(x).toBeCloseTo(expected![i]!, 2));

    // Nothing changed: a third run embeds nothing. Then an edited post is embedded again (both strategies).
    const idle = counting();
    await backfillEmbeddings(base(target.url, { embedder: idle }));
    expect(idle.texts).toBe(0);
    await writeSource("UPDATE posts SET raw = raw || ' Edited: also try a suede eraser.' WHERE id = 15002");
    const again = counting();
    const after = await backfillEmbeddings(base(target.url, { embedder: again }));
    expect(again.texts).toBe(2);
    expect(after.tables.filter((t) => t.table === 'ai_posts_embeddings').map((t) => t.written)).toEqual([1, 1]);
  });

  // Fails before this change: the second run, with another model of the same size, found all
  // 7 + 3 rows "already current" (the digest covered the text only) and embedded nothing; with the
  // embedder down it said so too, never asking the server; and the target recorded no identity.
  it("another model's vectors are never current, the embedder is asked first, and the target records who wrote them", async () => {
    const target = await freshDatabase('embed_identity');
    await target.close();
    await backfillEmbeddings(base(target.url, { strategies: [1] }));
    const other = counting();
    const otherModel: Embedder = {
      ...other,
      id: 'openai:other-model@http://embed.internal',
      embed: (t) => other.embed(t),
    };
    const report = await backfillEmbeddings(base(target.url, { strategies: [1], embedder: otherModel }));
    expect(report.tables.map((t) => [t.table, t.written, t.current])).toEqual([
      ['ai_posts_embeddings', 7, 0],
      ['ai_topics_embeddings', 3, 0],
    ]);
    expect(other.texts).toBe(10);
    // The server address is not part of the identity (moving a server does not re-embed).
    expect(
      await rows(
        target.url,
        'SELECT table_name, model_id, strategy_id, embedder, dimensions, text_strategy FROM ragaudit_embedder_identity ORDER BY 1',
      ),
    ).toEqual([
      {
        table_name: 'ai_posts_embeddings',
        model_id: 7,
        strategy_id: 1,
        embedder: 'openai:other-model',
        dimensions: 64,
        text_strategy: 'post strategy 1',
      },
      {
        table_name: 'ai_topics_embeddings',
        model_id: 7,
        strategy_id: 1,
        embedder: 'openai:other-model',
        dimensions: 64,
        text_strategy: 'topic: header and first post',
      },
    ]);

    // The embedder is down: the command stops before it calls anything current.
    const down = counting();
    let progressed = false;
    const downModel: Embedder = {
      ...down,
      embed: (t) => down.embed(t),
      preflight: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:8081')),
    };
    await expect(
      backfillEmbeddings(
        base(target.url, { strategies: [1], embedder: downModel, onProgress: (d) => (progressed ||= d > 0) }),
      ),
    ).rejects.toThrow(/the embedder offline:hash-64 cannot be used: connect ECONNREFUSED/);
    expect(progressed).toBe(false);
    expect(down.calls).toBe(0);
  });

  it('stops between batches when asked, and says so', async () => {
    const target = await freshDatabase('embed_stop');
    await target.close();
    const controller = new AbortController();
    const report = await backfillEmbeddings(
      base(target.url, {
        batch_size: 2,
        onProgress: (done) => {
          if (done >= 4) controller.abort();
        },
        signal: controller.signal,
      }),
    );
    expect(report.stopped).toBe(true);
    expect(await rows(target.url, 'SELECT count(*)::int AS n FROM ai_posts_embeddings')).toEqual([{ n: 4 }]);
  });
});

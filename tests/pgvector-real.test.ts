/**
 * pgvector on a real PostgreSQL server (built into the test cluster by `npm test`'s pretest step),
 * as production runs it: the same forum and the same stand-in vectors loaded into PostgreSQL and
 * into PGlite must give the same semantic results, item for item, and the database checks must
 * pass on both. The fixture forum's 7 public posts are counted by hand in tests/doctor.test.ts.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../src/config/schema.js';
import { pgliteWriter } from '../src/demo/demo-db.js';
import { DiscourseProfile } from '../src/corpus/discourse.js';
import { diagnose } from '../src/doctor/diagnose.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { connectPostgres, pgliteClient, type SqlClient } from '../src/db/sql-client.js';
import { HashEmbedder } from '../src/embedding/hash-embedder.js';
import { freshDatabase } from './helpers/pg.js';

const forum = readForum(join(import.meta.dirname, 'fixtures', 'forum'));
const embedder = new HashEmbedder(64);
const QUESTIONS = ['How do I bring faded suede back?', 'mirror shine on toe caps', 'how often can boots be resoled'];

describe('pgvector on a real PostgreSQL server', () => {
  let real: SqlClient;
  let lite: PGlite;
  let liteDb: SqlClient;
  beforeAll(async () => {
    const fresh = await freshDatabase('pgvector');
    await loadForum(fresh.writer, forum, { embedder });
    await fresh.close();
    real = await connectPostgres(fresh.url);
    lite = await PGlite.create({ extensions: { vector } });
    await loadForum(pgliteWriter(lite), forum, { embedder });
    liteDb = pgliteClient(lite, { owned: false });
  });
  afterAll(async () => {
    await real?.close();
    await lite?.close();
  });

  it('the extension is really there', async () => {
    const rows = await real.query<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'");
    expect(rows[0]?.v).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it.each(['post', 'topic'] as const)('semantic %s search gives the same items and scores as PGlite', async (grain) => {
    for (const question of QUESTIONS) {
      const [v] = await embedder.embed([question]);
      const q = { vector: `[${v!.join(',')}]`, dimensions: 64, modelId: 1, strategyId: 1, limit: 10 };
      const ask = (db: SqlClient) => {
        const p = new DiscourseProfile(db);
        return grain === 'post' ? p.semanticPosts(q) : p.semanticTopics(q);
      };
      const [a, b] = [await ask(real), await ask(liteDb)];
      expect(a.length).toBeGreaterThan(0);
      expect(a.map((i) => i.post_id)).toEqual(b.map((i) => i.post_id));
      // halfvec arithmetic is the same code on both; allow only float printing differences.
      a.forEach((item, i) => expect(item.score).toBeCloseTo(b[i]!.score, 6));
      // Only public posts: the fixture's hidden, deleted, whisper, private and staff posts never appear.
      expect(a.every((i) => [10, 11, 15].includes(i.topic_id))).toBe(true);
    }
  });

  it('the database checks pass for a semantic channel, with the pair covering every public post', async () => {
    const config = ConfigSchema.parse({
      embedder: { dimensions: 64 },
      retrieval: { channels: [{ name: 'sem', kind: 'semantic', grain: 'post' }] },
    });
    const checks = await diagnose(new DiscourseProfile(real), config);
    const fails = checks.filter((c) => c.mark === 'fail');
    expect(fails).toEqual([]);
    expect(checks.find((c) => c.id === 'embeddings:post')?.details?.[0]).toMatch(
      /64 dimensions, 100\.0 % of 7 public posts$/,
    );
    expect(checks.find((c) => c.id === 'channel:sem')?.sentence).toMatch(/answered a stored vector with 7 of 25 items/);
  });
});

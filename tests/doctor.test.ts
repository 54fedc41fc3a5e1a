/**
 * ragaudit's database checks in plain sentences, on a real PostgreSQL server (no pgvector there)
 * and on PGlite with pgvector. Expected counts are read off tests/fixtures/forum by hand: 6 topics
 * (10–15), 13 posts; public are topics 10, 11 and 15 (12 is a private message, 13 is in the
 * read-restricted staff category, 14 is unlisted) and their 7 regular, visible, undeleted posts
 * (topic 10 keeps posts 1–2 of 5: 3 hidden, 4 deleted, 5 a whisper).
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Located } from '../src/cases/load.js';
import { CaseSchema, type Case } from '../src/cases/schema.js';
import { ConfigSchema, type Config } from '../src/config/schema.js';
import { pgliteWriter } from '../src/demo/demo-db.js';
import { DiscourseProfile } from '../src/corpus/discourse.js';
import { diagnose, worstMark, type DoctorCheck } from '../src/doctor/diagnose.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { connectPostgres, pgliteClient, type SqlClient } from '../src/db/sql-client.js';
import { HashEmbedder } from '../src/embedding/hash-embedder.js';
import { freshDatabase } from './helpers/pg.js';

const forum = readForum(join(import.meta.dirname, 'fixtures', 'forum'));

function config(raw: { channels: unknown[]; text_search_config?: string; dimensions?: number }): Config {
  return ConfigSchema.parse({
    database: { text_search_config: raw.text_search_config ?? 'english' },
    embedder: { dimensions: raw.dimensions ?? 64 },
    retrieval: { channels: raw.channels },
  });
}

const KEYWORD = { name: 'kw', kind: 'keyword', grain: 'topic' };
const SEM_POSTS = { name: 'sem', kind: 'semantic', grain: 'post' };

function byId(checks: DoctorCheck[], id: string): DoctorCheck {
  const c = checks.find((x) => x.id === id);
  expect(c, `check ${id} in ${checks.map((x) => x.id).join(', ')}`).toBeDefined();
  return c!;
}

function located(value: unknown, line: number): Located<Case> {
  return { value: CaseSchema.parse(value), file: 'cases/forum.yml', line };
}

describe('doctor on PostgreSQL without pgvector', () => {
  let url: string;
  let db: SqlClient;
  beforeAll(async () => {
    const fresh = await freshDatabase('doctor');
    await loadForum(fresh.writer, forum);
    await fresh.close();
    url = fresh.url;
    db = await connectPostgres(url);
  });
  afterAll(() => db?.close());

  it('keyword channels: passes what is there, counts public content, warns about a superuser', async () => {
    const checks = await diagnose(new DiscourseProfile(db), config({ channels: [KEYWORD] }));
    expect(byId(checks, 'server').mark).toBe('pass');
    expect(byId(checks, 'server').sentence).toMatch(/^PostgreSQL \d+/);
    expect(byId(checks, 'tables').mark).toBe('pass');
    expect(byId(checks, 'text_search').mark).toBe('pass');
    // Not installed, and no semantic channel needs it: a warning, not a failure.
    expect(byId(checks, 'pgvector')).toMatchObject({ mark: 'warn' });
    expect(byId(checks, 'visibility').sentence).toBe(
      '3 of 6 topics and 7 of 13 posts are public; only public content is ever retrieved or cited.',
    );
    const kw = byId(checks, 'channel:kw');
    expect(kw.mark).toBe('pass');
    expect(kw.sentence).toMatch(
      /^Channel kw \(keyword, topic\) answered the title "Reviving faded suede" with 1 of 25 items in [\d.]+ ms\.$/,
    );
    expect(byId(checks, 'preflight').mark).toBe('pass');
    // The shared test server's role is a superuser.
    expect(byId(checks, 'role')).toMatchObject({ mark: 'warn' });
    expect(byId(checks, 'role').sentence).toMatch(/is a superuser/);
    expect(worstMark(checks)).toBe('warn');
  });

  it('a semantic channel without pgvector fails, and is not tried', async () => {
    const checks = await diagnose(new DiscourseProfile(db), config({ channels: [SEM_POSTS] }));
    expect(byId(checks, 'tables')).toMatchObject({ mark: 'fail', details: ['table ai_posts_embeddings is missing'] });
    expect(byId(checks, 'pgvector')).toMatchObject({
      mark: 'fail',
      sentence: 'pgvector is not installed in this database: the semantic channels cannot run.',
    });
    expect(byId(checks, 'channel:sem').mark).toBe('fail');
    // The same check run and retrieval make before their first case, with the same words.
    const preflight = byId(checks, 'preflight');
    expect(preflight.mark).toBe('fail');
    expect(preflight.details?.join('\n')).toMatch(
      /retrieval\.channels\[0\] \(sem\): table ai_posts_embeddings does not exist on postgres:\/\//,
    );
    expect(worstMark(checks)).toBe('fail');
  });

  it('an unknown text-search configuration and goldens that are not public are failures naming file:line', async () => {
    const cases = [
      located({ id: 'ok', question: 'How to revive suede?', expected_topic_ids: [10], expected_post_ids: [10002] }, 3),
      located(
        { id: 'staff', question: 'Who is the spammer?', expected_topic_ids: [13, 11], expected_post_ids: [10003] },
        9,
      ),
    ];
    const checks = await diagnose(
      new DiscourseProfile(db),
      config({ channels: [KEYWORD], text_search_config: 'klingon' }),
      {
        cases,
      },
    );
    expect(byId(checks, 'text_search').mark).toBe('fail');
    expect(byId(checks, 'text_search').sentence).toMatch(
      /'klingon' \(database.text_search_config\) does not exist; available: .*english/,
    );
    // Post 10003 (topic 10, post 3) is the hidden one; post ids are topic × 1000 + post number; topic 13 sits in the read-restricted category.
    expect(byId(checks, 'goldens')).toMatchObject({
      mark: 'fail',
      details: ['cases/forum.yml:9: case staff: topic 13; post 10003 not public or missing'],
    });
  });

  it('a role that can only read passes the privilege check', async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const role = `ro_${process.pid}`;
    await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
    await admin.end();
    const roUrl = new URL(url);
    roUrl.username = role;
    const ro = await connectPostgres(roUrl.toString());
    try {
      const checks = await diagnose(new DiscourseProfile(ro), config({ channels: [KEYWORD] }));
      expect(byId(checks, 'role')).toMatchObject({
        mark: 'pass',
        sentence: `The role ${role} cannot write to the forum tables.`,
      });
      expect(byId(checks, 'channel:kw').mark).toBe('pass');
    } finally {
      await ro.close();
    }
  });
});

describe('doctor on PGlite with pgvector', () => {
  let raw: PGlite;
  let db: SqlClient;
  beforeAll(async () => {
    raw = await PGlite.create({ extensions: { vector } });
    await loadForum(pgliteWriter(raw), forum, { embedder: new HashEmbedder(64) });
    db = pgliteClient(raw, { owned: false });
  });
  afterAll(() => raw?.close());

  it('reports the pairs, their dimensions and coverage, and times the semantic channel with a stored vector', async () => {
    const checks = await diagnose(new DiscourseProfile(db), config({ channels: [SEM_POSTS] }));
    expect(byId(checks, 'pgvector').sentence).toMatch(/^pgvector \d+\.\d+\.\d+ is installed\.$/);
    const table = byId(checks, 'embeddings:post');
    expect(table.mark).toBe('pass');
    expect(table.details?.[0]).toMatch(
      /^model_id 1, strategy_id 1: \d+ rows, 64 dimensions, 100\.0 % of 7 public posts$/,
    );
    expect(byId(checks, 'embeddings:sem')).toMatchObject({ mark: 'pass' });
    const sem = byId(checks, 'channel:sem');
    expect(sem.mark).toBe('pass');
    expect(sem.sentence).toMatch(/answered a stored vector with 7 of 25 items/);
    expect(sem.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('a dimension mismatch and a pair without rows are failures', async () => {
    const checks = await diagnose(
      new DiscourseProfile(db),
      config({ channels: [SEM_POSTS, { ...SEM_POSTS, name: 'sem7', strategy_id: 7 }], dimensions: 384 }),
    );
    expect(byId(checks, 'embeddings:sem').sentence).toBe(
      'Channel sem: the stored vectors for model_id 1, strategy_id 1 have 64 dimensions, the configured embedder makes 384.',
    );
    expect(byId(checks, 'preflight').details).toContain(
      'retrieval.channels[0] (sem): the vectors in ai_posts_embeddings for model_id 1, strategy_id 1 have 64 dimensions, but the embedder makes 384 (embedder.dimensions, embedder.model): query and stored vectors must come from the same model',
    );
    expect(byId(checks, 'embeddings:sem7')).toMatchObject({
      mark: 'fail',
      sentence: 'Channel sem7 reads model_id 1, strategy_id 7, which has no rows in ai_posts_embeddings.',
    });
  });
});

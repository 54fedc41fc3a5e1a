/**
 * doctor on the real PostgreSQL test server (with pgvector): row counts are counted, not read off
 * the planner's statistics (which say 0 for a table filled after its index was built and never
 * analysed); a table the role may not read is "not readable by this role", not "missing"; and
 * `doctor --db URL` without a config judges that forum by its own tables and vectors, not the
 * demo's channels and cases. Counts are read off tests/fixtures/forum by hand: 6 topics, 13 posts,
 * 7 of them public.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { ConfigSchema } from '../src/config/schema.js';
import { DiscourseProfile } from '../src/corpus/discourse.js';
import { EXACT_COUNT_UP_TO, rowCount, rowsText } from '../src/doctor/counts.js';
import { diagnose, type DoctorCheck } from '../src/doctor/diagnose.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { connectPostgres, type SqlClient } from '../src/db/sql-client.js';
import { HashEmbedder } from '../src/embedding/hash-embedder.js';
import { freshDatabase } from './helpers/pg.js';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';

const forum = readForum(join(import.meta.dirname, 'fixtures', 'forum'));
const KEYWORD = { name: 'kw', kind: 'keyword', grain: 'topic' };

const config = (channels: unknown[]) => ConfigSchema.parse({ embedder: { dimensions: 64 }, retrieval: { channels } });

function byId(checks: DoctorCheck[], id: string): DoctorCheck {
  const c = checks.find((x) => x.id === id);
  expect(c, `check ${id} in ${checks.map((x) => x.id).join(', ')}`).toBeDefined();
  return c!;
}

async function admin<T>(url: string, run: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await run(c);
  } finally {
    await c.end();
  }
}

describe('doctor on PostgreSQL: counts, privileges, a forum without a config', () => {
  let url: string;
  let db: SqlClient;
  beforeAll(async () => {
    const fresh = await freshDatabase('docforum');
    // The search tables' GIN indexes are built before their rows: the planner's estimate stays 0, never analysed.
    await loadForum(fresh.writer, forum, { embedder: new HashEmbedder(64) });
    await fresh.close();
    url = fresh.url;
    db = await connectPostgres(url);
  });
  afterAll(async () => {
    await db?.close();
    removeWorkDirs();
  });

  // Fails before this change: "reads its 0 rows" and "is small (0 rows)" (pg_class.reltuples, 0 since the unique index was built on the empty table).
  it('counts the rows of small tables exactly, and says an estimate is one', async () => {
    const [est] = await db.query<{ n: number }>(
      "SELECT reltuples AS n FROM pg_class WHERE oid = 'ai_posts_embeddings'::regclass",
    );
    expect(Number(est?.n)).toBeLessThanOrEqual(0);
    const checks = await diagnose(new DiscourseProfile(db), config([{ name: 'sem', kind: 'semantic', grain: 'post' }]));
    // One vector per post and strategy: 13 posts, strategies 1 and 2.
    expect(byId(checks, 'indexes:post').sentence).toBe(
      'ai_posts_embeddings has no vector index (HNSW or IVFFlat): every semantic query reads all its rows (26 rows).',
    );
    expect(byId(checks, 'index:sem').sentence).toMatch(/ai_posts_embeddings is small \(26 rows\)/);
    // Above the bound the count is the planner's, said as an estimate (here exact after ANALYZE: 100,001 rows).
    await admin(url, async (c) => {
      await c.query(`CREATE TABLE big AS SELECT g AS x FROM generate_series(1, ${EXACT_COUNT_UP_TO + 1}) g`);
      await c.query('ANALYZE big');
    });
    const big = await rowCount((sql, params) => db.query(sql, params), 'big');
    expect(big).toEqual({ n: EXACT_COUNT_UP_TO + 1, exact: false });
    expect(rowsText(big)).toBe('about 100001 rows (planner estimate)');
    expect(rowsText({ n: 1, exact: true })).toBe('1 row');
  });

  // Fails before this change: "table topic_search_data is missing" (information_schema hides what the role may not read).
  it('tells a table the role may not read from a missing one, in doctor and in the checks before the first case', async () => {
    const role = `noread_${process.pid}_${Math.random().toString(36).slice(2, 6)}`;
    await admin(url, async (c) => {
      await c.query(`CREATE ROLE ${role} LOGIN`);
      await c.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
      await c.query(`REVOKE SELECT ON topic_search_data FROM ${role}`);
      await c.query(`REVOKE SELECT ON post_search_data FROM ${role}`);
      await c.query(`GRANT SELECT (post_id) ON post_search_data TO ${role}`);
    });
    const u = new URL(url);
    u.username = role;
    const ro = await connectPostgres(u.toString());
    try {
      const checks = await diagnose(
        new DiscourseProfile(ro),
        config([KEYWORD, { name: 'kwp', kind: 'keyword', grain: 'post' }]),
      );
      expect(byId(checks, 'tables')).toMatchObject({
        mark: 'fail',
        sentence: 'Some tables or columns the configured channels read are missing or not readable by this role.',
        details: [
          'table topic_search_data is there but not readable by this role (it needs SELECT on it)',
          'table post_search_data: column search_data not readable by this role',
        ],
      });
      expect(byId(checks, 'channel:kw').sentence).toBe(
        'Channel kw was not tried: what it reads is missing or not readable (see above).',
      );
      expect(byId(checks, 'preflight').details).toEqual([
        expect.stringMatching(
          /^retrieval\.channels\[0\] \(kw\): table topic_search_data on \S+ is not readable by this role: it needs SELECT on it$/,
        ),
      ]);
    } finally {
      await ro.close();
    }
  });

  // Fails before this change: the demo's config was checked there (384-dimension channels, the demo's 40 goldens).
  it('doctor --db URL without a config judges the forum by its own tables and vectors, and no cases', async () => {
    const dir = workDir('docforum');
    let out = '';
    const run = (args: string[]) =>
      main(args, { out: (t) => void (out += t), err: () => undefined, isTTY: false, cwd: dir, env: {} });
    const code = await run(['doctor', '--db', url]);
    expect(code).toBe(0);
    expect(out).toMatch(
      /^no config given: the forum is checked with the channels `ragaudit init` would write \(2 keyword, 3 semantic\), text search 'english'; pass --config FILE/m,
    );
    expect(out).toMatch(/^PASS {2}No cases given: pass --cases FILE to check goldens\.$/m);
    expect(out).toMatch(
      /^PASS {2}Channel semantic_posts_m1_s1 reads model_id 1, strategy_id 1: 64 dimensions as configured/m,
    );
    expect(out).toMatch(
      /^PASS {2}Channel semantic_posts_m1_s1 \(semantic, post\) answered a stored vector with 7 of 25 items/m,
    );
    expect(out).toMatch(/^PASS {2}retrieval's database checks pass for the channels found/m);
    expect(out).not.toMatch(/^FAIL/m);
    expect(out).not.toMatch(/cases\/demo|golden id/i);
    // Cases given: their goldens are checked against this forum (topic 13 is in the restricted category).
    const cases = join(dir, 'cases.yml');
    writeFileSync(cases, '- { id: staff, question: Who is the spammer?, expected_topic_ids: [13] }\n');
    out = '';
    expect(await run(['doctor', '--db', url, '--cases', cases])).toBe(2);
    expect(out).toMatch(/^FAIL {2}1 case names golden ids that are not public here/m);
  });
});

/**
 * The path a team takes to measure a new embedding strategy before deploying it, on the real
 * PostgreSQL server with pgvector: the demo forum without any vectors, `ragaudit embed` filling a
 * side schema with strategies 1 (native) and 2 (enriched), killed half-way and run again, then a
 * `matrix` of native against enriched post channels reading their vectors from that schema while
 * posts and topics come from the forum. The demo forum has 516 public posts (docs: `doctor` on the
 * demo; tests/demo-data.test.ts checks the corpus).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { DEMO_FORUM_DIR, PACKAGE_ROOT } from '../src/paths.js';
import { spawnCli } from './fixtures/audit/harness.js';
import { freshDatabase } from './helpers/pg.js';
import { runCli } from './helpers/cli.js';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';

const PUBLIC_POSTS = 516;

async function sideRows(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const exists = await c.query<{ ok: boolean }>(
      "SELECT to_regclass('ragaudit_side.ai_posts_embeddings') IS NOT NULL AS ok",
    );
    if (!exists.rows[0]?.ok) return 0;
    const r = await c.query<{ n: string }>('SELECT count(*) AS n FROM ragaudit_side.ai_posts_embeddings');
    return Number(r.rows[0]?.n);
  } finally {
    await c.end();
  }
}

describe('embed into a side schema, then measure native against enriched from it', () => {
  let url: string;
  let dir: string;
  beforeAll(async () => {
    const fresh = await freshDatabase('embed_side');
    // The forum only: no discourse-ai tables at all, as on a forum whose vectors come from another model.
    await loadForum(fresh.writer, readForum(DEMO_FORUM_DIR));
    await fresh.writer.script('CREATE EXTENSION IF NOT EXISTS vector');
    await fresh.close();
    url = fresh.url;
    dir = workDir('embed-side');
  });
  afterAll(() => removeWorkDirs());

  it('a killed embed continues where it stopped when run again', async () => {
    const args = [
      'embed',
      '--db',
      url,
      '--target',
      url,
      '--target-schema',
      'ragaudit_side',
      '--strategy',
      '1',
      '--strategy',
      '2',
    ];
    const { child, exited } = spawnCli([...args, '--batch-size', '4'], { cwd: dir, env: {} });
    // Kill it as soon as some batches are committed, well before the 2 × 516 posts are done.
    for (let i = 0; i < 600 && (await sideRows(url)) < 40; i++) await new Promise((r) => setTimeout(r, 25));
    child.kill('SIGKILL');
    const killed = await exited;
    expect(killed.signal).toBe('SIGKILL');
    const partial = await sideRows(url);
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(2 * PUBLIC_POSTS);

    const again = await runCli(dir, args);
    expect(again.code, again.err).toBe(0);
    const line = (s: number) =>
      new RegExp(
        `ai_posts_embeddings strategy ${s}: (\\d+) written, (\\d+) already current, ${PUBLIC_POSTS} public in all`,
      ).exec(again.out);
    const [s1, s2] = [line(1), line(2)];
    expect(s1 && s2, again.out).toBeTruthy();
    // What the killed run committed is not embedded again; together they cover every public post once per strategy.
    expect(Number(s1![2]) + Number(s2![2])).toBe(partial);
    expect(Number(s1![1]) + Number(s1![2])).toBe(PUBLIC_POSTS);
    expect(await sideRows(url)).toBe(2 * PUBLIC_POSTS);
  }, 120_000);

  it('a matrix of native against enriched post channels reads the side schema', async () => {
    const config = (name: string, strategy: number) =>
      [
        `name: ${name}`,
        `note: "post channel on ${strategy === 1 ? 'native' : 'enriched'} vectors from the side schema"`,
        `cases: [${join(PACKAGE_ROOT, 'cases', 'demo', 'questions-core.yml')}]`,
        'database:',
        '  vectors_schema: ragaudit_side',
        'retrieval:',
        '  channels:',
        `    - { name: posts, kind: semantic, grain: post, model_id: 1, strategy_id: ${strategy} }`,
        '    - { name: keyword, kind: keyword, grain: topic }',
        '',
      ].join('\n');
    writeFileSync(join(dir, 'native.yml'), config('native', 1));
    writeFileSync(join(dir, 'enriched.yml'), config('enriched', 2));
    const r = await runCli(dir, [
      'matrix',
      'native.yml',
      'enriched.yml',
      '--retrieval-only',
      '--db',
      url,
      '--out',
      'm',
    ]);
    expect(r.code, r.err).toBe(0);
    // The console table is aligned text; the markdown table goes to the -matrix.md file.
    expect(r.out).toMatch(/^native  /m);
    expect(r.out).toMatch(/^enriched  /m);
    // A side database instead of a schema: the same vectors, so the same items, scores and order.
    const side = await freshDatabase('embed_side_db');
    await side.close();
    const filled = await runCli(dir, ['embed', '--db', url, '--target', side.url, '--strategy', '1', '--no-topics']);
    expect(filled.code, filled.err).toBe(0);
    writeFileSync(
      join(dir, 'native-db.yml'),
      config('native-db', 1).replace('  vectors_schema: ragaudit_side', `  vectors_url: ${side.url}`),
    );
    const [viaSchema, viaDb] = [
      await runCli(dir, ['retrieval', '--config', 'native.yml', '--db', url, '--out', 'a', '--no-report']),
      await runCli(dir, ['retrieval', '--config', 'native-db.yml', '--db', url, '--out', 'b', '--no-report']),
    ];
    expect(viaSchema.code, viaSchema.err).toBe(0);
    expect(viaDb.code, viaDb.err).toBe(0);
    const items = (sub: string) => {
      const f = readdirSync(join(dir, sub)).find((x) => x.endsWith('.json'))!;
      const r = JSON.parse(readFileSync(join(dir, sub, f), 'utf8')) as {
        cases: { id: string; retrieval: Record<string, { items: unknown[] }> }[];
      };
      return r.cases.map((c) => [c.id, c.retrieval.posts?.items]);
    };
    const a = items('a');
    expect(a.length).toBeGreaterThan(50);
    expect(items('b')).toEqual(a);

    // Without the schema the forum has no vectors: the run stops before its first case, saying so.
    writeFileSync(join(dir, 'nowhere.yml'), config('nowhere', 1).replace('  vectors_schema: ragaudit_side\n', ''));
    const missing = await runCli(dir, ['retrieval', '--config', 'nowhere.yml', '--db', url]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/table ai_posts_embeddings does not exist/);
  }, 120_000);
});

describe("embed refuses PostgreSQL's own schemas", () => {
  it('--target-schema information_schema, pg_catalog, pg_toast or any pg_*: exit 2 before connecting', async () => {
    // Nothing listens on port 1: a message about connecting would mean the check came too late.
    const nowhere = 'postgres://127.0.0.1:1/forum';
    for (const schema of ['information_schema', 'pg_catalog', 'pg_toast', 'pg_vectors']) {
      const r = await runCli(workDir('embed-system'), [
        'embed',
        '--db',
        nowhere,
        '--target',
        nowhere,
        '--target-schema',
        schema,
      ]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(
        `ragaudit embed: --target-schema ${schema}: a system schema of PostgreSQL; give the vectors a schema of their own (e.g. ragaudit_vectors)\n`,
      );
    }
  });
});

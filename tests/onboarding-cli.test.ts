/**
 * From a database URL to a first measurement, through the CLI as a team would type it, on the
 * real PostgreSQL test server: `doctor` says what the database offers, `init` writes a config and
 * seed cases, `retrieval` runs on them at once, and `embed` fills a side database (never the
 * forum) and continues after an interruption. Fixture counts are read off tests/fixtures/forum by
 * hand (3 public topics with two or more posts: 11, 10, 15; 7 public posts).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { HashEmbedder } from '../src/embedding/hash-embedder.js';
import { freshDatabase } from './helpers/pg.js';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';

const forum = readForum(join(import.meta.dirname, 'fixtures', 'forum'));

async function cli(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  let out = '';
  let err = '';
  const code = await main(args, { out: (t) => void (out += t), err: (t) => void (err += t), isTTY: false, cwd, env });
  return { code, out, err };
}

async function count(url: string, sql: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query<{ n: string }>(sql)).rows[0]?.n);
  } finally {
    await c.end();
  }
}

describe('doctor, init and retrieval on a forum without embeddings', () => {
  let url: string;
  let dir: string;
  beforeAll(async () => {
    const fresh = await freshDatabase('onboard');
    await loadForum(fresh.writer, forum);
    await fresh.close();
    url = fresh.url;
    dir = workDir('onboard');
  });
  afterAll(() => removeWorkDirs());

  it('doctor without a config judges the forum as it is (keyword tables, no pgvector), not the demo', async () => {
    const r = await cli(dir, ['doctor', '--db', url]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^no config given: the forum is checked with the channels `ragaudit init` would write \(2 keyword, 0 semantic\)/m,
    );
    // No semantic channel among the forum's: pgvector's absence is a warning, not the demo's failure.
    expect(r.out).toMatch(
      /^WARN {2}pgvector is not installed in this database \(only needed by semantic channels\)\.$/m,
    );
    expect(r.out).not.toMatch(/^FAIL/m);
  });

  it('doctor with a semantic config fails there, naming why, with exit 2', async () => {
    const r = await cli(dir, ['doctor', '--db', url, '--config', join(PACKAGE_ROOT, 'configs', 'B-native-posts.yml')]);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/^FAIL {2}pgvector is not installed in this database: the semantic channels cannot run\.$/m);
    expect(r.out).toMatch(/^FAIL {2}Some tables or columns the configured channels read are missing\.$/m);
    expect(r.out).toMatch(/^ {8}table ai_posts_embeddings is missing$/m);
  });

  it('init writes a config without the URL in it, and retrieval runs on it first time', async () => {
    const init = await cli(dir, ['init', '--db', url, '--out', 'forum.yml']);
    expect(init.code).toBe(0);
    expect(init.out).toMatch(/3 seed cases from topic titles/);
    const text = readFileSync(join(dir, 'forum.yml'), 'utf8');
    expect(text).not.toContain(url);
    expect(text).toContain('url: ${DATABASE_URL}');
    // Refuses to overwrite.
    expect((await cli(dir, ['init', '--db', url, '--out', 'forum.yml'])).code).toBe(2);

    const doctor = await cli(dir, ['doctor', '--config', 'forum.yml', '--strict'], { DATABASE_URL: url });
    expect(doctor.out).not.toMatch(/^FAIL/m);
    // The test server's role is a superuser: a warning, which --strict turns into exit 1.
    expect(doctor.code).toBe(1);

    const r = await cli(dir, ['retrieval', '--config', 'forum.yml', '--no-report'], { DATABASE_URL: url });
    expect(r.err).not.toMatch(/warning|error/i);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/cases 3 · ok 3 · errors 0/);
    const results = readdirSync(join(dir, 'results')).filter((f) => f.endsWith('-forum.json'));
    expect(results).toHaveLength(1);
    const json = JSON.parse(readFileSync(join(dir, 'results', results[0]!), 'utf8')) as {
      summary: { retrieval: { nodes: Record<string, { hit_at_1: { mean: number; n: number } }> } };
    };
    // Each title finds its own topic first with the keyword channel.
    expect(json.summary.retrieval.nodes.keyword_topics?.hit_at_1).toEqual({ mean: 1, n: 3 });
  });
});

/** A loopback port nothing listens on (a server that is down). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  await new Promise((ok) => server.close(ok));
  return port;
}

describe('init, retrieval and doctor on a forum with discourse-ai vectors, no embeddings server known', () => {
  let url: string;
  let dir: string;
  beforeAll(async () => {
    const fresh = await freshDatabase('onboard_vec');
    await loadForum(fresh.writer, forum, { embedder: new HashEmbedder(64) });
    // discourse-ai's table of models: init reads the display name only (never the URL or key).
    await fresh.writer.script(
      "CREATE TABLE embedding_definitions (id integer, display_name text, url text, api_key text); INSERT INTO embedding_definitions VALUES (1, 'bge-m3', 'http://embed.internal:8081', 'sk-never-read-123456');",
    );
    await fresh.close();
    url = fresh.url;
    dir = workDir('onboard-vec');
  });
  afterAll(() => removeWorkDirs());

  // Fails before this change: init wrote a live `embedder:` at localhost:8081 though every
  // semantic channel was commented out, and retrieval stopped on it (exit 2).
  it('retrieval runs unedited on the config init wrote, and doctor agrees', async () => {
    const init = await cli(dir, ['init', '--db', url, '--out', 'vec.yml']);
    expect(init.code).toBe(0);
    const text = readFileSync(join(dir, 'vec.yml'), 'utf8');
    expect(text).toMatch(
      /^# embedder: {3}# must be the model that made the stored vectors \(discourse-ai calls it bge-m3\)$/m,
    );
    expect(text).not.toMatch(/^embedder:/m);
    expect(text).not.toMatch(/embed\.internal|sk-never-read/);

    const env = { DATABASE_URL: url };
    const r = await cli(dir, ['retrieval', '--config', 'vec.yml', '--no-report'], env);
    expect(r.err).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    const doctor = await cli(dir, ['doctor', '--config', 'vec.yml'], env);
    expect(doctor.out).not.toMatch(/^FAIL/m);
    expect(doctor.out).toMatch(
      /^PASS {2}run and retrieval would pass their checks before the first case \(database and services\)\.$/m,
    );
    expect(doctor.code).toBe(0);
  });

  // Fails before this change: doctor checked the database only and printed PASS for both.
  it('with the semantic channels uncommented and the embeddings server down, doctor fails where retrieval stops', async () => {
    const port = await closedPort();
    const text = readFileSync(join(dir, 'vec.yml'), 'utf8')
      .replace(/^# embedder:.*(\n# {3}.*)*/m, (block) => block.replace(/^# /gm, ''))
      .replace(/^ {4}# (- \{ name: semantic_posts_m1_s1,.*)$/m, '    $1');
    writeFileSync(join(dir, 'vec-semantic.yml'), text);
    const env = { DATABASE_URL: url, EMBEDDING_BASE_URL: `http://127.0.0.1:${port}/v1` };
    const r = await cli(dir, ['retrieval', '--config', 'vec-semantic.yml', '--no-report'], env);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/embedder openai:bge-m3/);
    const doctor = await cli(dir, ['doctor', '--config', 'vec-semantic.yml'], env);
    expect(doctor.code).toBe(2);
    expect(doctor.out).toMatch(/^FAIL {2}run and retrieval would stop before the first case \(exit 2\):$/m);
    expect(doctor.out).toMatch(/^ {8}embedder openai:bge-m3@http:\/\/127\.0\.0\.1:\d+\/v1: /m);

    // A generator that is down stops run only: doctor says so, and retrieval still passes.
    const gen = text.replace(
      /^generator:.*\n {2}provider: offline.*\n {2}model: extractive$/m,
      `generator:\n  provider: openai\n  model: some-model\n  base_url: http://127.0.0.1:${port}/v1\n  api_key: none`,
    );
    expect(gen).not.toBe(text);
    writeFileSync(join(dir, 'vec-gen.yml'), gen.replace(/^ {4}(- \{ name: semantic_posts_m1_s1,.*)$/m, '    # $1'));
    const both = await cli(dir, ['doctor', '--config', 'vec-gen.yml'], env);
    expect(both.out).toMatch(
      /^FAIL {2}retrieval would pass its checks before the first case, but run would stop there \(exit 2\):$/m,
    );
    expect(both.out).toMatch(/^ {8}generator openai:some-model/m);
  });
});

describe('embed into a side database', () => {
  let source: string;
  let target: string;
  let dir: string;
  beforeAll(async () => {
    const fresh = await freshDatabase('embed_cli_src');
    await loadForum(fresh.writer, forum, { embedder: new HashEmbedder(384) });
    await fresh.close();
    source = fresh.url;
    const side = await freshDatabase('embed_cli_dst');
    await side.close();
    target = side.url;
    dir = workDir('embed-cli');
  });
  afterAll(() => removeWorkDirs());

  it('refuses the forum itself as the target (exit 2), and leaves it untouched', async () => {
    const before = await count(source, 'SELECT count(*) AS n FROM ai_posts_embeddings');
    const r = await cli(dir, ['embed', '--db', source, '--target', source, '--model-id', '9']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/is the source database itself: ragaudit never writes into the forum/);
    expect(await count(source, 'SELECT count(*) AS n FROM ai_posts_embeddings')).toBe(before);
  });

  it('fills strategies 1 and 2, labels the offline embedder, and a second run finds everything current', async () => {
    const r = await cli(dir, ['embed', '--db', source, '--target', target, '--strategy', '1', '--strategy', '2']);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/embedder: offline:hash-384 \(OFFLINE STAND-IN, not a semantic embedding model\)/);
    expect(r.out).toMatch(/ai_posts_embeddings strategy 1: 7 written, 0 already current, 7 public in all/);
    expect(r.out).toMatch(/ai_posts_embeddings strategy 2: 7 written/);
    expect(await count(target, 'SELECT count(*) AS n FROM ai_posts_embeddings')).toBe(14);
    const again = await cli(dir, ['embed', '--db', source, '--target', target, '--strategy', '1', '--strategy', '2']);
    expect(again.out).toMatch(/ai_posts_embeddings strategy 2: 0 written, 7 already current/);
  });
});

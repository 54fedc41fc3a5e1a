/**
 * `ragaudit init`'s two halves: what it detects on a database, and the starting config it writes
 * from that (valid as written, no secret in it, semantic channels only where vectors exist).
 * The fixture forum's public topics with two or more public posts are 10 (2 posts: 1 and 2;
 * 3 is hidden, 4 deleted, 5 a whisper), 11 (3) and 15 (2): read off tests/fixtures/forum by hand.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCases } from '../src/cases/load.js';
import { loadConfig } from '../src/config/load.js';
import { starterCases, starterConfig } from '../src/config/starter.js';
import { pgliteWriter } from '../src/demo/demo-db.js';
import { detectDatabase, localeTextSearchConfig, type DetectedDatabase } from '../src/corpus/detect.js';
import { DiscourseProfile } from '../src/corpus/discourse.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { connectPostgres, pgliteClient, type SqlClient } from '../src/db/sql-client.js';
import { HashEmbedder } from '../src/embedding/hash-embedder.js';
import { freshDatabase } from './helpers/pg.js';

const forum = readForum(join(import.meta.dirname, 'fixtures', 'forum'));
const OPTIONS = { name: 'forum', urlVariable: 'DATABASE_URL', casesFile: 'cases-forum.yml', date: '2026-12-03' };

function writeAndLoad(detected: DetectedDatabase, embedderKnown: boolean, env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-init-'));
  const text = starterConfig(detected, { ...OPTIONS, embedderKnown });
  writeFileSync(join(dir, 'ragaudit.yml'), text);
  writeFileSync(join(dir, 'cases-forum.yml'), starterCases(detected, OPTIONS.date));
  const loaded = loadConfig(join(dir, 'ragaudit.yml'), env);
  return { text, loaded, cases: loadCases([join(dir, 'cases-forum.yml')]) };
}

describe('locale to text-search configuration', () => {
  it.each([
    ['fr', 'french'],
    ['pt_BR', 'portuguese'],
    ['en-GB', 'english'],
    ['zh_CN', undefined],
  ])('%s → %s', (locale, config) => expect(localeTextSearchConfig(locale)).toBe(config));
});

describe('init on PostgreSQL without embeddings', () => {
  let db: SqlClient;
  let url: string;
  beforeAll(async () => {
    const fresh = await freshDatabase('init');
    await loadForum(fresh.writer, forum);
    // Discourse keeps the forum's language as a site setting.
    await fresh.writer.script(
      "CREATE TABLE site_settings (name text PRIMARY KEY, value text); INSERT INTO site_settings VALUES ('default_locale', 'fr');",
    );
    await fresh.close();
    url = fresh.url;
    db = await connectPostgres(url);
  });
  afterAll(() => db?.close());

  it('detects the search language, the keyword tables, no vectors, and seed topics', async () => {
    const d = await detectDatabase(new DiscourseProfile(db));
    expect(d).toMatchObject({
      text_search_config: 'french',
      text_search_source: 'site setting default_locale = fr',
      keyword: { post: true, topic: true },
      pairs: [],
      public_topics: 3,
      public_posts: 7,
    });
    expect(d.pgvector).toBeUndefined();
    expect(d.sample_topics).toEqual([
      { topic_id: 11, title: 'Mirror shine with wax' },
      { topic_id: 10, title: 'Reviving faded suede' },
      { topic_id: 15, title: 'Resoling Goodyear welted boots' },
    ]);
  });

  it('writes a valid config with keyword channels only, the URL as ${DATABASE_URL}, and seed cases', async () => {
    const d = await detectDatabase(new DiscourseProfile(db));
    const { text, loaded, cases } = writeAndLoad(d, false, { DATABASE_URL: url });
    expect(text).toContain('url: ${DATABASE_URL}');
    expect(text).not.toContain(url);
    expect(loaded.config.database).toMatchObject({ url, text_search_config: 'french' });
    expect(loaded.config.retrieval.channels.map((c) => `${c.kind}:${c.grain}`)).toEqual([
      'keyword:topic',
      'keyword:post',
    ]);
    expect(loaded.config.rerank).toMatchObject({ node: 'keyword_topics', provider: 'offline' });
    expect(cases.map((c) => [c.value.question, c.value.expected_topic_ids])).toEqual([
      ['Mirror shine with wax', [11]],
      ['Reviving faded suede', [10]],
      ['Resoling Goodyear welted boots', [15]],
    ]);
  });
});

describe('init on a database with discourse-ai vectors (PGlite with pgvector)', () => {
  let raw: PGlite;
  let d: DetectedDatabase;
  beforeAll(async () => {
    raw = await PGlite.create({ extensions: { vector } });
    await loadForum(pgliteWriter(raw), forum, { embedder: new HashEmbedder(64) });
    await raw.exec(
      "CREATE TABLE embedding_definitions (id integer, display_name text, url text, api_key text); INSERT INTO embedding_definitions VALUES (1, 'bge-m3', 'http://embed.internal:8081', 'sk-never-read-123456');",
    );
    d = await detectDatabase(new DiscourseProfile(pgliteClient(raw, { owned: false })));
  });
  afterAll(() => raw?.close());

  // The loader embeds posts with strategies 1 (native) and 2 (enriched), topics with 1.
  it('finds each pair with its dimensions and the model name, never the endpoint or key', () => {
    expect(d.pairs.map((p) => [p.grain, p.model_id, p.strategy_id, p.dimensions, p.model_name])).toEqual([
      ['post', 1, 1, 64, 'bge-m3'],
      ['post', 1, 2, 64, 'bge-m3'],
      ['topic', 1, 1, 64, 'bge-m3'],
    ]);
    expect(JSON.stringify(d)).not.toMatch(/embed\.internal|sk-never-read/);
  });

  it('semantic channels are written but left commented out until an embeddings server is known', () => {
    const { text, loaded } = writeAndLoad(d, false, { DATABASE_URL: 'postgres://x@localhost/db' });
    expect(text).toContain(
      '# - { name: semantic_posts_m1_s2, kind: semantic, grain: post, model_id: 1, strategy_id: 2 }',
    );
    expect(loaded.config.retrieval.channels.every((c) => c.kind === 'keyword')).toBe(true);
    // The embedder is written commented with them: live, it would be asked before the first case though no channel uses it.
    expect(text).toMatch(
      /^# embedder: .*\n# {3}provider: openai.*\n# {3}model: \$\{EMBEDDING_MODEL:-bge-m3\}\n# {3}dimensions: 64$/m,
    );
    expect(loaded.config.embedder).toMatchObject({ provider: 'offline' });
  });

  it('with an embeddings server: semantic channels, RRF fusions per grain, rerank on the post channel', () => {
    const { loaded } = writeAndLoad(d, true, { DATABASE_URL: 'postgres://x@localhost/db' });
    const cfg = loaded.config;
    expect(cfg.retrieval.channels.map((c) => c.name)).toEqual([
      'semantic_posts_m1_s1',
      'semantic_posts_m1_s2',
      'semantic_topics',
      'keyword_topics',
      'keyword_posts',
    ]);
    expect(cfg.retrieval.fusions).toEqual([
      { name: 'hybrid_topics', kind: 'rrf', inputs: ['semantic_topics', 'keyword_topics'], k: 60 },
      { name: 'hybrid_posts', kind: 'rrf', inputs: ['semantic_posts_m1_s1', 'keyword_posts'], k: 60 },
    ]);
    expect(cfg.rerank?.node).toBe('semantic_posts_m1_s1');
  });
});

/**
 * The database is checked against the configured channels before the first case: an unknown
 * text-search configuration, a missing discourse-ai table, vectors of another dimension, or a
 * model_id/strategy_id with no rows end the command with exit 2 and one sentence each, instead of
 * one error per case. Real PostgreSQL for what needs no pgvector; PGlite for the dimension.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { ConfigSchema, type Config } from '../src/config/schema.js';
import { pgliteWriter } from '../src/demo/demo-db.js';
import { DiscourseProfile } from '../src/corpus/discourse.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { checkRetrievalSetup } from '../src/corpus/retrieval-setup.js';
import { connectPostgres, pgliteClient, type SqlClient } from '../src/db/sql-client.js';
import { ConfigError } from '../src/errors.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { HashEmbedder } from '../src/embedding/hash-embedder.js';
import { freshDatabase, standInEmbeddingsSql } from './helpers/pg.js';

const forum = readForum(join(import.meta.dirname, 'fixtures', 'forum'));

function config(raw: { channels: unknown[]; text_search_config?: string; dimensions?: number }): Config {
  return ConfigSchema.parse({
    database: { text_search_config: raw.text_search_config ?? 'english' },
    embedder: { dimensions: raw.dimensions ?? 384 },
    retrieval: { channels: raw.channels },
  });
}

async function problems(db: SqlClient, cfg: Config): Promise<string> {
  const e = await checkRetrievalSetup(new DiscourseProfile(db), cfg).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ConfigError);
  return (e as Error).message;
}

const KEYWORD = { name: 'kw', kind: 'keyword', grain: 'topic' };
const SEM_POSTS = { name: 'sem', kind: 'semantic', grain: 'post' };

describe('checks before the first case, on PostgreSQL', () => {
  let bare: { url: string; db: SqlClient };
  let withVectors: { url: string; db: SqlClient };
  beforeAll(async () => {
    const make = async (prefix: string, extra?: string) => {
      const fresh = await freshDatabase(prefix);
      await loadForum(fresh.writer, forum);
      if (extra) await fresh.writer.script(extra);
      await fresh.close();
      return { url: fresh.url, db: await connectPostgres(fresh.url) };
    };
    bare = await make('setup_bare');
    withVectors = await make('setup_vec', standInEmbeddingsSql(384));
  });
  afterAll(async () => {
    await bare?.db.close();
    await withVectors?.db.close();
  });

  it('an unknown text-search configuration, with the ones that exist', async () => {
    const msg = await problems(bare.db, config({ channels: [KEYWORD], text_search_config: 'klingon' }));
    expect(msg).toMatch(
      /^the database at postgres:\/\/127\.0\.0\.1:\d+\/setup_bare_\w+ does not fit the configured retrieval\n/,
    );
    expect(msg).toMatch(
      /\n {2}database\.text_search_config: text-search configuration 'klingon' does not exist on postgres:\/\/\S+; available: .*\benglish\b.*\bfrench\b/,
    );
  });

  it('is not asked when no keyword channel needs it', async () => {
    await expect(
      checkRetrievalSetup(
        new DiscourseProfile(withVectors.db),
        config({ channels: [SEM_POSTS], text_search_config: 'klingon' }),
      ),
    ).resolves.toBeUndefined();
  });

  it('a missing discourse-ai table, named with the channel that reads it', async () => {
    const msg = await problems(bare.db, config({ channels: [KEYWORD, SEM_POSTS] }));
    expect(msg.split('\n').slice(1)).toEqual([
      expect.stringMatching(
        /^ {2}retrieval\.channels\[1\] \(sem\): table ai_posts_embeddings does not exist on postgres:\/\/\S+: semantic channels read discourse-ai's embeddings \(is the discourse-ai plugin installed/,
      ),
    ]);
  });

  it('a model_id/strategy_id with no rows, with the pairs the table holds', async () => {
    const msg = await problems(withVectors.db, config({ channels: [{ ...SEM_POSTS, strategy_id: 7 }] }));
    expect(msg.split('\n')[1]).toBe(
      '  retrieval.channels[0] (sem): no vectors in ai_posts_embeddings for model_id 1, strategy_id 7; it holds model_id 1 strategy_id 1',
    );
  });

  it('passes a database that fits', async () => {
    await expect(
      checkRetrievalSetup(
        new DiscourseProfile(withVectors.db),
        config({ channels: [KEYWORD, SEM_POSTS, { name: 't', kind: 'semantic', grain: 'topic' }] }),
      ),
    ).resolves.toBeUndefined();
  });

  it('through the CLI: exit 2 before the first case, one message, no per-case errors', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      out: (t: string) => void out.push(t),
      err: (t: string) => void err.push(t),
      isTTY: false,
      cwd: PACKAGE_ROOT,
      env: {},
    };
    const code = await main(
      ['retrieval', '--db', bare.url, '--cases', join(PACKAGE_ROOT, 'tests', 'fixtures', 'audit', 'questions.yml')],
      io,
    );
    expect(code).toBe(2);
    const text = err.join('');
    expect(text).toMatch(
      /ragaudit retrieval: the database at postgres:\/\/127\.0\.0\.1:\d+\/setup_bare_\w+ does not fit the configured retrieval\n/,
    );
    expect(text).toMatch(/retrieval\.channels\[0\] \(posts\): table ai_posts_embeddings does not exist/);
    expect(text).toMatch(/retrieval\.channels\[1\] \(semantic\): table ai_topics_embeddings does not exist/);
    expect(out.join('')).toBe('');
  });
});

describe('the embedded demo with an unknown text-search configuration', () => {
  it('exits 2 before building anything, with the configurations that exist', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-tsconfig-'));
    const cfg = join(dir, 'klingon.yml');
    const cases = join(PACKAGE_ROOT, 'tests', 'fixtures', 'audit', 'questions.yml');
    writeFileSync(
      cfg,
      `database: { text_search_config: klingon }\ncases: [${cases}]\nretrieval:\n  channels:\n    - { name: kw, kind: keyword, grain: post }\ncache_dir: cache\n`,
    );
    const err: string[] = [];
    const io = { out: () => undefined, err: (t: string) => void err.push(t), isTTY: false, cwd: dir, env: {} };
    expect(await main(['retrieval', '--config', cfg], io)).toBe(2);
    expect(err.join('')).toMatch(
      /\nragaudit retrieval: the embedded demo database cannot be built\n {2}database\.text_search_config: text-search configuration 'klingon' does not exist on the embedded demo database; available: .*\benglish\b/,
    );
    // Nothing half-built is left in the cache.
    expect(readdirSync(join(dir, 'cache', 'demo-db'))).toEqual([]);
  }, 120_000);
});

describe('checks before the first case, on PGlite with pgvector', () => {
  let raw: PGlite;
  let db: SqlClient;
  beforeAll(async () => {
    raw = await PGlite.create({ extensions: { vector } });
    await loadForum(pgliteWriter(raw), forum, { embedder: new HashEmbedder(64) });
    db = pgliteClient(raw, { owned: false });
  });
  afterAll(async () => raw.close());

  it('stored vectors of another dimension than the embedder makes', async () => {
    const msg = await problems(
      db,
      config({ channels: [SEM_POSTS, { name: 't', kind: 'semantic', grain: 'topic' }], dimensions: 384 }),
    );
    expect(msg.split('\n').slice(1)).toEqual([
      '  retrieval.channels[0] (sem): the vectors in ai_posts_embeddings for model_id 1, strategy_id 1 have 64 dimensions, but the embedder makes 384 (embedder.dimensions, embedder.model): query and stored vectors must come from the same model',
      '  retrieval.channels[1] (t): the vectors in ai_topics_embeddings for model_id 1, strategy_id 1 have 64 dimensions, but the embedder makes 384 (embedder.dimensions, embedder.model): query and stored vectors must come from the same model',
    ]);
  });

  it('the same dimension passes', async () => {
    await expect(
      checkRetrievalSetup(new DiscourseProfile(db), config({ channels: [SEM_POSTS, KEYWORD], dimensions: 64 })),
    ).resolves.toBeUndefined();
  });
});

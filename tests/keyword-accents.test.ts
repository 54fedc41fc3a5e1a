/**
 * Discourse's `search_ignore_accents` on the real PostgreSQL test server: with the setting on,
 * Discourse strips accents from the text before to_tsvector and from the query, so the keyword
 * channels must fold the question the same way. Two copies of the French beekeeping forum
 * (tests/fixtures/forum-apiculture): one indexed with accents (setting off), one indexed without
 * (setting on, the text folded before to_tsvector as Discourse's indexer does).
 */
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../src/config/schema.js';
import { DiscourseProfile } from '../src/corpus/discourse.js';
import { diagnose } from '../src/doctor/diagnose.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { connectPostgres, type SqlClient } from '../src/db/sql-client.js';
import { fold } from '../src/text.js';
import { freshDatabase } from './helpers/pg.js';

const forum = readForum(join(import.meta.dirname, 'fixtures', 'forum-apiculture'));
const SETTINGS =
  'CREATE TABLE site_settings (id serial, name varchar NOT NULL, data_type integer NOT NULL, value text)';

async function forumDb(prefix: string, ignoreAccents: boolean): Promise<string> {
  const fresh = await freshDatabase(prefix);
  await loadForum(fresh.writer, forum, { textSearchConfig: 'french' });
  await fresh.writer.script(
    `${SETTINGS}; INSERT INTO site_settings (name, data_type, value) VALUES ('default_locale', 7, 'fr'), ('search_ignore_accents', 5, '${ignoreAccents ? 't' : 'f'}');`,
  );
  await fresh.close();
  if (ignoreAccents) {
    // The index as Discourse builds it with the setting on: the text folded before to_tsvector.
    const c = new pg.Client({ connectionString: fresh.url });
    await c.connect();
    try {
      for (const t of forum.topics)
        for (const p of t.posts)
          await c.query(
            "UPDATE post_search_data SET search_data = setweight(to_tsvector('french', $1), 'A') || to_tsvector('french', $2) WHERE post_id = $3",
            [fold(t.title), fold(p.raw), p.id],
          );
    } finally {
      await c.end();
    }
  }
  return fresh.url;
}

const search = (db: SqlClient, text: string) =>
  new DiscourseProfile(db).keywordPosts({ text, config: 'french', limit: 10 }).then((r) => r.map((i) => i.post_id));

describe('keyword search and search_ignore_accents', () => {
  let withAccents: SqlClient;
  let without: SqlClient;
  beforeAll(async () => {
    withAccents = await connectPostgres(await forumDb('accents_on_index', false));
    without = await connectPostgres(await forumDb('accents_folded_index', true));
  });
  afterAll(async () => {
    await withAccents?.close();
    await without?.close();
  });

  // Post 211002 is the only one with « réfractomètre » and « étalonnage » (topics.yml, topic 211).
  it('an index built with accents: the accented question finds the post', async () => {
    expect(await search(withAccents, 'réfractomètre étalonnage')).toContain(211002);
  });

  // Fails before this change: the accented question's stems (« réfractometr ») were not in the
  // folded index, so it found nothing there while the forum's own search finds the post.
  it('an index built without accents (setting on): accented and unaccented questions find the same items', async () => {
    const accented = await search(without, 'réfractomètre étalonnage');
    const plain = await search(without, 'refractometre etalonnage');
    expect(accented).toContain(211002);
    expect(accented).toEqual(plain);
  });

  it('doctor says which kind the forum is', async () => {
    const config = ConfigSchema.parse({
      database: { text_search_config: 'french' },
      retrieval: { channels: [{ name: 'kw', kind: 'keyword', grain: 'post' }] },
    });
    const on = (await diagnose(new DiscourseProfile(without), config)).find((c) => c.id === 'accents');
    expect(on?.sentence).toBe(
      'search_ignore_accents is on; default_locale fr: the forum indexes its text without accents, so the keyword channels search each question without accents too.',
    );
    const off = (await diagnose(new DiscourseProfile(withAccents), config)).find((c) => c.id === 'accents');
    expect(off?.sentence).toBe(
      'search_ignore_accents is off (site_settings; default_locale fr): accents are kept in the index and in the questions.',
    );
  });
});

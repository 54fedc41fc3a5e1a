/**
 * A second, differently built forum (tests/fixtures/forum-apiculture: French beekeepers, five categories
 * one of them read-restricted, tags, a private message, an unlisted and a deleted topic, hidden,
 * deleted and whispered posts), searched with PostgreSQL's `french` configuration, on a real
 * server and on PGlite. Counted by hand from the fixture: 17 topics and 49 posts; public are topics
 * 201, 202, 203, 204 and 209 to 217 with 42 posts (201 keeps 1, 2, 3, 6; 202 keeps 1, 2, 4; 203,
 * 204, 209 and 210 to 217 keep all of theirs: 15 posts, then 27 in 210 to 217).
 */
import { PGlite } from '@electric-sql/pglite';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../src/config/schema.js';
import { pgliteWriter } from '../src/demo/demo-db.js';
import { detectDatabase } from '../src/corpus/detect.js';
import { DiscourseProfile } from '../src/corpus/discourse.js';
import { diagnose } from '../src/doctor/diagnose.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { connectPostgres, pgliteClient, type SqlClient } from '../src/db/sql-client.js';
import { freshDatabase } from './helpers/pg.js';

const forum = readForum(join(import.meta.dirname, 'fixtures', 'forum-apiculture'));
const CONFIG = 'french';

/** Words only forbidden content holds (private message, staff category, unlisted, deleted, hidden, whisper). */
const NEVER = ['Buckfast', 'trésorerie', 'sondage', 'nourrisseur', 'miracle', 'mousse expansive', 'chuchoté'];

describe.each(['PostgreSQL', 'PGlite'] as const)('the French forum on %s', (engine) => {
  let db: SqlClient;
  let close: () => Promise<void>;
  beforeAll(async () => {
    if (engine === 'PostgreSQL') {
      const fresh = await freshDatabase('forum_fr');
      await loadForum(fresh.writer, forum, { textSearchConfig: CONFIG });
      await fresh.close();
      db = await connectPostgres(fresh.url);
      close = () => db.close();
    } else {
      const lite = await PGlite.create();
      await loadForum(pgliteWriter(lite), forum, { textSearchConfig: CONFIG });
      db = pgliteClient(lite, { owned: false });
      close = () => lite.close();
    }
  });
  afterAll(() => close?.());

  const topicsFor = async (text: string, grain: 'topic' | 'post') => {
    const p = new DiscourseProfile(db);
    const q = { text, config: CONFIG, limit: 10 };
    const items = grain === 'topic' ? await p.keywordTopics(q) : await p.keywordPosts(q);
    return items.map((i) => i.topic_id);
  };

  it.each([
    // Plural and conjugated forms meet their stems only through the french configuration.
    ['traitements à l’acide oxalique', 201],
    ['cristallisation rapide du miel de colza', 203],
    ['récupérer des essaims', 202],
    ['piéger les frelons', 209],
    ['les abeilles refusent de monter dans les hausses', 204],
  ])('“%s” finds topic %i first, on both grains', async (question, topic) => {
    expect((await topicsFor(question, 'topic'))[0]).toBe(topic);
    expect((await topicsFor(question, 'post'))[0]).toBe(topic);
  });

  it.each(NEVER)('never returns forbidden content: “%s”', async (word) => {
    expect(await topicsFor(word, 'topic')).toEqual([]);
    expect(await topicsFor(word, 'post')).toEqual([]);
  });

  it('counts public content and detects the language from the search rows', async () => {
    const config = ConfigSchema.parse({
      database: { text_search_config: CONFIG },
      retrieval: { channels: [{ name: 'kw', kind: 'keyword', grain: 'post' }] },
    });
    const checks = await diagnose(new DiscourseProfile(db), config);
    expect(checks.find((c) => c.id === 'visibility')?.sentence).toBe(
      '13 of 17 topics and 42 of 49 posts are public; only public content is ever retrieved or cited.',
    );
    expect(checks.find((c) => c.id === 'text_search')?.mark).toBe('pass');
    const detected = await detectDatabase(new DiscourseProfile(db));
    expect(detected).toMatchObject({
      text_search_config: 'french',
      text_search_source: 'most search rows have locale fr',
      public_topics: 13,
      public_posts: 42,
    });
  });
});

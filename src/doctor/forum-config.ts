import { parse } from 'yaml';
import { starterConfig } from '../config/starter.js';
import { validateConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { detectDatabase } from '../corpus/detect.js';
import type { DiscourseProfile } from '../corpus/discourse.js';
import { ConfigError, DatabaseError } from '../errors.js';

/**
 * What `doctor --db URL` judges a forum by when no config is given: the config `ragaudit init`
 * would write for it (src/config/starter.ts), every channel it finds enabled (each keyword table,
 * each discourse-ai pair of the first dimension), so the checks are of the forum's schema,
 * indexes, vectors, visibility and settings, never of the demo's channels or cases.
 */
export async function forumConfig(profile: DiscourseProfile): Promise<{ config: Config; note: string }> {
  // Only the channels and the search settings are read: the URL and the embedder's endpoint are
  // placeholders that are never used (doctor has its connection, and asks no service here).
  const env = { DATABASE_URL: 'postgres://unused', EMBEDDING_BASE_URL: 'http://unused' };
  let config: Config | undefined;
  try {
    const detected = await detectDatabase(profile, { sampleTopics: 0 });
    const text = starterConfig(detected, {
      name: 'forum',
      urlVariable: 'DATABASE_URL',
      casesFile: 'none.yml',
      embedderKnown: true,
      date: 'today',
    });
    config = validateConfig(parse(text), null, env);
  } catch (e) {
    // Not a Discourse database as far as detection can tell, or nothing to search with: the
    // keyword channel every Discourse has, so the checks say what is missing.
    if (!(e instanceof DatabaseError || e instanceof ConfigError)) throw e;
  }
  config ??= validateConfig(
    { retrieval: { top_k: 25, channels: [{ name: 'keyword_topics', kind: 'keyword', grain: 'topic' }] } },
    null,
    env,
  );
  const channels = config.retrieval.channels;
  const kinds = (k: 'keyword' | 'semantic') => channels.filter((c) => c.kind === k).length;
  return {
    config,
    note: `no config given: the forum is checked with the channels \`ragaudit init\` would write (${kinds('keyword')} keyword, ${kinds('semantic')} semantic), text search '${config.database.text_search_config}'; pass --config FILE to check a config, its services and its cases`,
  };
}

import type { StarterInput, StarterPair } from '../config/starter.js';
import { DatabaseError } from '../errors.js';
import { PUBLIC_POST, type DiscourseProfile } from './discourse.js';
import { LANGUAGES } from '../model/languages/index.js';
import { textSearchConfigs } from './retrieval-setup.js';
import { readSearchSettings } from './site-settings.js';

/**
 * What a Discourse database offers, read once to write a starting config (`ragaudit init`): the
 * search language, which keyword and embedding tables hold rows, each discourse-ai
 * (model_id, strategy_id) pair with its dimensions, and a few public topics to seed a first case
 * file. Reads only; never reads discourse-ai's endpoint URLs or keys.
 */

/** What detection finds is what the starting config is written from (src/config/starter.ts). */
export type DetectedPair = StarterPair;
export type DetectedDatabase = StarterInput;

/** Discourse locales (ISO 639-1, optionally with a region) → PostgreSQL's built-in configurations. */
const LOCALE_CONFIG: Readonly<Record<string, string>> = {
  ar: 'arabic',
  ca: 'catalan',
  da: 'danish',
  de: 'german',
  el: 'greek',
  en: 'english',
  es: 'spanish',
  fi: 'finnish',
  fr: 'french',
  hu: 'hungarian',
  id: 'indonesian',
  it: 'italian',
  lt: 'lithuanian',
  nb: 'norwegian',
  ne: 'nepali',
  nl: 'dutch',
  no: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  hy: 'armenian',
  ga: 'irish',
  yi: 'yiddish',
  eu: 'basque',
};

/** The configuration for a Discourse locale such as `fr`, `pt_BR` or `en-GB`; undefined when unknown. */
export function localeTextSearchConfig(locale: string): string | undefined {
  return LOCALE_CONFIG[locale.toLowerCase().split(/[_-]/)[0] ?? ''];
}

type Query = <T extends object>(sql: string, params?: unknown[]) => Promise<T[]>;

async function exists(query: Query, table: string): Promise<boolean> {
  const [r] = await query<{ ok: boolean }>('SELECT to_regclass($1::text) IS NOT NULL AS ok', [table]);
  return r?.ok === true;
}

/** Rows of a query that may fail on a schema this tool does not know; [] then. */
async function optional<T extends object>(query: Query, sql: string, params?: unknown[]): Promise<T[]> {
  try {
    return await query<T>(sql, params);
  } catch (e) {
    if (e instanceof DatabaseError) return [];
    throw e;
  }
}

export async function detectDatabase(
  profile: DiscourseProfile,
  opts: { sampleTopics?: number } = {},
): Promise<DetectedDatabase> {
  const query: Query = (sql, params) => profile.db.query(sql, params);
  const [server] = await query<{ v: string }>("SELECT current_setting('server_version') AS v");
  const known = await textSearchConfigs(query);

  // The search language: Discourse's default_locale site setting, else the most common locale of
  // its search rows, else english.
  let locale: { value: string; from: string } | undefined;
  if (await exists(query, 'site_settings')) {
    const [s] = await optional<{ value: string }>(
      query,
      "SELECT value FROM site_settings WHERE name = 'default_locale'",
    );
    if (s?.value) locale = { value: s.value, from: `site setting default_locale = ${s.value}` };
  }
  const keyword = { post: await exists(query, 'post_search_data'), topic: await exists(query, 'topic_search_data') };
  if (!locale && keyword.post) {
    const [l] = await optional<{ locale: string; n: string }>(
      query,
      'SELECT locale, count(*) AS n FROM post_search_data WHERE locale IS NOT NULL GROUP BY 1 ORDER BY 2 DESC LIMIT 1',
    );
    if (l?.locale) locale = { value: l.locale, from: `most search rows have locale ${l.locale}` };
  }
  const mapped = locale ? localeTextSearchConfig(locale.value) : undefined;
  const code = locale?.value.toLowerCase().split(/[_-]/)[0];
  const language = code && code in LANGUAGES ? { code, from: locale!.from } : undefined;
  const [textConfig, textSource] =
    mapped && known.includes(mapped)
      ? [mapped, locale!.from]
      : locale
        ? ['simple', `${locale.from}, which has no built-in text-search configuration here: 'simple' does no stemming`]
        : ['english', 'no locale found: english assumed'];

  const [ext] = await query<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'");
  const names = new Map<number, string>();
  if (await exists(query, 'embedding_definitions')) {
    // Only the id and display name: the table also holds endpoint URLs and keys, never read here.
    for (const r of await optional<{ id: number; name: string }>(
      query,
      'SELECT id, display_name AS name FROM embedding_definitions',
    ))
      names.set(Number(r.id), r.name);
  }
  const pairs: DetectedPair[] = [];
  if (ext) {
    for (const grain of ['post', 'topic'] as const) {
      const table = `ai_${grain}s_embeddings`;
      if (!(await exists(query, table))) continue;
      const rows = await query<{ m: number; s: number; n: string; d: number }>(
        `SELECT model_id AS m, strategy_id AS s, count(*) AS n, max(vector_dims(embeddings)) AS d FROM ${table} GROUP BY 1, 2 ORDER BY 1, 2`,
      );
      for (const r of rows) {
        const name = names.get(Number(r.m));
        pairs.push({
          grain,
          model_id: Number(r.m),
          strategy_id: Number(r.s),
          dimensions: Number(r.d),
          rows: Number(r.n),
          ...(name ? { model_name: name } : {}),
        });
      }
    }
  }

  const FROM = 'posts p JOIN topics t ON t.id = p.topic_id LEFT JOIN categories c ON c.id = t.category_id';
  const [counts] = await query<{ posts: string; topics: string }>(
    `SELECT count(*) AS posts, count(DISTINCT t.id) AS topics FROM ${FROM} WHERE ${PUBLIC_POST}`,
  );
  const sample = await query<{ topic_id: number; title: string }>(
    `SELECT t.id AS topic_id, t.title FROM ${FROM} WHERE ${PUBLIC_POST}
     GROUP BY t.id, t.title HAVING count(*) >= 2 ORDER BY count(*) DESC, t.id LIMIT $1`,
    [opts.sampleTopics ?? 10],
  );
  return {
    server: server?.v ?? 'unknown',
    text_search_config: textConfig,
    text_search_source: textSource,
    ...(language ? { language } : {}),
    ignore_accents: (await readSearchSettings(query)).ignoreAccents,
    keyword,
    ...(ext ? { pgvector: ext.v } : {}),
    pairs,
    public_topics: Number(counts?.topics ?? 0),
    public_posts: Number(counts?.posts ?? 0),
    sample_topics: sample.map((s) => ({ topic_id: Number(s.topic_id), title: s.title })),
  };
}

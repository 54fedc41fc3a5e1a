import { DatabaseError } from '../errors.js';

/**
 * The Discourse site settings that decide how the forum's own search reads a question:
 * `search_ignore_accents` (the indexer strips accents from the text before to_tsvector, and the
 * search strips them from the query the same way) and `default_locale`. Read from
 * `site_settings(name, data_type, value)`; a missing table or one this role may not read leaves
 * Discourse's defaults (accents kept).
 */

type Query = <T extends object>(sql: string, params?: unknown[]) => Promise<T[]>;

export interface SearchSettings {
  /** search_ignore_accents is on: questions are folded before they are searched. */
  ignoreAccents: boolean;
  /** default_locale, when set. */
  locale?: string;
  /** Where the values came from, in words (doctor prints it). */
  source: 'site_settings' | 'no site_settings table' | 'site_settings not readable by this role';
}

/** Discourse stores booleans as 't'/'f' text. */
const isOn = (v: string | undefined) => v !== undefined && /^(t|true|1)$/i.test(v.trim());

export async function readSearchSettings(query: Query): Promise<SearchSettings> {
  const [t] = await query<{ ok: boolean }>("SELECT to_regclass('site_settings') IS NOT NULL AS ok");
  if (t?.ok !== true) return { ignoreAccents: false, source: 'no site_settings table' };
  let rows: { name: string; value: string | null }[];
  try {
    rows = await query<{ name: string; value: string | null }>(
      'SELECT name, value FROM site_settings WHERE name = ANY ($1::text[])',
      [['search_ignore_accents', 'default_locale']],
    );
  } catch (e) {
    if (e instanceof DatabaseError) return { ignoreAccents: false, source: 'site_settings not readable by this role' };
    throw e;
  }
  const value = (n: string) => rows.find((r) => r.name === n)?.value ?? undefined;
  const locale = value('default_locale');
  return {
    ignoreAccents: isOn(value('search_ignore_accents')),
    ...(locale ? { locale } : {}),
    source: 'site_settings',
  };
}

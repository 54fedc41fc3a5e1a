import type { Config } from '../config/schema.js';
import { ConfigError, DatabaseError } from '../errors.js';
import type { DiscourseProfile } from './discourse.js';

/**
 * What the configured retrieval needs from the database, checked once before the first case:
 * a wrong text-search configuration, a missing discourse-ai table, vectors of another dimension or
 * a model_id/strategy_id with no rows would otherwise fail every case with the same error (exit 1,
 * one message repeated per case). Only what the configured channels read is checked.
 */

type Query = <T extends object>(sql: string, params?: unknown[]) => Promise<T[]>;

/** Text-search configurations visible on the search path (names as `to_tsvector` accepts them). */
export async function textSearchConfigs(query: Query): Promise<string[]> {
  const rows = await query<{ name: string }>(
    'SELECT cfgname AS name FROM pg_ts_config WHERE pg_ts_config_is_visible(oid) ORDER BY cfgname',
  );
  return rows.map((r) => r.name);
}

/** The problem with a text-search configuration name, or undefined when the database has it. */
export async function textSearchConfigProblem(query: Query, name: string, where: string): Promise<string | undefined> {
  const known = await textSearchConfigs(query);
  if (known.includes(name)) return undefined;
  return `database.text_search_config: text-search configuration '${name}' does not exist on ${where}; available: ${known.join(', ') || '(none)'}`;
}

/** Whether a table is there, and readable by this role (a table it may not read is not "missing"). */
async function tableState(query: Query, table: string): Promise<'ok' | 'missing' | 'unreadable'> {
  const rows = await query<{ ok: boolean; readable: boolean | null }>(
    `SELECT to_regclass($1::text) IS NOT NULL AS ok,
       CASE WHEN to_regclass($1::text) IS NOT NULL THEN has_any_column_privilege(to_regclass($1::text), 'SELECT') END AS readable`,
    [table],
  );
  if (rows[0]?.ok !== true) return 'missing';
  return rows[0].readable === false ? 'unreadable' : 'ok';
}

/** The (model_id, strategy_id) pairs a table holds: only asked on the error path (a full scan). */
async function presentPairs(query: Query, table: string): Promise<string> {
  try {
    const rows = await query<{ m: number; s: number }>(
      `SELECT DISTINCT model_id AS m, strategy_id AS s FROM ${table} ORDER BY 1, 2 LIMIT 20`,
    );
    return rows.length
      ? `; it holds ${rows.map((r) => `model_id ${r.m} strategy_id ${r.s}`).join(', ')}`
      : '; it is empty';
  } catch (e) {
    if (e instanceof DatabaseError) return '';
    throw e;
  }
}

/**
 * Checks the database against the configured channels; throws one ConfigError listing every
 * problem (exit 2). Database failures while checking stay DatabaseErrors (also exit 2).
 */
export async function checkRetrievalSetup(profile: DiscourseProfile, config: Config): Promise<void> {
  const query: Query = (sql, params) => profile.db.query(sql, params);
  // The embedding tables may live in a side database (database.vectors_url).
  const vquery: Query = (sql, params) => profile.vectorsDb.query(sql, params);
  const isVectors = (table: string) => table === profile.vectors.post || table === profile.vectors.topic;
  const where = profile.db.label;
  const channels = config.retrieval.channels;
  const problems: string[] = [];

  const tables = new Map<string, string>([
    ['posts', ''],
    ['topics', ''],
    ['categories', ''],
  ]);
  channels.forEach((ch, i) => {
    const at = `retrieval.channels[${i}] (${ch.name})`;
    const table = ch.kind === 'keyword' ? `${ch.grain}_search_data` : profile.vectors[ch.grain];
    if (!tables.get(table)) tables.set(table, at);
  });
  const missing = new Set<string>();
  for (const [table, at] of tables) {
    const state = await tableState(isVectors(table) ? vquery : query, table);
    if (state === 'ok') continue;
    missing.add(table);
    if (state === 'unreadable') {
      problems.push(
        `${at ? `${at}: ` : ''}table ${table} on ${isVectors(table) ? profile.vectorsDb.label : where} is not readable by this role: it needs SELECT on it`,
      );
      continue;
    }
    const why = table.includes('ai_')
      ? ": semantic channels read discourse-ai's embeddings (is the discourse-ai plugin installed with embeddings enabled, and is this its database?)"
      : ': the database does not look like a Discourse database (check the URL)';
    problems.push(
      `${at ? `${at}: ` : ''}table ${table} does not exist on ${isVectors(table) ? profile.vectorsDb.label : where}${why}`,
    );
  }

  if (channels.some((c) => c.kind === 'keyword')) {
    const problem = await textSearchConfigProblem(query, config.database.text_search_config, where);
    if (problem) problems.push(problem);
  }

  const dims = config.embedder.dimensions;
  const seen = new Set<string>();
  for (const [i, ch] of channels.entries()) {
    if (ch.kind !== 'semantic') continue;
    const table = profile.vectors[ch.grain];
    const key = `${table}|${ch.model_id}|${ch.strategy_id}`;
    if (missing.has(table) || seen.has(key)) continue;
    seen.add(key);
    const at = `retrieval.channels[${i}] (${ch.name})`;
    const pair = `model_id ${ch.model_id}, strategy_id ${ch.strategy_id}`;
    const rows = await vquery<{ one: number }>(
      `SELECT 1 AS one FROM ${table} WHERE model_id = $1 AND strategy_id = $2 LIMIT 1`,
      [ch.model_id, ch.strategy_id],
    );
    if (rows.length === 0) {
      problems.push(`${at}: no vectors in ${table} for ${pair}${await presentPairs(vquery, table)}`);
      continue;
    }
    // One row tells the dimension: discourse-ai stores one model's vectors at one size.
    const [row] = await vquery<{ d: number }>(
      `SELECT vector_dims(embeddings) AS d FROM ${table} WHERE model_id = $1 AND strategy_id = $2 LIMIT 1`,
      [ch.model_id, ch.strategy_id],
    );
    const stored = Number(row?.d);
    if (stored !== dims) {
      problems.push(
        `${at}: the vectors in ${table} for ${pair} have ${stored} dimensions, but the embedder makes ${dims} (embedder.dimensions, embedder.model): query and stored vectors must come from the same model`,
      );
    }
  }

  if (problems.length)
    throw new ConfigError(`the database at ${where} does not fit the configured retrieval`, problems);
}

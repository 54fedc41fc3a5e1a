import { join, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { resolveFrom, type LoadedConfig } from '../config/load.js';
import { openDemoDatabase } from '../demo/demo-db.js';
import { discardPrestarted } from '../db/pglite-worker.js';
import { DiscourseProfile } from '../corpus/discourse.js';
import { checkRetrievalSetup } from '../corpus/retrieval-setup.js';
import { connectPostgres, type SqlClient } from '../db/sql-client.js';
import type { Embedder } from '../embedding/embedder.js';
import { RetrievalGraph } from '../retrieval/graph.js';
import { TitleFilter } from '../retrieval/title-filter.js';
import type { Reranker } from '../rerank/types.js';
import { createEmbedder, createReranker } from './providers.js';
import { ConfigError, rememberSecrets } from '../errors.js';
import { urlSecrets } from '../llm/remote.js';
import { providerEnvVariables } from '../providers/catalog.js';
import type { Environment } from '../providers/env.js';
import type { Component } from '../providers/registry.js';

/** A component of a run, as recorded in results: offline stand-ins are labelled. */
export interface ComponentInfo {
  id: string;
  offline: boolean;
  label: string;
}

/** How a component is recorded: its id, and an offline stand-in labelled as one (`what` it is not). */
export function describeComponent(c: Component, what: string): ComponentInfo {
  return { id: c.id, offline: c.offline, label: c.offline ? `${c.id} (OFFLINE STAND-IN, not a ${what})` : c.id };
}

/** Everything a run needs, built once from the config and handed down (no globals). */
export interface RunContext {
  loaded: LoadedConfig;
  config: Config;
  db: SqlClient;
  profile: DiscourseProfile;
  embedder: Embedder;
  reranker?: Reranker;
  graph: RetrievalGraph;
  components: Record<string, ComponentInfo>;
  /** Secret values in use (API keys, DB password), checked absent from every output. */
  secrets: string[];
  cacheDir: string;
  /** Closes the databases; a second call waits for the first. */
  close(): Promise<void>;
}

/**
 * Components a program passes in instead of the ones the config names. Each says what it is
 * (`id`) and whether it is an offline stand-in, and is recorded in the results like a built one.
 */
export interface GivenComponents {
  /** A database client, used as it is and left open by `close()` (its owner closes it). */
  db?: SqlClient | undefined;
  embedder?: Embedder | undefined;
  /** Needs an enabled `rerank:` section in the config (which node it reranks). */
  reranker?: Reranker | undefined;
}

export interface ContextOptions extends GivenComponents {
  /** `--db` / DATABASE_URL: a real PostgreSQL instead of the config's. */
  dbUrl?: string;
  /** The environment the providers' variables come from (the CLI passes `process.env`). */
  env: Environment;
  cwd: string;
  onProgress?: (message: string) => void;
}

/**
 * Secret values from the config and environment: API keys, and what URLs carry (a password, a
 * token as a web URL's user name, `?api-key=`, `?access-token=`, `?sig=`, `?auth=` …).
 */
export function collectSecrets(config: Config, env: Environment, dbUrl?: string): string[] {
  // Every variable a provider reads (OPENAI_API_KEY, ANTHROPIC_API_KEY, RERANKER_API_KEY, their base URLs).
  const vars = providerEnvVariables();
  const out = [
    config.embedder.api_key,
    config.generator.api_key,
    config.judge.api_key,
    config.rerank?.api_key,
    ...vars.keys.map((k) => env[k]),
  ];
  const urls = [
    dbUrl,
    config.database.url,
    config.database.vectors_url,
    config.rerank?.url,
    config.generator.base_url,
    config.judge.base_url,
    config.embedder.base_url,
    ...vars.urls.map((k) => env[k]),
    env.DATABASE_URL,
  ];
  for (const url of urls) out.push(...urlSecrets(url));
  const secrets = [...new Set(out.filter((s): s is string => typeof s === 'string' && s.length >= 6))];
  rememberSecrets(secrets);
  return secrets;
}

/**
 * The database a config reads: `dbUrl` (or the config's url) on a real PostgreSQL, else the
 * embedded demo forum (built on first use under the cache directory).
 */
export async function openDatabase(
  config: Config,
  opts: Pick<ContextOptions, 'dbUrl' | 'cwd' | 'onProgress'> & { forumDir?: string | undefined },
): Promise<SqlClient> {
  const dbUrl = opts.dbUrl ?? config.database.url;
  // The embedded demo may have been started ahead (src/cli/ragaudit.ts); a real database does not need it.
  if (dbUrl) await discardPrestarted();
  return dbUrl
    ? connectPostgres(dbUrl, {
        statementTimeoutMs: config.database.statement_timeout_ms,
        connectTimeoutMs: config.database.connect_timeout_ms,
        ...(config.database.connections ? { max: config.database.connections } : {}),
      })
    : openDemoDatabase({
        cacheDir: join(resolve(opts.cwd, config.cache_dir), 'demo-db'),
        textSearchConfig: config.database.text_search_config,
        language: config.language,
        ...(opts.forumDir ? { forumDir: opts.forumDir } : {}),
        statementTimeoutMs: config.database.statement_timeout_ms,
        ...(config.database.connections ? { workers: config.database.connections } : {}),
        onProgress: opts.onProgress,
      });
}

/** The forum directory the config's embedded demo is built from (database.demo_forum, resolved), as openDatabase takes it. */
export function demoForum(loaded: LoadedConfig): { forumDir?: string } {
  const forum = loaded.config.database.demo_forum;
  return forum === undefined ? {} : { forumDir: resolveFrom(loaded, forum) };
}

/** The side database of vectors a config names (database.vectors_url), read-only like the forum; none by default. */
export async function openVectorsDatabase(config: Config): Promise<SqlClient | undefined> {
  const url = config.database.vectors_url;
  return url
    ? connectPostgres(url, {
        statementTimeoutMs: config.database.statement_timeout_ms,
        connectTimeoutMs: config.database.connect_timeout_ms,
      })
    : undefined;
}

/**
 * Opens the database and builds the retrieval graph for a config, with the embedder and reranker
 * it names or the ones passed in.
 */
export async function createRunContext(loaded: LoadedConfig, opts: ContextOptions): Promise<RunContext> {
  const config = loaded.config;
  if (opts.reranker && !config.rerank?.enabled)
    throw new ConfigError('a reranker was passed in, but the config has no enabled rerank section (rerank.node)');
  const cacheDir = resolve(opts.cwd, config.cache_dir);
  const dbUrl = opts.dbUrl ?? config.database.url;
  const givenDb = opts.db;
  const db = givenDb ?? (await openDatabase(config, { ...opts, ...(dbUrl ? { dbUrl } : {}), ...demoForum(loaded) }));
  let vectorsDb: SqlClient | undefined;
  try {
    vectorsDb = await openVectorsDatabase(config);
    const profile = new DiscourseProfile(db, { vectorsSchema: config.database.vectors_schema, vectorsDb });
    // Before the first case: a database that cannot serve the channels ends the command here (exit 2).
    await checkRetrievalSetup(profile, config);
    const embedder: Embedder = opts.embedder ?? createEmbedder(config, opts.env);
    const reranker = config.rerank?.enabled ? (opts.reranker ?? createReranker(config, opts.env)) : undefined;
    const needsGate = config.retrieval.channels.some((c) => c.title_gate);
    const titleFilter = needsGate
      ? new TitleFilter(
          (await profile.publicTopicTitles()).map((t) => t.title),
          config.retrieval.title_gate_max_df,
        )
      : undefined;
    const graph = new RetrievalGraph(config, {
      profile,
      embedder,
      ...(reranker ? { reranker } : {}),
      ...(titleFilter ? { titleFilter } : {}),
    });
    const components: Record<string, ComponentInfo> = {
      database: givenDb
        ? { id: db.label, offline: false, label: db.label }
        : { id: db.label, offline: !dbUrl, label: dbUrl ? db.label : `${db.label} (embedded demo forum)` },
      embedder: describeComponent(embedder, 'semantic embedding model'),
    };
    if (reranker) components.reranker = describeComponent(reranker, 'cross-encoder');
    if (vectorsDb) components.vectors = { id: vectorsDb.label, offline: false, label: `${vectorsDb.label} (vectors)` };
    const sideDb = vectorsDb;
    let closing: Promise<void> | undefined;
    return {
      loaded,
      config,
      db,
      profile,
      embedder,
      ...(reranker ? { reranker } : {}),
      graph,
      components,
      secrets: collectSecrets(config, opts.env, dbUrl),
      cacheDir,
      // Closed once, however many times it is called (a run closes it when its last case is done).
      close: () =>
        (closing ??= (async () => {
          await sideDb?.close();
          if (!givenDb) await db.close();
        })()),
    };
  } catch (e) {
    await vectorsDb?.close().catch(() => undefined);
    if (!givenDb) await db.close().catch(() => undefined);
    throw e;
  }
}

/** Resolves the config's case files. */
export function casePaths(loaded: LoadedConfig): string[] {
  return loaded.config.cases.map((p) => resolveFrom(loaded, p));
}

import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Embedder } from '../embedding/embedder.js';
import { vectorLiteral } from '../embedding/hash-embedder.js';
import { ConfigError, DatabaseError, InputError } from '../errors.js';
import { PUBLIC_POST, SCHEMA_NAME } from './discourse.js';
import { postEmbeddingText, topicEmbeddingText } from './embedding-text.js';
import { APPLICATION_NAME, CONNECT_TIMEOUT_MS, describeUrl, type SqlClient } from '../db/sql-client.js';

/**
 * `ragaudit embed`: vectors for a new embedding model or strategy, computed from the forum's
 * public posts and topics and written in discourse-ai's shape into a separate target (another
 * database, or another schema of the same one), never into the source, which is only read. A team
 * measures the new vectors before deploying them. Batches are committed one by one with a digest
 * of the embedded text, so a killed run resumes where it stopped and an edited post is embedded
 * again.
 */

export interface EmbedTarget {
  /** Where the vectors go (written with this connection; the source connection stays read-only). */
  url: string;
  /** Schema in the target (default `public`); with the source's own database, a schema of its own. */
  schema?: string;
}

export interface BackfillOptions {
  /** The forum, read-only. */
  source: SqlClient;
  target: EmbedTarget;
  embedder: Embedder;
  model_id: number;
  strategies: readonly number[];
  /** Also embed topics (discourse-ai's topic table), default true. */
  topics?: boolean;
  /** Opening the target's connection ends within this, ms (database.connect_timeout_ms; default 5 s). */
  connect_timeout_ms?: number;
  /** Posts read, embedded and committed at once (default 256). */
  batch_size?: number;
  onProgress?: (done: number, total: number) => void;
  /** Stops after the batch in flight is committed. */
  signal?: AbortSignal;
}

export interface BackfillReport {
  target: string;
  schema: string;
  model_id: number;
  dimensions: number;
  /** Per table and strategy: rows written, rows already current, public items in all. */
  tables: { table: string; strategy_id: number; written: number; current: number; total: number }[];
  stopped: boolean;
}

/** An identity of a database: cluster, database and the schema vectors would go to. */
interface Identity {
  cluster: string;
  database: string;
}

async function identityOf(query: (sql: string) => Promise<Record<string, unknown>[]>): Promise<Identity> {
  let cluster: string | undefined;
  try {
    const [r] = await query('SELECT system_identifier::text AS id FROM pg_control_system()');
    if (r?.id) cluster = String(r.id);
  } catch {
    // Not every role may read the control file: the server's address and port identify it then.
  }
  const [r] = await query(
    "SELECT current_database() AS db, coalesce(host(inet_server_addr()), 'socket') || ':' || coalesce(inet_server_port()::text, current_setting('port')) AS at",
  );
  return { cluster: cluster ?? String(r?.at), database: String(r?.db) };
}

const ident = (schema: string, table: string) => `"${schema}"."${table}"`;

function ddl(schema: string): string {
  const table = (name: string, idCol: string) => `CREATE TABLE IF NOT EXISTS ${ident(schema, name)} (
    ${idCol} integer NOT NULL, model_id integer NOT NULL, model_version integer NOT NULL DEFAULT 1,
    strategy_id integer NOT NULL, strategy_version integer NOT NULL DEFAULT 1, digest text,
    embeddings halfvec NOT NULL, created_at timestamp NOT NULL DEFAULT now(), updated_at timestamp NOT NULL DEFAULT now(),
    UNIQUE (model_id, strategy_id, ${idCol}))`;
  return [
    `CREATE SCHEMA IF NOT EXISTS "${schema}"`,
    table('ai_posts_embeddings', 'post_id'),
    table('ai_topics_embeddings', 'topic_id'),
    `CREATE TABLE IF NOT EXISTS ${ident(schema, IDENTITY_TABLE)} (
    table_name text NOT NULL, model_id integer NOT NULL, strategy_id integer NOT NULL, embedder text NOT NULL,
    dimensions integer NOT NULL, text_strategy text NOT NULL, recorded_at timestamp NOT NULL DEFAULT now(),
    PRIMARY KEY (table_name, model_id, strategy_id))`,
  ].join(';\n');
}

const digestOf = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);

/**
 * What made a vector: the embedder (provider and model: its id without the server address, so
 * moving a server does not re-embed), its dimensions and the text strategy. A row's digest covers
 * this identity with the text, so a row another model or strategy wrote is never "current".
 */
export interface EmbedderIdentity {
  embedder: string;
  dimensions: number;
  text_strategy: string;
}

export function embedderIdentity(embedder: Embedder, grain: 'post' | 'topic', strategy: number): EmbedderIdentity {
  return {
    embedder: embedder.id.replace(/@.*$/, ''),
    dimensions: embedder.dimensions,
    text_strategy: grain === 'topic' ? 'topic: header and first post' : `post strategy ${strategy}`,
  };
}

/** The digest stored with a row: its text under an identity. */
export const rowDigest = (identity: EmbedderIdentity, text: string) =>
  digestOf(`${identity.embedder}\n${identity.dimensions}\n${identity.text_strategy}\n${text}`);

/** The identity table beside discourse-ai's: which embedder wrote each (table, model_id, strategy_id). */
const IDENTITY_TABLE = 'ragaudit_embedder_identity';

interface PostRow {
  id: number;
  topic_id: number;
  post_number: number;
  raw: string;
  title: string;
  category: string | null;
  tags: string[] | null;
  first_raw: string | null;
  parent_raw: string | null;
}

/**
 * Checks a target schema before any connection: a name the SQL can quote, and not one of
 * PostgreSQL's own schemas (information_schema, and pg_catalog, pg_toast and every other pg_*
 * name, which PostgreSQL reserves), where tables must never be created.
 */
export function checkTargetSchema(schema: string): void {
  if (!SCHEMA_NAME.test(schema))
    throw new InputError(`--target-schema ${schema}: a schema name is lowercase letters, digits and _`);
  if (schema === 'information_schema' || schema.startsWith('pg_'))
    throw new InputError(
      `--target-schema ${schema}: a system schema of PostgreSQL; give the vectors a schema of their own (e.g. ragaudit_vectors)`,
    );
}

/** Fills the target; returns what it wrote. */
export async function backfillEmbeddings(o: BackfillOptions): Promise<BackfillReport> {
  const schema = o.target.schema ?? 'public';
  checkTargetSchema(schema);
  for (const s of o.strategies)
    if (!Number.isInteger(s) || s < 1) throw new InputError(`--strategy ${s}: a strategy id is a positive integer`);
  const batchSize = o.batch_size ?? 256;
  const label = describeUrl(o.target.url);
  const { default: driver } = await import('pg');
  const target: pg.Client = new driver.Client({
    connectionString: o.target.url,
    connectionTimeoutMillis: o.connect_timeout_ms ?? CONNECT_TIMEOUT_MS,
    application_name: `${APPLICATION_NAME} embed`,
  });
  try {
    await target.connect();
  } catch (e) {
    throw new DatabaseError(`cannot connect to the embedding target ${label}: ${(e as Error).message}`);
  }
  const source = o.source;
  try {
    const sourceQuery = (sql: string) => source.query<Record<string, unknown>>(sql);
    const targetQuery = async (sql: string) => (await target.query(sql)).rows as Record<string, unknown>[];
    const [a, b] = [await identityOf(sourceQuery), await identityOf(targetQuery)];
    const [srcSchema] = await source.query<{ s: string }>('SELECT current_schema() AS s');
    if (a.cluster === b.cluster && a.database === b.database && schema === (srcSchema?.s ?? 'public'))
      throw new InputError(
        `the embedding target ${label} (schema ${schema}) is the source database itself: ragaudit never writes into the forum; give another database, or --target-schema for a schema of its own`,
      );

    try {
      await target.query('CREATE EXTENSION IF NOT EXISTS vector');
      await target.query(ddl(schema));
    } catch (e) {
      throw new ConfigError(
        `cannot prepare the embedding target ${label}: ${(e as Error).message} (the target needs pgvector and a role that may create tables in schema ${schema})`,
      );
    }

    const hasTags = (await source.query<{ ok: boolean }>("SELECT to_regclass('topic_tags') IS NOT NULL AS ok"))[0]?.ok;
    const tagsSql = hasTags
      ? '(SELECT array_agg(tg.name ORDER BY tg.name) FROM topic_tags tt JOIN tags tg ON tg.id = tt.tag_id WHERE tt.topic_id = t.id)'
      : 'NULL::text[]';
    const FROM = 'posts p JOIN topics t ON t.id = p.topic_id LEFT JOIN categories c ON c.id = t.category_id';
    const [counts] = await source.query<{ posts: string; topics: string }>(
      `SELECT count(*) AS posts, count(DISTINCT t.id) AS topics FROM ${FROM} WHERE ${PUBLIC_POST}`,
    );
    const totalPosts = Number(counts?.posts ?? 0);
    const totalTopics = o.topics === false ? 0 : Number(counts?.topics ?? 0);
    const total = (totalPosts + totalTopics) * o.strategies.length;
    const report: BackfillReport = {
      target: label,
      schema,
      model_id: o.model_id,
      dimensions: o.embedder.dimensions,
      tables: [],
      stopped: false,
    };
    let done = 0;
    o.onProgress?.(0, total);

    // The embedder answers before any stored row is called current: with the server down, no
    // "already current" is reported for rows nobody can vouch for.
    try {
      await o.embedder.preflight?.();
    } catch (e) {
      if (e instanceof ConfigError) throw e;
      throw new ConfigError(`the embedder ${o.embedder.id} cannot be used: ${(e as Error).message}`);
    }

    const upsert = async (
      table: string,
      idCol: string,
      strategy: number,
      items: { id: number; text: string }[],
      tally: { written: number; current: number },
    ) => {
      const identity = embedderIdentity(o.embedder, table === 'ai_topics_embeddings' ? 'topic' : 'post', strategy);
      const digests = items.map((i) => rowDigest(identity, i.text));
      const present = await target.query<{ id: number; digest: string | null }>(
        `SELECT ${idCol} AS id, digest FROM ${ident(schema, table)} WHERE model_id = $1 AND strategy_id = $2 AND ${idCol} = ANY($3::int[])`,
        [o.model_id, strategy, items.map((i) => i.id)],
      );
      const have = new Map(present.rows.map((r) => [Number(r.id), r.digest]));
      const todo = items
        .map((item, i) => ({ ...item, digest: digests[i]! }))
        .filter((i) => have.get(i.id) !== i.digest);
      tally.current += items.length - todo.length;
      if (todo.length) {
        const vectors = await o.embedder.embed(todo.map((t) => t.text));
        if (vectors.length !== todo.length)
          throw new DatabaseError(`the embedder returned ${vectors.length} vectors for ${todo.length} texts`);
        const params: unknown[] = [];
        const tuples = todo.map((t, i) => {
          params.push(t.id, o.model_id, strategy, t.digest, vectorLiteral(vectors[i]!));
          const n = params.length;
          return `($${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n}::halfvec)`;
        });
        await target.query('BEGIN');
        try {
          await target.query(
            `INSERT INTO ${ident(schema, table)} (${idCol}, model_id, strategy_id, digest, embeddings) VALUES ${tuples.join(', ')}
             ON CONFLICT (model_id, strategy_id, ${idCol}) DO UPDATE SET digest = EXCLUDED.digest, embeddings = EXCLUDED.embeddings, updated_at = now()`,
            params,
          );
          await target.query('COMMIT');
        } catch (e) {
          await target.query('ROLLBACK').catch(() => undefined);
          throw e;
        }
        tally.written += todo.length;
      }
      done += items.length;
      o.onProgress?.(done, total);
    };

    /** One table under one strategy, keyset-paginated by id; false when stopped. */
    const fill = async (
      table: string,
      idCol: string,
      strategy: number,
      total: number,
      sql: string,
      textOf: (r: PostRow) => string,
    ): Promise<boolean> => {
      const tally = { table, strategy_id: strategy, written: 0, current: 0, total };
      report.tables.push(tally);
      const id = embedderIdentity(o.embedder, idCol === 'topic_id' ? 'topic' : 'post', strategy);
      await target.query(
        `INSERT INTO ${ident(schema, IDENTITY_TABLE)} (table_name, model_id, strategy_id, embedder, dimensions, text_strategy)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (table_name, model_id, strategy_id) DO UPDATE SET
         embedder = EXCLUDED.embedder, dimensions = EXCLUDED.dimensions, text_strategy = EXCLUDED.text_strategy, recorded_at = now()`,
        [table, o.model_id, strategy, id.embedder, id.dimensions, id.text_strategy],
      );
      for (let last = 0; ;) {
        if (o.signal?.aborted) return false;
        const rows = await source.query<PostRow>(sql, [last, batchSize]);
        if (!rows.length) return true;
        last = Number(rows[rows.length - 1]!.id);
        const items = rows.map((r) => ({ id: Number(r.id), text: textOf(r) }));
        await upsert(table, idCol, strategy, items, tally);
      }
    };
    const parts = (r: PostRow) => ({ ...r, category: r.category ?? '', tags: r.tags ?? [] });
    const POSTS = `SELECT p.id, p.topic_id, p.post_number, p.raw, t.title, c.name AS category, ${tagsSql} AS tags,
         (SELECT f.raw FROM posts f WHERE f.topic_id = p.topic_id AND f.post_number = 1) AS first_raw,
         (SELECT r.raw FROM posts r WHERE r.topic_id = p.topic_id AND r.post_number = p.reply_to_post_number) AS parent_raw
       FROM ${FROM} WHERE ${PUBLIC_POST} AND p.id > $1 ORDER BY p.id LIMIT $2`;
    // A topic's text: its header and its first public post.
    const TOPICS = `SELECT DISTINCT ON (t.id) t.id, t.title, c.name AS category, ${tagsSql} AS tags, p.raw
       FROM ${FROM} WHERE ${PUBLIC_POST} AND t.id > $1 ORDER BY t.id, p.post_number LIMIT $2`;
    for (const strategy of o.strategies) {
      const go =
        (await fill('ai_posts_embeddings', 'post_id', strategy, totalPosts, POSTS, (r) =>
          postEmbeddingText(parts(r), strategy),
        )) &&
        (o.topics === false ||
          (await fill('ai_topics_embeddings', 'topic_id', strategy, totalTopics, TOPICS, (r) =>
            topicEmbeddingText(parts(r)),
          )));
      if (!go) {
        report.stopped = true;
        break;
      }
    }
    return report;
  } finally {
    await target.end().catch(() => undefined);
  }
}

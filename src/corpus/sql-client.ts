import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import { DatabaseError, redact } from '../errors.js';

/**
 * The one way the audit reads a database. Every `query` runs in a READ ONLY transaction with
 * a statement timeout, over either a real PostgreSQL (pg.Pool) or the embedded PGlite.
 */
export interface SqlClient {
  readonly kind: 'pg' | 'pglite';
  /** Where it points, without credentials (e.g. `postgres://127.0.0.1:5433/forum` or `embedded demo`). */
  readonly label: string;
  query<T extends object>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** Default statement timeout for audit queries, ms. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;

/** Parses a connection URL into a credential-free `host:port/db` label. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    // Its parts cannot be told apart, so none of it is shown (it may hold a password).
    return '(unparseable database URL)';
  }
}

class PgSqlClient implements SqlClient {
  readonly kind = 'pg' as const;
  constructor(
    private readonly pool: pg.Pool,
    readonly label: string,
    private readonly timeoutMs: number,
  ) {}

  async query<T extends object>(sql: string, params: unknown[] = []): Promise<T[]> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw connectionError(this.label, e);
    }
    try {
      await client.query('BEGIN READ ONLY');
      await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(this.timeoutMs))}`);
      const res = await client.query(sql, params);
      await client.query('COMMIT');
      return res.rows as T[];
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw new DatabaseError(`query failed on ${this.label}: ${redact((e as Error).message)}`, { cause: e });
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

function connectionError(label: string, e: unknown): DatabaseError {
  const err = e as NodeJS.ErrnoException;
  const why = err.code ?? redact(err.message ?? String(e));
  return new DatabaseError(`cannot connect to PostgreSQL at ${label}: ${why}`, { cause: e });
}

/** Opens a pool on a real PostgreSQL and checks that it answers. */
export async function connectPostgres(url: string, opts: { statementTimeoutMs?: number; max?: number } = {}): Promise<SqlClient> {
  const label = describeUrl(url);
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 4, connectionTimeoutMillis: 5_000 });
  // An idle client's error must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  const client = new PgSqlClient(pool, label, opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS);
  try {
    await client.query('SELECT 1');
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw e instanceof DatabaseError && e.message.startsWith('cannot connect') ? e : connectionError(label, (e as Error).cause ?? e);
  }
  return client;
}

class PgliteSqlClient implements SqlClient {
  readonly kind = 'pglite' as const;
  constructor(
    private readonly db: PGlite,
    readonly label: string,
    private readonly timeoutMs: number,
    private readonly owned: boolean,
    private readonly onClose?: () => void,
  ) {}

  async query<T extends object>(sql: string, params: unknown[] = []): Promise<T[]> {
    try {
      return await this.db.transaction(async (tx) => {
        await tx.exec('SET TRANSACTION READ ONLY');
        await tx.exec(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(this.timeoutMs))}`);
        const res = await tx.query<T>(sql, params);
        return res.rows;
      });
    } catch (e) {
      throw new DatabaseError(`query failed on ${this.label}: ${redact((e as Error).message)}`, { cause: e });
    }
  }

  async close(): Promise<void> {
    if (this.owned) await this.db.close();
    this.onClose?.();
  }
}

/** Wraps an open PGlite. `owned` closes it with the client; `onClose` runs after (cleanup). */
export function pgliteClient(db: PGlite, opts: { label?: string; statementTimeoutMs?: number; owned?: boolean; onClose?: () => void } = {}): SqlClient {
  return new PgliteSqlClient(db, opts.label ?? 'embedded PGlite', opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS, opts.owned ?? true, opts.onClose);
}

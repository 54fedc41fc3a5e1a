import type pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import { DatabaseError } from '../errors.js';
import { DATABASE_DEFAULTS } from '../setting-defaults.js';
import { connectFailure, deadlineFailure, queryFailure } from './db-errors.js';

/**
 * The one way the audit reads a database. Every `query` is ONE statement (extended protocol, so
 * `COMMIT; INSERT …` is refused by the server instead of leaving the transaction) inside its own
 * READ ONLY transaction with a statement timeout, over either a real PostgreSQL (pg.Pool) or PGlite.
 */
export interface SqlClient {
  readonly kind: 'pg' | 'pglite';
  /** Where it points, without credentials (e.g. `postgres://127.0.0.1:5433/forum` or `embedded demo`). */
  readonly label: string;
  /**
   * `opts.settings`: run-time parameters set for this statement's transaction only (`SET LOCAL`
   * through `set_config(name, value, true)`, both bound), e.g. `hnsw.ef_search` for an ANN search.
   */
  query<T extends object>(sql: string, params?: unknown[], opts?: QueryOptions): Promise<T[]>;
  close(): Promise<void>;
}

/** What one statement may carry beside its SQL and parameters. */
export interface QueryOptions {
  /** `[name, value]` pairs set with SET LOCAL semantics before the statement, in its transaction. */
  settings?: readonly (readonly [string, string])[];
  /**
   * Work prepared ahead of need (a batch's statements): where statements wait in one queue (the
   * embedded database's worker), it runs after every statement that is not, but the one the worker
   * already holds, so a case's own queries (its citation check) wait behind at most one batch
   * statement, not the next batches. PostgreSQL ignores it.
   */
  background?: boolean;
}

/** The statement that sets one run-time parameter for the current transaction only (SET LOCAL). */
export const SET_LOCAL = 'SELECT set_config($1, $2, true)';

/** Default statement timeout for audit queries, ms. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = DATABASE_DEFAULTS.statementTimeoutMs;

/** How long opening a connection may take, ms. */
export const CONNECT_TIMEOUT_MS = DATABASE_DEFAULTS.connectTimeoutMs;

/** What the audit's connections call themselves in pg_stat_activity (a URL's own value wins). */
export const APPLICATION_NAME = 'ragaudit';

/**
 * The client-side deadline of one query: past the server's statement timeout by a margin, so the
 * server's own cancellation (a clear 57014) comes first whenever the server still answers, and a
 * frozen connection (no answer at all) still ends.
 */
export function clientDeadlineMs(statementTimeoutMs: number): number {
  return statementTimeoutMs + Math.min(5_000, Math.max(1_000, statementTimeoutMs));
}

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

/** `queryMode` is pg's switch to the extended protocol even without parameters (not in @types/pg). */
type ExtendedQuery = pg.QueryConfig & { queryMode: 'extended' };

class PgSqlClient implements SqlClient {
  readonly kind = 'pg' as const;
  /** Statements holding a connection of the pool, and those waiting for one (in order). */
  private busy = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly pool: pg.Pool,
    readonly label: string,
    private readonly timeoutMs: number,
    private readonly connectTimeoutMs = CONNECT_TIMEOUT_MS,
    private readonly size = 4,
  ) {}

  /**
   * Waits for a free connection of the pool. pg's pool bounds its wait for a client by the connect
   * timeout too, so a statement queued behind long ones (a batch of a few hundred questions on a
   * large forum) failed as "cannot connect ... no answer within 5000 ms" though the server was
   * answering: statements wait here, and the pool is asked only when one of its clients is free.
   */
  private async slot(): Promise<void> {
    if (this.busy < this.size) {
      this.busy++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the connection's place to the next statement waiting, if any. */
  private free(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy--;
  }

  async query<T extends object>(sql: string, params: unknown[] = [], opts: QueryOptions = {}): Promise<T[]> {
    await this.slot();
    try {
      return await this.held<T>(sql, params, opts);
    } finally {
      this.free();
    }
  }

  private async held<T extends object>(sql: string, params: unknown[], opts: QueryOptions): Promise<T[]> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw connectFailure(this.label, e, this.connectTimeoutMs);
    }
    const deadlineMs = clientDeadlineMs(this.timeoutMs);
    let timer: NodeJS.Timeout | undefined;
    let broken = false;
    const work = this.run<T>(client, sql, params, opts.settings ?? []);
    // After a deadline the work settles later (when its socket is destroyed): nobody awaits it then.
    work.catch(() => undefined);
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        broken = true;
        reject(deadlineFailure(this.label, deadlineMs, this.timeoutMs));
      }, deadlineMs);
    });
    try {
      return await Promise.race([work, deadline]);
    } catch (e) {
      if (e instanceof DatabaseError) throw e;
      // A server error (it has a SQLSTATE) leaves the connection usable once rolled back; anything
      // else (reset, closed socket) means it is not, and it must not go back to the pool.
      if (typeof (e as { code?: unknown }).code === 'string' && /^[0-9A-Z]{5}$/.test((e as { code: string }).code)) {
        await client.query('ROLLBACK').catch(() => (broken = true));
      } else {
        broken = true;
      }
      throw queryFailure(this.label, e, this.timeoutMs);
    } finally {
      clearTimeout(timer);
      // Releasing with an error destroys the connection (pg ends a client with a hung query by force).
      client.release(broken ? new Error('connection dropped') : undefined);
    }
  }

  private async run<T>(
    client: pg.PoolClient,
    sql: string,
    params: unknown[],
    settings: NonNullable<QueryOptions['settings']>,
  ): Promise<T[]> {
    // One round trip for both (the simple protocol carries two statements of this fixed text):
    // a per-query statement of a few ms spent a third of its time on the client's round trips.
    await client.query(`BEGIN READ ONLY; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(this.timeoutMs))}`);
    for (const [name, value] of settings) await client.query(SET_LOCAL, [name, value]);
    const q: ExtendedQuery = { text: sql, values: params, queryMode: 'extended' };
    const res = await client.query(q);
    await client.query('COMMIT');
    return res.rows as T[];
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** Opens a pool on a real PostgreSQL and checks that it answers. */
export async function connectPostgres(
  url: string,
  opts: { statementTimeoutMs?: number; max?: number; connectTimeoutMs?: number } = {},
): Promise<SqlClient> {
  const label = describeUrl(url);
  // pg's timer runs from the socket's opening to the server's first ready-for-query: DNS, TCP,
  // TLS and authentication all end within it.
  const connectTimeoutMs = opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  // Loaded on first use: a run on the embedded demo never needs the PostgreSQL driver.
  const { default: driver } = await import('pg');
  let pool: pg.Pool;
  const max = opts.max ?? DATABASE_DEFAULTS.poolConnections;
  try {
    pool = new driver.Pool({
      connectionString: url,
      max,
      connectionTimeoutMillis: connectTimeoutMs,
      application_name: APPLICATION_NAME,
    });
  } catch (e) {
    // pg parses the URL here (e.g. an invalid sslmode): the message never carries the password.
    throw connectFailure(label, e);
  }
  // An idle client's error must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  const client = new PgSqlClient(
    pool,
    label,
    opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    connectTimeoutMs,
    max,
  );
  try {
    await client.query('SELECT 1');
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw e;
  }
  return client;
}

/** One read-only statement on an open PGlite (its extended-protocol `query`, never `exec`). */
export async function pgliteReadOnly<T>(
  db: PGlite,
  sql: string,
  params: unknown[],
  settings: QueryOptions['settings'] = [],
): Promise<T[]> {
  return db.transaction(async (tx) => {
    await tx.exec('SET TRANSACTION READ ONLY');
    for (const [name, value] of settings) await tx.query(SET_LOCAL, [name, value]);
    return (await tx.query<T>(sql, params)).rows;
  });
}

class PgliteSqlClient implements SqlClient {
  readonly kind = 'pglite' as const;
  constructor(
    private readonly db: PGlite,
    readonly label: string,
    private readonly owned: boolean,
    private readonly onClose?: () => void,
  ) {}

  async query<T extends object>(sql: string, params: unknown[] = [], opts: QueryOptions = {}): Promise<T[]> {
    try {
      return await pgliteReadOnly<T>(this.db, sql, params, opts.settings);
    } catch (e) {
      throw queryFailure(this.label, e);
    }
  }

  async close(): Promise<void> {
    if (this.owned) await this.db.close();
    this.onClose?.();
  }
}

/**
 * Wraps a PGlite opened in this thread. `owned` closes it with the client; `onClose` runs after.
 * PGlite runs each statement on this thread's event loop and has no timer to cancel it, so this
 * client cannot bound a query's time: `openPgliteWorker` (the embedded demo) can.
 */
export function pgliteClient(
  db: PGlite,
  opts: { label?: string; owned?: boolean; onClose?: () => void } = {},
): SqlClient {
  return new PgliteSqlClient(db, opts.label ?? 'embedded PGlite', opts.owned ?? true, opts.onClose);
}

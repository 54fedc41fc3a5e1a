/**
 * Database faults as a user meets them, on real servers: the shared PostgreSQL of the test run, a
 * private one that asks for passwords, a TCP proxy that freezes, and the embedded PGlite demo.
 * Each failure must read as a sentence with its code in parentheses, name host:port/database,
 * never carry the password, and never hang.
 */
import { PGlite } from '@electric-sql/pglite';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { isStatementTimeout } from '../src/db/db-errors.js';
import { openDemoDatabase } from '../src/demo/demo-db.js';
import { connectPostgres, pgliteClient, type SqlClient } from '../src/db/sql-client.js';
import { DatabaseError } from '../src/errors.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { freezingProxy, freshDatabase, startPasswordServer } from './helpers/pg.js';
import { rejection } from './helpers/faults.js';

const adminUrl = () => inject('pgAdminUrl');
const portOf = (url: string) => new URL(url).port;

const failure = (p: Promise<unknown>) => rejection(p, DatabaseError);

describe('database errors in words (real PostgreSQL)', () => {
  let server: { port: number; stop: () => void };
  beforeAll(async () => {
    server = await startPasswordServer('right-horse-battery');
  }, 60_000);
  afterAll(() => server?.stop());

  it('a wrong password: the server sentence, what to check, the SQLSTATE; never the password', async () => {
    const e = await failure(connectPostgres(`postgres://postgres:wrong-staple-9@127.0.0.1:${server.port}/postgres`));
    expect(e.message).toBe(
      `cannot connect to PostgreSQL at postgres://127.0.0.1:${server.port}/postgres: password authentication failed for user "postgres": ` +
        'check the user name and password in the database URL (28P01)',
    );
    expect(e.message).not.toContain('wrong-staple-9');
  });

  it('the right password connects, and every connection says it is ragaudit in pg_stat_activity', async () => {
    const db = await connectPostgres(`postgres://postgres:right-horse-battery@127.0.0.1:${server.port}/postgres`);
    try {
      const rows = await db.query<{ application_name: string }>(
        'SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()',
      );
      expect(rows).toEqual([{ application_name: 'ragaudit' }]);
    } finally {
      await db.close();
    }
  });

  it('no such database', async () => {
    const url = adminUrl().replace(/\/postgres$/, '/no_such_forum');
    const e = await failure(connectPostgres(url));
    expect(e.message).toBe(
      `cannot connect to PostgreSQL at postgres://127.0.0.1:${portOf(url)}/no_such_forum: database "no_such_forum" does not exist: check the database name at the end of the URL (3D000)`,
    );
  });

  it('no such role', async () => {
    const url = adminUrl().replace('postgres@', 'ghost_auditor:pw-never-shown@');
    const e = await failure(connectPostgres(url));
    expect(e.message).toMatch(
      /^cannot connect to PostgreSQL at postgres:\/\/127\.0\.0\.1:\d+\/postgres: role "ghost_auditor" does not exist: check the user name .* \(28000\)$/,
    );
    expect(e.message).not.toContain('pw-never-shown');
  });

  it('connection refused', async () => {
    const e = await failure(connectPostgres('postgres://auditor:hunter2secret@127.0.0.1:1/forum'));
    expect(e.message).toBe(
      'cannot connect to PostgreSQL at postgres://127.0.0.1:1/forum: connection refused: nothing is listening there (is PostgreSQL running, on this host and port?) (ECONNREFUSED)',
    );
  });

  it('a statement timeout is a query that ran too long, not a connection failure', async () => {
    const db = await connectPostgres(adminUrl(), { statementTimeoutMs: 200 });
    try {
      const e = await failure(db.query('SELECT pg_sleep(3)'));
      expect(e.message).toBe(
        `query failed on postgres://127.0.0.1:${portOf(adminUrl())}/postgres: the query ran longer than the statement timeout of 200 ms (database.statement_timeout_ms) and was cancelled by the server (57014)`,
      );
      // Told apart from other failures (a batch's chunk is then asked again question by question).
      expect(isStatementTimeout(e)).toBe(true);
      expect(isStatementTimeout(await failure(db.query('SELECT 1/0')))).toBe(false);
      // The connection is still good for the next query.
      expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });
});

describe('one statement on PostgreSQL', () => {
  it('is three round trips: its read-only transaction and timeout, the statement, the commit (one more per setting)', async () => {
    const db = await connectPostgres(adminUrl(), { statementTimeoutMs: 4321 });
    const spy = vi.spyOn(pg.Client.prototype, 'query');
    try {
      const rows = await db.query<{ ro: string; timeout: string }>(
        "SELECT current_setting('transaction_read_only') AS ro, current_setting('statement_timeout') AS timeout",
      );
      expect(rows).toEqual([{ ro: 'on', timeout: '4321ms' }]);
      expect(spy).toHaveBeenCalledTimes(3);
      spy.mockClear();
      await db.query('SELECT 1', [], { settings: [['work_mem', '8MB']] });
      expect(spy).toHaveBeenCalledTimes(4);
    } finally {
      spy.mockRestore();
      await db.close();
    }
  });
});

describe('statements waiting for a connection of the pool', () => {
  it('wait behind a long statement however long it runs: the wait is not a connection failure', async () => {
    // One connection, a connect timeout far shorter than the statement ahead: the statements
    // queued behind it (as a large forum's batch statements queue) run once it is done.
    const db = await connectPostgres(adminUrl(), { max: 1, connectTimeoutMs: 300 });
    try {
      const results = await Promise.all([
        db.query<{ slept: string }>("SELECT pg_sleep(1)::text || 'done' AS slept"),
        db.query<{ n: number }>('SELECT 2 AS n'),
        db.query<{ n: number }>('SELECT 3 AS n'),
      ]);
      expect(results).toEqual([[{ slept: 'done' }], [{ n: 2 }], [{ n: 3 }]]);
      // One connection all along.
      const rows = await db.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'ragaudit' AND datname = current_database()",
      );
      expect(Number(rows[0]!.n)).toBe(1);
    } finally {
      await db.close();
    }
  });
});

describe('a frozen connection (server accepts, then never answers)', () => {
  it('an open connection that freezes ends at the client-side deadline with a timeout error', async () => {
    const proxy = await freezingProxy(Number(portOf(adminUrl())));
    const url = adminUrl().replace(`:${portOf(adminUrl())}/`, `:${proxy.port}/`);
    const db = await connectPostgres(url, { statementTimeoutMs: 500 });
    try {
      expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      proxy.freeze();
      const t0 = performance.now();
      const e = await failure(db.query('SELECT 1 AS one'));
      // Deadline: 500 ms statement timeout + 1 s margin. Kept only against a hang (a frozen connection
      // never ends by itself): 10 × the 1500 ms deadline; the message below names that deadline.
      expect(performance.now() - t0).toBeLessThan(15_000);
      expect(e.message).toBe(
        `no answer from postgres://127.0.0.1:${proxy.port}/postgres within 1500 ms (client-side deadline, past the 500 ms statement timeout): ` +
          'the connection is frozen or the server stalled; it was dropped (timeout)',
      );
    } finally {
      await db.close();
      await proxy.close();
    }
  }, 30_000);

  it('a connection that freezes while opening ends at the connect timeout, named as such', async () => {
    const proxy = await freezingProxy(Number(portOf(adminUrl())));
    proxy.freeze();
    const url = adminUrl().replace(`:${portOf(adminUrl())}/`, `:${proxy.port}/`);
    try {
      const e = await failure(connectPostgres(url));
      expect(e.message).toBe(
        `cannot connect to PostgreSQL at postgres://127.0.0.1:${proxy.port}/postgres: no answer within 5000 ms while connecting (connection timeout)`,
      );
    } finally {
      await proxy.close();
    }
  }, 30_000);

  // Fails before this change: the limit was fixed at 5 s ("no answer within 5000 ms"), whatever was asked.
  it('database.connect_timeout_ms bounds opening a connection, plain or over TLS, and the message names it', async () => {
    const { ConfigSchema } = await import('../src/config/schema.js');
    const { openDatabase } = await import('../src/wiring/context.js');
    const RETRIEVAL = { channels: [{ name: 'kw', kind: 'keyword', grain: 'topic' }] };
    expect(ConfigSchema.parse({ retrieval: RETRIEVAL }).database.connect_timeout_ms).toBe(5_000);
    const proxy = await freezingProxy(Number(portOf(adminUrl())));
    proxy.freeze();
    const url = adminUrl().replace(`:${portOf(adminUrl())}/`, `:${proxy.port}/`);
    const expected = `cannot connect to PostgreSQL at postgres://127.0.0.1:${proxy.port}/postgres: no answer within 300 ms while connecting (connection timeout)`;
    try {
      const config = ConfigSchema.parse({ database: { url, connect_timeout_ms: 300 }, retrieval: RETRIEVAL });
      expect((await failure(openDatabase(config, { cwd: PACKAGE_ROOT }))).message).toBe(expected);
      // A TLS handshake that never completes ends at the same limit.
      const tls = ConfigSchema.parse({
        database: { url: `${url}?sslmode=require`, connect_timeout_ms: 300 },
        retrieval: RETRIEVAL,
      });
      expect((await failure(openDatabase(tls, { cwd: PACKAGE_ROOT }))).message).toBe(expected);
    } finally {
      await proxy.close();
    }
  }, 30_000);
});

describe('the embedded demo database honours the statement timeout', () => {
  it('a 20 s query under a 1 s limit fails at about 1 s, and the next query works', async () => {
    const db = await openDemoDatabase({
      cacheDir: join(PACKAGE_ROOT, '.cache', 'ragaudit', 'demo-db'),
      statementTimeoutMs: 1_000,
    });
    try {
      const t0 = performance.now();
      const e = await failure(db.query('SELECT pg_sleep(20)'));
      // Kept because it is what tells a stopped query from one that ran its 20 s: 10 × the 1 s limit.
      expect(performance.now() - t0).toBeLessThan(10_000);
      expect(e.message).toMatch(
        /^query failed on embedded demo database \(PGlite\): the query ran longer than the statement timeout of 1000 ms \(database\.statement_timeout_ms\) and was stopped.*\(timeout\)$/,
      );
      expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  }, 60_000);

  it('the statement the worker holds next keeps its own clock and outlives a stopped one', async () => {
    const db = await openDemoDatabase({
      cacheDir: join(PACKAGE_ROOT, '.cache', 'ragaudit', 'demo-db'),
      statementTimeoutMs: 3_000,
    });
    try {
      // Sent together, the second is held by the worker while the first runs: 2 s each, 4 s in
      // all since they were sent. Each is timed from its own start, so both are within the limit.
      const pair = await Promise.all([
        db.query('SELECT pg_sleep(2)::text AS a'),
        db.query('SELECT pg_sleep(2)::text AS b'),
      ]);
      expect(pair).toEqual([[{ a: '' }], [{ b: '' }]]);
      // The first runs past the limit: its worker is stopped with the second still held, which
      // then runs on a fresh worker and answers.
      const [slow, next] = await Promise.allSettled([db.query('SELECT pg_sleep(20)'), db.query('SELECT 2 AS two')]);
      expect(slow.status === 'rejected' && String(slow.reason.message)).toMatch(/statement timeout of 3000 ms/);
      expect(next).toEqual({ status: 'fulfilled', value: [{ two: 2 }] });
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe('one statement per query: multi-statement text cannot leave READ ONLY', () => {
  const ATTACK = 'COMMIT; INSERT INTO victims (x) VALUES (1)';

  it('on PostgreSQL: refused, and an admin connection sees no row', async () => {
    const fresh = await freshDatabase('multi');
    await fresh.writer.script('CREATE TABLE victims (x int)');
    await fresh.close();
    const db = await connectPostgres(fresh.url);
    const admin = new pg.Client({ connectionString: fresh.url });
    await admin.connect();
    try {
      for (const params of [undefined, []]) {
        const e = await failure(db.query(ATTACK, params));
        expect(e.message).toMatch(/one statement per query.*\(42601\)$/);
      }
      // A single COMMIT only ends its own transaction: the next call is read-only again.
      await db.query('COMMIT').catch(() => undefined);
      await expect(db.query('INSERT INTO victims (x) VALUES (2)')).rejects.toThrow(/read-only transaction \(25006\)/);
      // One statement cannot switch its own transaction to read-write before writing either.
      await expect(
        db.query(`DO $$BEGIN SET LOCAL transaction_read_only = off; INSERT INTO victims (x) VALUES (3); END$$`),
      ).rejects.toThrow(DatabaseError);
      expect((await admin.query('SELECT count(*)::int AS n FROM victims')).rows[0].n).toBe(0);
    } finally {
      await admin.end();
      await db.close();
    }
  });

  const pgliteCases: Record<
    string,
    () => Promise<{ db: SqlClient; count: () => Promise<number>; close: () => Promise<void> }>
  > = {
    'PGlite (in-process)': async () => {
      const raw = await PGlite.create();
      await raw.exec('CREATE TABLE victims (x int)');
      const db = pgliteClient(raw, { owned: false });
      return {
        db,
        count: async () => (await raw.query<{ n: number }>('SELECT count(*)::int AS n FROM victims')).rows[0]!.n,
        close: () => raw.close(),
      };
    },
    'the embedded demo (PGlite worker)': async () => {
      const db = await openDemoDatabase({ cacheDir: join(PACKAGE_ROOT, '.cache', 'ragaudit', 'demo-db') });
      // No table can be made through the client; the demo's own posts are the victims.
      const count = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM posts'))[0]!.n;
      return { db, count, close: () => db.close() };
    },
  };

  it.each(Object.keys(pgliteCases))(
    'on %s: refused, and no row is written',
    async (name) => {
      const { db, count, close } = await pgliteCases[name]!();
      try {
        const before = await count();
        const attack = name.startsWith('the embedded')
          ? "COMMIT; DELETE FROM posts; INSERT INTO categories (id, name, slug) VALUES (999, 'x', 'x')"
          : ATTACK;
        const e = await failure(db.query(attack));
        expect(e.message).toMatch(/one statement per query.*\(42601\)$/);
        expect(await count()).toBe(before);
      } finally {
        await close();
      }
    },
    60_000,
  );
});

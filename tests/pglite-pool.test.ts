/**
 * The embedded demo on several PGlite workers (`database.connections`): statements spread over
 * the open workers, each a read-only copy of the same snapshot, and the pool closes them all. A
 * worker reads the snapshot into its data directory itself: the same database as PGlite's loader.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { demoSnapshotPath, openDemoDatabase } from '../src/demo/demo-db.js';
import { DatabaseError } from '../src/errors.js';
import { openPgliteWorker, PARKED_MAX, parkedSnapshots, stopParkedWorkers } from '../src/db/pglite-worker.js';
import { removeWorkDirs, workDir } from './fixtures/audit/harness.js';

afterAll(() => removeWorkDirs());
import { PACKAGE_ROOT } from '../src/paths.js';

const CACHE = join(PACKAGE_ROOT, '.cache', 'ragaudit', 'demo-db');

describe('the embedded demo on two workers', { timeout: 120_000 }, () => {
  it('sends statements given together to different workers, each answering from the same data, read-only', async () => {
    const db = await openDemoDatabase({ cacheDir: CACHE, workers: 2 });
    try {
      // Each worker is its own PostgreSQL instance: its start time tells which one answered. The
      // second worker opens in the background, so pairs are sent until both have answered (bounded).
      const started = `SELECT pg_postmaster_start_time()::text AS started, count(*)::text AS n FROM posts, pg_sleep(0.05)`;
      const seen = new Set<string>();
      const counts = new Set<string>();
      for (let i = 0; i < 100 && seen.size < 2; i++) {
        const pair = await Promise.all([
          db.query<{ started: string; n: string }>(started),
          db.query<{ started: string; n: string }>(started),
        ]);
        for (const [row] of pair) {
          seen.add(row!.started);
          counts.add(row!.n);
        }
        if (seen.size < 2) await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen.size).toBe(2);
      expect(counts.size).toBe(1);
      // Read-only on every worker.
      const writes = await Promise.allSettled([db.query('DELETE FROM posts'), db.query('DELETE FROM posts')]);
      expect(writes.map((w) => w.status)).toEqual(['rejected', 'rejected']);
      const [row] = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM posts');
      expect(row!.n).toBe([...counts][0]);
    } finally {
      await db.close();
    }
    await expect(db.query('SELECT 1')).rejects.toThrow(/closed/);
  });
});

describe('a worker loads the snapshot itself', { timeout: 120_000 }, () => {
  it("holds the same database as PGlite's own loader, with a read-only worker's settings", async () => {
    const snapshot = demoSnapshotPath({ cacheDir: CACHE });
    // Built if missing (first use), then opened by a worker (its own tar reader).
    const worker = await openDemoDatabase({ cacheDir: CACHE });
    // The reference: PGlite's loadDataDir on the same file, on this thread.
    const { PGlite } = await import('@electric-sql/pglite');
    const { vector } = await import('@electric-sql/pglite-pgvector');
    const own = await PGlite.create({ loadDataDir: new Blob([readFileSync(snapshot)]), extensions: { vector } });
    try {
      // Every table of the forum: rows and an order-independent digest of their text.
      const tables = `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1`;
      const names = (await worker.query<{ name: string }>(tables)).map((r) => r.name);
      expect(names).toEqual((await own.query<{ name: string }>(tables)).rows.map((r) => r.name));
      expect(names).toContain('posts');
      for (const name of names) {
        const sql = `SELECT count(*)::text AS n, md5(coalesce(string_agg(md5(t::text), '' ORDER BY md5(t::text)), '')) AS h FROM public.${name} t`;
        expect(await worker.query(sql), name).toEqual((await own.query(sql)).rows);
      }
      const settings = `SELECT current_setting('shared_buffers') AS buffers, current_setting('max_connections') AS connections,
        current_setting('wal_init_zero') AS zero`;
      expect(await worker.query(settings)).toEqual([{ buffers: '16MB', connections: '4', zero: 'off' }]);
      // PGlite's loader keeps the snapshot's own settings: the worker's are its own.
      expect((await own.query<{ buffers: string }>(settings)).rows[0]!.buffers).toBe('128MB');
    } finally {
      await worker.close();
      await own.close();
    }
  });
});

describe('the demo snapshot is checkpointed', { timeout: 120_000 }, () => {
  it('an open replays next to no WAL (the build ends with a checkpoint)', async () => {
    const snapshot = demoSnapshotPath({ cacheDir: CACHE });
    await (await openDemoDatabase({ cacheDir: CACHE })).close();
    // PostgreSQL's own startup log (PGlite's debug output): "redo starts at A", "redo done at B".
    const lines: string[] = [];
    const keep = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
    const spies = (['log', 'warn', 'error', 'info'] as const).map((m) => vi.spyOn(console, m).mockImplementation(keep));
    const { PGlite } = await import('@electric-sql/pglite');
    const { vector } = await import('@electric-sql/pglite-pgvector');
    let db: Awaited<ReturnType<typeof PGlite.create>> | undefined;
    try {
      db = await PGlite.create({ loadDataDir: new Blob([readFileSync(snapshot)]), extensions: { vector }, debug: 1 });
    } finally {
      for (const s of spies) s.mockRestore();
      await db?.close();
    }
    const lsn = (re: RegExp) => {
      const m = lines.join('\n').match(re);
      if (!m) return undefined;
      const [hi, lo] = m[1]!.split('/').map((x) => parseInt(x, 16));
      return hi! * 2 ** 32 + lo!;
    };
    const from = lsn(/redo starts at ([0-9A-F]+\/[0-9A-F]+)/);
    const to = lsn(/redo done at ([0-9A-F]+\/[0-9A-F]+)/);
    // Either nothing to redo at all, or the checkpoint's own few records (the build's data was megabytes of WAL).
    if (from === undefined)
      expect(lines.join('\n')).toMatch(/redo is not required|database system is ready|PostgreSQL/);
    else expect(to! - from).toBeLessThan(4096);
  });
});

/** A ustar header block (typeflag, name, linkname, size), its checksum computed as the format says. */
function tarHeader(name: string, type: string, link = '', size = 0): Buffer {
  const h = Buffer.alloc(512, 0);
  h.write(name, 0, 'latin1');
  h.write('0000644\0', 100, 'latin1');
  h.write('0000000\0', 108, 'latin1');
  h.write('0000000\0', 116, 'latin1');
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  h.write('00000000000\0', 136, 'latin1');
  h.write(type, 156, 'latin1');
  h.write(link, 157, 'latin1');
  h.write('ustar\0' + '00', 257, 'latin1');
  // The checksum: the header's bytes summed with its own field read as eight spaces.
  h.fill(' ', 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

/** Where a tar's end-of-archive blocks start (after the last entry's data). */
function tarEnd(tar: Buffer): number {
  let off = 0;
  while (off + 512 <= tar.length && tar[off] !== 0) {
    const size = parseInt(tar.toString('latin1', off + 124, off + 135), 8);
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return off;
}

describe('a snapshot that cannot be read', { timeout: 60_000 }, () => {
  it('fails the open with the reason, naming the database', async () => {
    const missing = join(workDir('snapshot-missing'), 'no-such.tar');
    const e = await openPgliteWorker({ label: 'missing snapshot', statementTimeoutMs: 30_000, snapshot: missing }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(DatabaseError);
    expect((e as Error).message).toMatch(
      /^cannot open missing snapshot: ENOENT: no such file or directory, open '.*no-such\.tar'$/,
    );
  });
});

describe('a snapshot that holds a file twice', { timeout: 120_000 }, () => {
  it('opens with the last copy, as tar extracts it', async () => {
    const snapshot = demoSnapshotPath({ cacheDir: CACHE });
    await (await openDemoDatabase({ cacheDir: CACHE })).close();
    const tar = readFileSync(snapshot);
    const name = tarEntryName(tar, 'postgresql.auto.conf');
    // A second postgresql.auto.conf after every other entry, setting what the first does not.
    const text = Buffer.from("# a later copy\nwork_mem = '7MB'\n");
    const data = Buffer.concat([text, Buffer.alloc(Math.ceil(text.length / 512) * 512 - text.length)]);
    const end = tarEnd(tar);
    const file = join(workDir('snapshot-twice'), 'twice.tar');
    writeFileSync(
      file,
      Buffer.concat([tar.subarray(0, end), tarHeader(name, '0', '', text.length), data, tar.subarray(end)]),
    );
    const db = await openPgliteWorker({
      label: 'snapshot with a file twice',
      statementTimeoutMs: 30_000,
      snapshot: file,
    });
    try {
      expect(await db.query(`SELECT current_setting('work_mem') AS w, count(*)::int AS n FROM posts`)).toEqual(
        await db.query(`SELECT '7MB' AS w, count(*)::int AS n FROM posts`),
      );
    } finally {
      await db.close();
    }
  });
});

/** The name a tar gives the entry whose path ends with `suffix` (its own spelling, prefix and all). */
function tarEntryName(tar: Buffer, suffix: string): string {
  for (let off = 0; off + 512 <= tar.length && tar[off] !== 0;) {
    const name = tar.toString('latin1', off, off + 100).replace(/\0.*$/s, '');
    if (name.replace(/^\.?\/+/, '') === suffix) return name;
    const size = parseInt(tar.toString('latin1', off + 124, off + 135), 8);
    off += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error(`no ${suffix} in the snapshot`);
}

describe("a snapshot the worker's reader does not take", { timeout: 120_000 }, () => {
  it("goes through PGlite's own loader and opens the same database", async () => {
    const snapshot = demoSnapshotPath({ cacheDir: CACHE });
    const db = await openDemoDatabase({ cacheDir: CACHE });
    const count = `SELECT count(*)::text AS n FROM posts`;
    const expected = await db.query(count);
    await db.close();
    // A symbolic link first: the worker's reader takes files and directories only.
    const dir = workDir('snapshot-link');
    const file = join(dir, 'with-link.tar');
    writeFileSync(file, Buffer.concat([tarHeader('extra-link', '2', 'PG_VERSION'), readFileSync(snapshot)]));
    const other = await openPgliteWorker({ label: 'linked snapshot', statementTimeoutMs: 30_000, snapshot: file });
    try {
      expect(await other.query(count)).toEqual(expected);
      // PGlite's loader keeps the snapshot's settings (the worker's own apply to its reader only).
      expect(await other.query(`SELECT current_setting('shared_buffers') AS b`)).toEqual([{ b: '128MB' }]);
    } finally {
      await other.close();
    }
  });
});

describe('statements prepared ahead on the embedded database', { timeout: 120_000 }, () => {
  it('wait behind the statements sent after them that are not background, but the one the worker holds; each kind keeps its order', async () => {
    const db = await openDemoDatabase({ cacheDir: CACHE });
    try {
      const done: string[] = [];
      const send = (name: string, sql: string, background: boolean) =>
        db.query(sql, [], { background }).then(() => void done.push(name));
      // The first background statement is running when the others are sent; it is not interrupted,
      // and the worker already holds the second (it starts it the moment the first ends).
      const all = [
        send('batch 1', 'SELECT pg_sleep(0.2)', true),
        send('batch 2', 'SELECT 2', true),
        send('batch 3', 'SELECT 3', true),
        send('check 1', 'SELECT 4', false),
        send('check 2', 'SELECT 5', false),
      ];
      await Promise.all(all);
      expect(done).toEqual(['batch 1', 'batch 2', 'check 1', 'check 2', 'batch 3']);
    } finally {
      await db.close();
    }
  });
});

describe('a closed client leaves its worker to the next open of the same snapshot', { timeout: 120_000 }, () => {
  // Each worker is its own PostgreSQL instance: its start time names it.
  const startedAt = async (db: { query: <T extends object>(sql: string) => Promise<T[]> }) =>
    (await db.query<{ t: string }>('SELECT pg_postmaster_start_time()::text AS t'))[0]!.t;

  it('the next client takes the same worker, read-only as before; one stopped for a timeout is never handed on', async () => {
    await stopParkedWorkers();
    const first = await openDemoDatabase({ cacheDir: CACHE });
    const worker = await startedAt(first);
    await first.close();
    expect(parkedSnapshots()).toEqual([demoSnapshotPath({ cacheDir: CACHE })]);

    // A limit no plain statement reaches on a loaded machine, and a sleep well past it.
    const second = await openDemoDatabase({ cacheDir: CACHE, statementTimeoutMs: 2_000 });
    expect(parkedSnapshots()).toEqual([]);
    expect(await startedAt(second)).toBe(worker);
    await expect(second.query('DELETE FROM posts')).rejects.toThrow(/read-only/);
    // A statement past the timeout stops that worker: the next query runs on a fresh one, and
    // closing leaves the fresh one, never the stopped one.
    await expect(second.query('SELECT pg_sleep(30)')).rejects.toThrow(/statement timeout/);
    const fresh = await startedAt(second);
    expect(fresh).not.toBe(worker);
    await second.close();

    const third = await openDemoDatabase({ cacheDir: CACHE });
    expect(await startedAt(third)).toBe(fresh);
    await third.close();
  });

  it(`keeps at most ${PARKED_MAX} closed clients' workers, the most recent`, async () => {
    await stopParkedWorkers();
    const clients = [];
    for (let i = 0; i <= PARKED_MAX; i++) clients.push(await openDemoDatabase({ cacheDir: CACHE }));
    const workers = await Promise.all(clients.map(startedAt));
    expect(new Set(workers).size).toBe(PARKED_MAX + 1);
    for (const c of clients) await c.close();
    expect(parkedSnapshots()).toHaveLength(PARKED_MAX);
    const again = [];
    for (let i = 0; i <= PARKED_MAX; i++) again.push(await openDemoDatabase({ cacheDir: CACHE }));
    const reused = await Promise.all(again.map(startedAt));
    // The last closed first; the first closed was stopped, so the last open is a new worker.
    expect(reused.slice(0, PARKED_MAX)).toEqual(workers.slice(1).reverse());
    expect(workers).not.toContain(reused[PARKED_MAX]);
    for (const c of again) await c.close();
    await stopParkedWorkers();
    expect(parkedSnapshots()).toEqual([]);
  });
});

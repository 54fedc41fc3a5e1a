import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { DatabaseError } from '../errors.js';
import { queryFailure } from './db-errors.js';
import type { QueryOptions, SqlClient } from './sql-client.js';

/**
 * PGlite in a worker thread, so that a query can be stopped. PGlite runs a statement on its
 * thread's event loop and has no timer to cancel it (its `statement_timeout` never fires: a 20 s
 * `pg_sleep` ran under a 1 s limit); here the calling thread keeps the clock and, past the
 * statement timeout, terminates the worker (V8 interrupts WebAssembly too) and opens a fresh one
 * for the next query. Each worker loads the database from a snapshot (a data-directory tar) into
 * its own memory: no file is shared or written, so nothing needs copying or cleaning up. PGlite
 * runs one statement at a time; the worker holds at most the running one and the next, and each
 * statement's clock starts when it starts (the next one's when the worker says the previous one
 * ended), not while it waits behind another.
 */

/** The worker, as CommonJS text: no separate file to ship or to compile for the test runner. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');

// The whole file, read by as few read calls on the thread pool as the system needs (one, for a
// file on disk), started before PGlite's code is loaded so that the two happen at once:
// readFileSync held this thread ~35 ms for the demo's snapshot, and a chunked read would wait for
// it between chunks.
function readWhole(file) {
  return new Promise((resolve, reject) => {
    const fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.allocUnsafe(size);
    const end = (e, data) => {
      fs.closeSync(fd);
      if (e) reject(e);
      else resolve(data);
    };
    const from = (off) => {
      if (off >= size) return end(undefined, buf);
      fs.read(fd, buf, off, size - off, off, (e, n) => (e ? end(e) : n === 0 ? end(undefined, buf.subarray(0, off)) : from(off + n)));
    };
    from(0);
  });
}
const reading = readWhole(workerData.snapshot);
// PostgreSQL's WebAssembly, compiled once per process: the first worker compiles it (on V8's
// threads, while the snapshot is read) and hands the module to the thread that started it, which
// gives it to every later worker; compiling was about half of each open.
const compiling = workerData.wasm
  ? Promise.resolve(workerData.wasm)
  : fs.promises.readFile(require('node:path').join(require('node:path').dirname(workerData.pglite), 'pglite.wasm')).then((b) => WebAssembly.compile(b));
const { PGlite, MemoryFS } = require(workerData.pglite);
const { vector } = require(workerData.vector);

// The snapshot's entries (ustar: regular files and directories), or undefined when it holds
// anything else, which then goes through PGlite's own loader.
function tarEntries(tar) {
  const text = (from, len) => {
    const end = tar.indexOf(0, from);
    return tar.toString('latin1', from, end === -1 || end > from + len ? from + len : end);
  };
  const entries = [];
  for (let off = 0; off + 512 <= tar.length; ) {
    if (tar[off] === 0) break; // the end-of-archive blocks
    const type = String.fromCharCode(tar[off + 156] || 48);
    const size = parseInt(text(off + 124, 12).trim() || '0', 8);
    const prefix = tar.toString('latin1', off + 257, off + 262) === 'ustar' ? text(off + 345, 155) : '';
    const name = (prefix ? prefix + '/' : '') + text(off, 100);
    if ((type !== '0' && type !== '5') || !Number.isFinite(size) || off + 512 + size > tar.length) return undefined;
    entries.push({ name, dir: type === '5', data: type === '5' ? undefined : tar.subarray(off + 512, off + 512 + size) });
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

// An in-memory file system whose data directory is filled from the snapshot before PostgreSQL
// starts, each file's bytes handed over as a view of the one buffer read from disk (MEMFS copies
// on a write past a file's end): what PGlite's loadDataDir does with a copy of every byte and a
// path lookup per directory level of every file, which was a third of the open. Each file is
// made by its directory's own MEMFS operation (what FS.writeFile does once it has resolved the
// path and opened the file): resolving ~1,000 paths level by level cost ~40 ms of every open.
class SnapshotFS extends MemoryFS {
  constructor(entries) {
    super();
    this.entries = entries;
  }
  async init(pg, opts) {
    const entries = this.entries;
    const fill = (mod) => {
      const FS = mod.FS;
      const root = mod.ENV.PGDATA;
      const dirs = new Map();
      const made = new Set();
      const dir = (d) => {
        let node = dirs.get(d);
        if (!node) {
          FS.mkdirTree(d);
          node = FS.lookupPath(d).node;
          dirs.set(d, node);
        }
        return node;
      };
      dir(root);
      for (const e of entries) {
        const path = root + '/' + e.name.replace(/^\\/+|\\/+$/g, '');
        if (e.dir) {
          dir(path);
          continue;
        }
        const slash = path.lastIndexOf('/');
        const parent = dir(path.slice(0, slash));
        const data = new Uint8Array(e.data.buffer, e.data.byteOffset, e.data.length);
        if (made.has(path) || typeof parent.node_ops.mknod !== 'function') {
          // A name the archive holds twice (the last one wins, as tar extracts) or another file system.
          FS.writeFile(path, data, { canOwn: true });
        } else {
          // A regular file, mode 0666 (FS.writeFile's), owning the view.
          const node = parent.node_ops.mknod(parent, path.slice(slash + 1), 0o100666, 0);
          node.contents = data;
          node.usedBytes = data.length;
        }
        made.add(path);
      }
      this.entries = undefined;
    };
    const { emscriptenOpts } = await super.init(pg, opts);
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun || []), fill] } };
  }
}

// Settings for a read-only worker, after the snapshot's own (ALTER SYSTEM's file is read last):
// shared buffers of 16 MB rather than initdb's 128 MB (a buffer miss is a copy from this same
// memory, and the demo's database is about 9 MB) and the few connections a single-user engine
// has, so each worker's memory holds the data about once, not twice; and a new WAL segment made
// without writing its 16 MB of zeros (wal_init_zero = off): the engine prepares the next segment
// when it starts, which in memory cost ~0.15 s of every open.
const SETTINGS = '\\nshared_buffers = 16MB\\nmax_connections = 4\\nwal_init_zero = off\\n';
function open([tar, wasm]) {
  const entries = tarEntries(tar);
  for (const e of entries || [])
    if (e.name.replace(/^\\/+/, '') === 'postgresql.auto.conf') e.data = Buffer.concat([e.data, Buffer.from(SETTINGS)]);
  const source = entries ? { fs: new SnapshotFS(entries) } : { loadDataDir: new Blob([tar]) };
  return PGlite.create({ ...source, extensions: { vector }, pgliteWasmModule: wasm });
}
Promise.all([reading, compiling]).then(open).then(async (db) => {
  // Every transaction of this session is read-only, the implicit one of a lone statement too.
  await db.exec('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY');
  // Untimed statements first, so the engine's warm-up (and loading pgvector's code, when the
  // database has it) is not charged to the first real query.
  await db.query('SELECT 1');
  await db.query("SELECT '[1,2]'::vector <=> '[2,1]'::vector").catch(() => undefined);
  parentPort.postMessage({ ready: true, wasm: workerData.wasm ? undefined : await compiling });
  parentPort.on('message', async ({ sql, params, settings }) => {
    try {
      // One statement through the extended protocol ('query', never 'exec'), read-only; with
      // run-time parameters, in a transaction that sets them for itself only (SET LOCAL, names
      // and values bound).
      const rows = settings.length
        ? await db.transaction(async (tx) => {
            await tx.exec('SET TRANSACTION READ ONLY');
            for (const [name, value] of settings) await tx.query('SELECT set_config($1, $2, true)', [name, value]);
            return (await tx.query(sql, params)).rows;
          })
        : (await db.query(sql, params)).rows;
      parentPort.postMessage({ rows, at: Date.now() });
    } catch (e) {
      parentPort.postMessage({ error: { message: String(e && e.message), code: e && e.code }, at: Date.now() });
    }
  });
}, (e) => parentPort.postMessage({ fatal: String(e && e.message) }));
`;

const require = createRequire(import.meta.url);

interface Reply {
  ready?: true;
  /** PostgreSQL's compiled module, from a worker that compiled it (the first of the process). */
  wasm?: object;
  fatal?: string;
  rows?: object[];
  error?: { message: string; code?: string };
  /** When the worker finished the statement (epoch ms): the next one it holds starts then. */
  at?: number;
}

export interface PgliteWorkerOptions {
  label: string;
  /** Longest a query may run, ms; past it the worker is stopped and the query fails. */
  statementTimeoutMs: number;
  /** The data directory as a tar (PGlite's `dumpDataDir('none')`), loaded into memory by each worker. */
  snapshot: string;
}

/**
 * Statements handed to the worker at a time: the one running and the next. The worker then goes
 * from one statement to the next at once, instead of waiting until this thread (busy running
 * cases) takes the answer and sends the next: in a 200-case run those waits left the engine idle
 * ~0.1 s while the first cases waited for their batches.
 */
const IN_WORKER = 2;

interface Statement {
  sql: string;
  params: unknown[];
  settings: NonNullable<QueryOptions['settings']>;
  background: boolean;
  resolve: (rows: object[]) => void;
  reject: (e: unknown) => void;
}

class PgliteWorkerClient implements SqlClient {
  readonly kind = 'pglite' as const;
  readonly label: string;
  private current?: { worker: Worker; open: boolean; detach: () => void };
  /** Statements not sent yet, those sent as background last. */
  private readonly waiting: Statement[] = [];
  /** Sent to the current worker, in order: the first is running, the next wait in the worker's queue. */
  private sent: Statement[] = [];
  /** The running statement's clock. */
  private timer: NodeJS.Timeout | undefined;
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly whenIdle: (() => void)[] = [];

  constructor(private readonly opts: PgliteWorkerOptions) {
    this.label = opts.label;
  }

  /**
   * Starts a worker on the snapshot, or takes one already open on it: the one started ahead for it
   * (see {@link prestartPglite}), else one a closed client of this process left (see
   * {@link parkWorker}); then waits until its database is open.
   */
  async start(): Promise<void> {
    const early = prestarted;
    prestarted = undefined;
    // A worker started ahead on another snapshot was a wrong guess: stopped, never used.
    if (early && early.snapshot !== this.opts.snapshot) void early.worker.terminate().catch(() => undefined);
    const { worker, opened } =
      early?.snapshot === this.opts.snapshot ? early : (unpark(this.opts.snapshot) ?? spawnWorker(this.opts.snapshot));
    const onMessage = (m: Reply) => {
      if (!m.ready && m.fatal === undefined) this.answered(worker, m);
    };
    const onError = (e: Error) => this.failed(worker, e);
    worker.on('message', onMessage);
    worker.on('error', onError);
    const current = {
      worker,
      open: false,
      detach: () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
      },
    };
    this.current = current;
    const fatal = await opened;
    if (fatal === undefined) {
      current.open = true;
      return;
    }
    await this.stop();
    throw new DatabaseError(`cannot open ${this.label}: ${fatal}`);
  }

  private async stop(): Promise<void> {
    const cur = this.current;
    this.current = undefined;
    clearTimeout(this.timer);
    if (!cur) return;
    cur.detach();
    await cur.worker.terminate().catch(() => undefined);
  }

  /**
   * Queues a statement: in the order sent, except that a background statement (a batch prepared
   * ahead) waits behind every other one not yet handed to the worker.
   */
  query<T extends object>(sql: string, params: unknown[] = [], opts: QueryOptions = {}): Promise<T[]> {
    if (this.closed) return Promise.reject(new DatabaseError(`${this.label} is closed`));
    return new Promise<T[]>((resolve, reject) => {
      const background = opts.background === true;
      const s: Statement = {
        sql,
        params,
        settings: opts.settings ?? [],
        background,
        resolve: resolve as Statement['resolve'],
        reject,
      };
      const at = background ? -1 : this.waiting.findIndex((w) => w.background);
      if (at === -1) this.waiting.push(s);
      else this.waiting.splice(at, 0, s);
      this.pump();
    });
  }

  /** Hands waiting statements to the open worker, up to {@link IN_WORKER}; opens one first if none is. */
  private pump(): void {
    if (!this.waiting.length) return this.idle();
    const cur = this.current;
    if (!cur?.open) {
      if (!this.starting) this.starting = this.reopen();
      return;
    }
    while (this.waiting.length && this.sent.length < IN_WORKER) {
      const s = this.waiting.shift()!;
      this.sent.push(s);
      if (this.sent.length === 1) {
        // Only a worker with a statement in flight keeps the process alive.
        cur.worker.ref();
        this.clock(Date.now());
      }
      cur.worker.postMessage({ sql: s.sql, params: s.params, settings: s.settings });
    }
  }

  /** Opens a fresh worker once the stopped one is gone; if it cannot open, every waiting statement fails with the reason. */
  private async reopen(): Promise<void> {
    try {
      await this.stopping;
      await this.start();
    } catch (e) {
      for (const s of this.waiting.splice(0)) s.reject(e);
    } finally {
      this.starting = undefined;
    }
    this.pump();
  }

  /** Starts the running statement's clock at `startedAt` (epoch ms). */
  private clock(startedAt: number): void {
    clearTimeout(this.timer);
    const limit = this.opts.statementTimeoutMs;
    this.timer = setTimeout(() => this.timedOut(), Math.max(0, startedAt + limit - Date.now()));
  }

  private answered(worker: Worker, m: Reply): void {
    if (worker !== this.current?.worker) return;
    const s = this.sent.shift();
    if (!s) return;
    clearTimeout(this.timer);
    // The next statement the worker holds started when this one ended, by the worker's clock.
    if (this.sent.length) this.clock(m.at ?? Date.now());
    else worker.unref();
    if (m.error) s.reject(queryFailure(this.label, m.error, this.opts.statementTimeoutMs));
    else s.resolve(m.rows ?? []);
    this.pump();
  }

  /**
   * The running statement fails and the worker is stopped (its database is left mid-query); the
   * statements it held but had not started wait for the fresh worker the next send opens.
   */
  private abandon(error: Error): void {
    const [running, ...held] = this.sent;
    this.sent = [];
    this.waiting.unshift(...held);
    this.stopping = this.stop();
    running?.reject(error);
    this.pump();
  }

  private timedOut(): void {
    const limit = this.opts.statementTimeoutMs;
    this.abandon(
      new DatabaseError(
        `query failed on ${this.label}: the query ran longer than the statement timeout of ${limit} ms ` +
          '(database.statement_timeout_ms) and was stopped; the next query reopens the database (timeout)',
      ),
    );
  }

  private failed(worker: Worker, e: Error): void {
    if (worker !== this.current?.worker) return;
    this.abandon(new DatabaseError(`${this.label} stopped: ${e.message}`, { cause: e }));
  }

  private idle(): void {
    if (this.sent.length || this.starting) return;
    for (const resolve of this.whenIdle.splice(0)) resolve();
  }

  async close(): Promise<void> {
    this.closed = true;
    // The statements in the worker end; those still waiting fail at once (closed), as later ones do.
    for (const s of this.waiting.splice(0)) s.reject(new DatabaseError(`${this.label} is closed`));
    while (this.sent.length || this.starting) await new Promise<void>((resolve) => this.whenIdle.push(resolve));
    await this.stopping;
    // An open worker with nothing in flight is left for the next client of the same snapshot.
    const cur = this.current;
    if (cur?.open) {
      this.current = undefined;
      clearTimeout(this.timer);
      cur.detach();
      parkWorker(this.opts.snapshot, cur.worker);
      return;
    }
    await this.stop();
  }
}

/** PostgreSQL's WebAssembly as the first worker of this process compiled it (see the worker). */
let compiledPglite: object | undefined;

/**
 * A worker on a snapshot; `opened` resolves once its database is open (undefined) or could not be
 * (the reason). An idle worker never keeps the process alive: only a query in flight does.
 */
function spawnWorker(snapshot: string): { snapshot: string; worker: Worker; opened: Promise<string | undefined> } {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      snapshot,
      pglite: require.resolve('@electric-sql/pglite'),
      vector: require.resolve('@electric-sql/pglite-pgvector'),
      wasm: compiledPglite,
    },
  });
  worker.unref();
  const opened = new Promise<string | undefined>((resolve) => {
    worker.once('message', (m: Reply) => {
      if (m.wasm) compiledPglite ??= m.wasm;
      resolve(m.ready ? undefined : (m.fatal ?? 'no answer'));
    });
    worker.once('error', (e) => resolve(e.message));
  });
  return { snapshot, worker, opened };
}

/** A worker started ahead of need (at most one), taken by the first client opening the same snapshot. */
let prestarted: ReturnType<typeof spawnWorker> | undefined;

/**
 * Starts opening a snapshot now, on its own thread, while the caller goes on loading modules and
 * reading its inputs; the first {@link openPgliteWorker} on the same snapshot takes it instead of
 * starting another. Opening the embedded database is most of a short run's start-up, so this
 * takes it off the critical path. A worker nobody takes is stopped by {@link discardPrestarted}
 * or ends with the process (it never keeps it alive).
 */
export function prestartPglite(snapshot: string): void {
  void discardPrestarted();
  prestarted = spawnWorker(snapshot);
}

/** The snapshot of the worker started ahead that no client has taken yet, if any. */
export function prestartedSnapshot(): string | undefined {
  return prestarted?.snapshot;
}

/**
 * Workers on a read-only snapshot whose client closed, kept open for the next client of the same
 * snapshot in this process, most recent last. A process that opens the embedded demo again and
 * again (the matrix of configurations, a library caller, a test file) then pays one open, not one
 * per client: each open is ~0.5 s of this machine's CPU. Nothing a client did stays in the worker:
 * every transaction is read-only and run-time settings are SET LOCAL. Parked workers never keep
 * the process alive, and at most {@link PARKED_MAX} are kept (an older one is stopped).
 */
const parked: { snapshot: string; worker: Worker; gone: () => void }[] = [];

/** How many closed clients' workers a process keeps open (each holds its database in memory, ~0.2 GB). */
export const PARKED_MAX = 2;

function parkWorker(snapshot: string, worker: Worker): void {
  worker.unref();
  const entry = {
    snapshot,
    worker,
    gone: () => {
      const at = parked.indexOf(entry);
      if (at !== -1) parked.splice(at, 1);
    },
  };
  // A parked worker that dies is forgotten, not handed out.
  worker.once('exit', entry.gone);
  worker.once('error', entry.gone);
  parked.push(entry);
  while (parked.length > PARKED_MAX)
    void parked
      .shift()!
      .worker.terminate()
      .catch(() => undefined);
}

function unpark(snapshot: string): ReturnType<typeof spawnWorker> | undefined {
  const at = parked.findLastIndex((p) => p.snapshot === snapshot);
  if (at === -1) return undefined;
  const [entry] = parked.splice(at, 1);
  entry!.worker.off('exit', entry!.gone);
  entry!.worker.off('error', entry!.gone);
  return { snapshot, worker: entry!.worker, opened: Promise.resolve(undefined) };
}

/** The snapshots of the parked workers (see {@link parkWorker}), oldest first. */
export function parkedSnapshots(): string[] {
  return parked.map((p) => p.snapshot);
}

/** Stops every parked worker (see {@link parkWorker}); they are otherwise ended with the process. */
export async function stopParkedWorkers(): Promise<void> {
  await Promise.all(parked.splice(0).map((p) => p.worker.terminate().catch(() => undefined)));
}

/** Stops the worker started ahead, if no client took it (the run opened another database). */
export async function discardPrestarted(): Promise<void> {
  const early = prestarted;
  prestarted = undefined;
  await early?.worker.terminate().catch(() => undefined);
}

/**
 * Several workers on one snapshot, for a read-only database: each statement goes to the open
 * worker with the fewest statements queued, so a batch's channel statements run side by side and
 * a single question's statements do not wait behind a batch. Only the first worker is waited for;
 * the others open in the background and take statements once open (a short run pays one open).
 * A worker that cannot open is left out (the first one's failure is the open's failure).
 */
class PgliteWorkerPool implements SqlClient {
  readonly kind = 'pglite' as const;
  readonly label: string;
  private readonly open: { client: PgliteWorkerClient; queued: number }[] = [];
  private readonly opening: Promise<void>[] = [];

  constructor(opts: PgliteWorkerOptions, first: PgliteWorkerClient, more: number) {
    this.label = opts.label;
    this.open.push({ client: first, queued: 0 });
    for (let i = 0; i < more; i++) {
      const client = new PgliteWorkerClient(opts);
      this.opening.push(
        client.start().then(
          () => void this.open.push({ client, queued: 0 }),
          () => undefined,
        ),
      );
    }
  }

  async query<T extends object>(sql: string, params: unknown[] = [], opts: QueryOptions = {}): Promise<T[]> {
    // The first of the least-queued workers: ties go to the worker that was open first.
    const lane = this.open.reduce((a, b) => (b.queued < a.queued ? b : a));
    lane.queued++;
    try {
      return await lane.client.query<T>(sql, params, opts);
    } finally {
      lane.queued--;
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.opening);
    await Promise.all(this.open.map((l) => l.client.close()));
  }
}

/** How many workers the embedded demo opens by default (see {@link openPgliteWorker}). */
export const DEFAULT_PGLITE_WORKERS = 1;

/**
 * Opens PGlite in a worker thread (see above); fails at once if the database cannot be opened.
 * `workers` above 1 opens that many on the same snapshot (statements spread over them); the call
 * returns once the first is open.
 */
export async function openPgliteWorker(opts: PgliteWorkerOptions & { workers?: number }): Promise<SqlClient> {
  const client = new PgliteWorkerClient(opts);
  await client.start();
  const workers = Math.max(1, Math.floor(opts.workers ?? 1));
  return workers > 1 ? new PgliteWorkerPool(opts, client, workers - 1) : client;
}

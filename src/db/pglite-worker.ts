import type { Worker } from 'node:worker_threads';
import { DatabaseError } from '../errors.js';
import { queryFailure } from './db-errors.js';
import { parkWorker, takeWorker, type Reply } from './pglite-threads.js';
import type { QueryOptions, SqlClient } from './sql-client.js';

export {
  discardPrestarted,
  PARKED_MAX,
  parkedSnapshots,
  prestartedSnapshot,
  prestartPglite,
  stopParkedWorkers,
} from './pglite-threads.js';

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
    const { worker, opened } = takeWorker(this.opts.snapshot);
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

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { WORKER_SOURCE } from './pglite-worker-source.js';

/**
 * The PGlite worker threads of this process (src/db/pglite-worker.ts): how one is started on a
 * snapshot, the one started ahead of need, and the open ones closed clients left for the next
 * client of the same snapshot. A client takes its worker with {@link takeWorker}.
 */

const require = createRequire(import.meta.url);

/** What a worker thread sends back. */
export interface Reply {
  ready?: true;
  /** PostgreSQL's compiled module, from a worker that compiled it (the first of the process). */
  wasm?: object;
  fatal?: string;
  rows?: object[];
  error?: { message: string; code?: string };
  /** When the worker finished the statement (epoch ms): the next one it holds starts then. */
  at?: number;
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

export function parkWorker(snapshot: string, worker: Worker): void {
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
 * A worker for a client of `snapshot`: the one started ahead for it, else one a closed client of
 * this process left open on it, else a new one. A worker started ahead on another snapshot was a
 * wrong guess: it is stopped, never used.
 */
export function takeWorker(snapshot: string): ReturnType<typeof spawnWorker> {
  const early = prestarted;
  prestarted = undefined;
  if (early && early.snapshot !== snapshot) void early.worker.terminate().catch(() => undefined);
  return early?.snapshot === snapshot ? early : (unpark(snapshot) ?? spawnWorker(snapshot));
}

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_FORUM_DIR } from '../paths.js';
import type { PGlite } from '@electric-sql/pglite';
import type { Embedder } from '../embedding/embedder.js';
import { ConfigError } from '../errors.js';
import { readForum } from './forum.js';
import { textSearchConfigProblem } from '../corpus/retrieval-setup.js';
import { loadForum, type SqlWriter } from './load-forum.js';
import { demoEmbedder, demoSnapshotPath } from './demo-snapshot.js';
import type { LanguageCode } from '../model/languages/index.js';
import { keepWalSegments } from '../db/snapshot-wal.js';
import { DEFAULT_PGLITE_WORKERS, openPgliteWorker } from '../db/pglite-worker.js';
import { DEFAULT_STATEMENT_TIMEOUT_MS, type SqlClient } from '../db/sql-client.js';

export { demoEmbedder, demoSnapshotPath } from './demo-snapshot.js';

/** A PGlite as a SqlWriter (for building databases). */
export function pgliteWriter(db: PGlite): SqlWriter {
  return {
    script: async (sql) => {
      await db.exec(sql);
    },
    exec: async (sql, params) => {
      await db.query(sql, params);
    },
  };
}

/**
 * Removes the per-open working copies of the data directory that versions before the snapshot
 * made, left by processes that died without closing (e.g. killed with SIGKILL).
 */
function sweepStaleCopies(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(/^ragaudit-demo-db-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  }
}

export interface DemoDbOptions {
  /** Where built databases are cached (a snapshot per corpus digest). */
  cacheDir: string;
  forumDir?: string;
  textSearchConfig?: string;
  /** The config's language: the stop words the demo's offline vectors are made with. */
  language?: LanguageCode | undefined;
  /** Longest a query may run, ms (database.statement_timeout_ms); default 10 s. */
  statementTimeoutMs?: number;
  /** PGlite workers on the snapshot (database.connections); default {@link DEFAULT_PGLITE_WORKERS}. */
  workers?: number;
  /** Called with a line of progress ("building the demo database…"). */
  onProgress?: (message: string) => void;
}

/**
 * Builds the demo database from the forum files into a snapshot of its data directory (an
 * uncompressed tar, as PGlite's `dumpDataDir` writes it), written aside and renamed into place
 * so a reader in another process never sees half a file. VACUUM ANALYZE first: the planner gets
 * statistics, and every row's hint bits are set once here instead of on each open; then a
 * checkpoint. `SNAPSHOT_MAKE` (src/demo/demo-snapshot.ts) names this recipe in the file name.
 */
async function buildSnapshot(file: string, forumDir: string, cfg: string, embedder: Embedder): Promise<void> {
  const forum = readForum(forumDir);
  // Loaded only to build: opening a built snapshot never needs PGlite on this thread.
  const { PGlite } = await import('@electric-sql/pglite');
  const { vector } = await import('@electric-sql/pglite-pgvector');
  const db = await PGlite.create({ extensions: { vector } });
  let tar: Blob;
  let walNeeded: { redo: string; checkpoint: string };
  try {
    const problem = await textSearchConfigProblem(
      async (sql, params) => (await db.query<never>(sql, params)).rows,
      cfg,
      'the embedded demo database',
    );
    if (problem) throw new ConfigError('the embedded demo database cannot be built', [problem]);
    await loadForum(pgliteWriter(db), forum, { textSearchConfig: cfg, embedder });
    await db.exec('VACUUM ANALYZE');
    // The snapshot is taken from a running engine, so every open recovers it as after a crash:
    // a checkpoint here leaves that recovery nothing to replay (the build's few megabytes of
    // WAL were replayed at each open, ~60 ms of the worker's ~0.5 s).
    await db.exec('CHECKPOINT');
    const wal = await db.query<{ redo: string; checkpoint: string }>(
      'SELECT pg_walfile_name(redo_lsn) AS redo, pg_walfile_name(checkpoint_lsn) AS checkpoint FROM pg_control_checkpoint()',
    );
    walNeeded = wal.rows[0]!;
    tar = await db.dumpDataDir('none');
  } finally {
    await db.close().catch(() => undefined);
  }
  // Only the WAL that recovery from the checkpoint reads (src/db/snapshot-wal.ts): a build
  // that wrote more than one segment left a second 16 MB file, read into every open's memory.
  const bytes = keepWalSegments(new Uint8Array(await tar.arrayBuffer()), walNeeded.redo, walNeeded.checkpoint);
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(tmp, bytes);
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    // Another process built it first: keep theirs.
    if (!existsSync(file)) throw e;
  }
}

/**
 * Opens the embedded demo database: built from the forum files on first use into a snapshot in
 * the cache (rebuilt when any forum file changes), and loaded from that snapshot into memory by
 * every open: nothing is copied on disk, parallel processes never share files, and a query never
 * waits on the file system. The database runs in a worker thread so that a query past the
 * statement timeout can be stopped; the next query loads the snapshot again.
 */
export async function openDemoDatabase(opts: DemoDbOptions): Promise<SqlClient> {
  const snapshot = await ensureDemoSnapshot(opts);
  sweepStaleCopies();
  return openPgliteWorker({
    label: 'embedded demo database (PGlite)',
    statementTimeoutMs: opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    snapshot,
    workers: opts.workers ?? DEFAULT_PGLITE_WORKERS,
  });
}

/**
 * The demo database's snapshot in the cache (see {@link openDemoDatabase}), built first if it is
 * not there yet; nothing is opened. Returns its path.
 */
export async function ensureDemoSnapshot(
  opts: Pick<DemoDbOptions, 'cacheDir' | 'forumDir' | 'textSearchConfig' | 'language' | 'onProgress'>,
): Promise<string> {
  const forumDir = opts.forumDir ?? DEMO_FORUM_DIR;
  const snapshot = demoSnapshotPath(opts);
  if (!existsSync(snapshot)) {
    opts.onProgress?.(`building the demo database from ${forumDir} (first use; cached afterwards)`);
    mkdirSync(opts.cacheDir, { recursive: true });
    await buildSnapshot(snapshot, forumDir, opts.textSearchConfig ?? 'english', demoEmbedder(opts.language));
  }
  return snapshot;
}

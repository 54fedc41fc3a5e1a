import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_FORUM_DIR } from '../paths.js';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Embedder } from '../embedding/embedder.js';
import { HashEmbedder } from '../embedding/hash-embedder.js';
import { ConfigError } from '../errors.js';
import { readForum } from './forum.js';
import { textSearchConfigProblem } from './retrieval-setup.js';
import { loadForum, type SqlWriter } from './load-forum.js';
import { openPgliteWorker } from './pglite-worker.js';
import { DEFAULT_STATEMENT_TIMEOUT_MS, type SqlClient } from './sql-client.js';

/** Bumped when the way the demo database is built changes, so old caches are not reused. */
const BUILD_VERSION = 4;

/** The embedder the demo database's vectors were made with: the offline hash embedder. */
export function demoEmbedder(): Embedder {
  return new HashEmbedder(384);
}

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

function forumDigest(dir: string, extra: string): string {
  const h = createHash('sha256').update(`v${BUILD_VERSION}\n${extra}\n`);
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.yml')) continue;
    h.update(name)
      .update('\0')
      .update(readFileSync(join(dir, name)))
      .update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

const COPY_PREFIX = 'ragaudit-demo-db-';

/** Removes working copies left by processes that died without closing (e.g. killed with SIGKILL). */
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
  /** Where built databases are cached (a data directory per corpus digest). */
  cacheDir: string;
  forumDir?: string;
  textSearchConfig?: string;
  /** Longest a query may run, ms (database.statement_timeout_ms); default 10 s. */
  statementTimeoutMs?: number;
  /** Called with a line of progress ("building the demo database…"). */
  onProgress?: (message: string) => void;
}

/**
 * Opens the embedded demo database: built from the forum files on first use into an on-disk
 * PGlite data directory in the cache, rebuilt when any forum file changes. Each open works on its
 * own copy of that directory (removed on close), so parallel processes never share files;
 * copying and opening a data directory is several times faster than restoring a dump. The
 * database runs in a worker thread so that a query past the statement timeout can be stopped.
 */
export async function openDemoDatabase(opts: DemoDbOptions): Promise<SqlClient> {
  const forumDir = opts.forumDir ?? DEMO_FORUM_DIR;
  const cfg = opts.textSearchConfig ?? 'english';
  const embedder = demoEmbedder();
  const digest = forumDigest(forumDir, `${cfg}|${embedder.id}`);
  const built = join(opts.cacheDir, `demo-db-${digest}`);
  if (!existsSync(built)) {
    opts.onProgress?.(`building the demo database from ${forumDir} (first use; cached afterwards)`);
    const forum = readForum(forumDir);
    mkdirSync(opts.cacheDir, { recursive: true });
    // Build aside then rename, so a reader in another process never sees half a database.
    const tmp = `${built}.${process.pid}.${randomBytes(4).toString('hex')}`;
    const db = await PGlite.create({ dataDir: tmp, extensions: { vector } });
    try {
      const problem = await textSearchConfigProblem(
        async (sql, params) => (await db.query<never>(sql, params)).rows,
        cfg,
        'the embedded demo database',
      );
      if (problem) throw new ConfigError('the embedded demo database cannot be built', [problem]);
      await loadForum(pgliteWriter(db), forum, { textSearchConfig: cfg, embedder });
    } catch (e) {
      await db.close().catch(() => undefined);
      rmSync(tmp, { recursive: true, force: true });
      throw e;
    }
    await db.close();
    try {
      renameSync(tmp, built);
    } catch {
      // Another process built it first: keep theirs.
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  sweepStaleCopies();
  return openPgliteWorker({
    label: 'embedded demo database (PGlite)',
    statementTimeoutMs: opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    openDir: () => {
      const copy = mkdtempSync(join(tmpdir(), `${COPY_PREFIX}${process.pid}-`));
      cpSync(built, copy, { recursive: true });
      return { dir: copy, remove: () => rmSync(copy, { recursive: true, force: true }) };
    },
  });
}

import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_FORUM_DIR } from '../paths.js';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { Embedder } from '../retrieval/embedder.js';
import { HashEmbedder } from '../retrieval/hash-embedder.js';
import { readForum } from './forum.js';
import { loadForum, type SqlWriter } from './load-forum.js';
import { pgliteClient, type SqlClient } from './sql-client.js';

/** Bumped when the way the demo database is built changes, so old caches are not reused. */
const BUILD_VERSION = 3;


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
    h.update(name).update('\0').update(readFileSync(join(dir, name))).update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

export interface DemoDbOptions {
  /** Where built databases are cached (a tarball per corpus digest). */
  cacheDir: string;
  forumDir?: string;
  textSearchConfig?: string;
  /** Called with a line of progress ("building the demo database…"). */
  onProgress?: (message: string) => void;
}

/**
 * Opens the embedded demo database: built from the forum files on first use, dumped to a
 * tarball in the cache, and loaded from it afterwards; rebuilt when any forum file changes.
 * Each open is its own in-memory instance, so parallel test workers never share files.
 */
export async function openDemoDatabase(opts: DemoDbOptions): Promise<SqlClient> {
  const forumDir = opts.forumDir ?? DEMO_FORUM_DIR;
  const cfg = opts.textSearchConfig ?? 'english';
  const embedder = demoEmbedder();
  const digest = forumDigest(forumDir, `${cfg}|${embedder.id}`);
  const file = join(opts.cacheDir, `demo-db-${digest}.tar.gz`);
  if (!existsSync(file)) {
    opts.onProgress?.(`building the demo database from ${forumDir} (first use; cached afterwards)`);
    const forum = readForum(forumDir);
    const db = await PGlite.create({ extensions: { vector } });
    await loadForum(pgliteWriter(db), forum, { textSearchConfig: cfg, embedder });
    const dump = await db.dumpDataDir('gzip');
    await db.close();
    mkdirSync(opts.cacheDir, { recursive: true });
    // Write then rename, so a reader in another process never sees half a file.
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
    renameSync(tmp, file);
  }
  const blob = new Blob([readFileSync(file)]);
  const db = await PGlite.create({ loadDataDir: blob, extensions: { vector } });
  return pgliteClient(db, { label: 'embedded demo database (PGlite)', owned: true });
}


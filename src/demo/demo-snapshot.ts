import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder } from '../embedding/embedder.js';
import { HashEmbedder } from '../embedding/hash-embedder.js';
import { languagePack, type LanguageCode } from '../model/languages/index.js';
import { DEMO_FORUM_DIR } from '../paths.js';

/**
 * Where a demo forum's database snapshot is cached: named by a digest of its forum files, its
 * text search configuration and its embedder, so a changed forum is built again. Apart from
 * demo-db.ts so the executable can name the demo's snapshot before it loads the rest.
 */

/** Bumped when the way the demo database is built changes, so old caches are not reused. */
const BUILD_VERSION = 5;

/**
 * The embedder the demo database's vectors were made with: the offline hash embedder, with the
 * stop words of the config's language, as the run's query embedder has them (src/runs/providers.ts).
 */
export function demoEmbedder(language?: LanguageCode): Embedder {
  return new HashEmbedder(384, languagePack(language));
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

/**
 * How a snapshot is made (src/demo/demo-db.ts), part of its name: a snapshot cached by an
 * earlier recipe is built again rather than opened. 2: checkpointed before the dump; 3: without
 * the WAL segments recovery from that checkpoint does not read.
 */
export const SNAPSHOT_MAKE = 3;

/** Where the snapshot of a forum (with its text search configuration) is cached; it may not exist yet. */
export function demoSnapshotPath(opts: {
  cacheDir: string;
  forumDir?: string;
  textSearchConfig?: string;
  language?: LanguageCode | undefined;
}): string {
  const digest = forumDigest(
    opts.forumDir ?? DEMO_FORUM_DIR,
    `${opts.textSearchConfig ?? 'english'}|${demoEmbedder(opts.language).id}|make ${SNAPSHOT_MAKE}`,
  );
  return join(opts.cacheDir, `demo-db-${digest}.tar`);
}

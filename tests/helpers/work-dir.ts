/**
 * Temp work dirs for runs of the CLI or the library. Imports nothing from src/, so the public-API
 * test can use it and still load the package only through its name.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '../..');

/**
 * A temp work dir (the process cwd of a run) whose demo database caches link to the repository's:
 * `.cache/ragaudit/demo-db` (the built-in config's `cache_dir`) and `cache/demo-db` (the test
 * configs' `cache_dir: cache`). The embedded forum is then built once, by the global set-up, and
 * shared by every test and file (a run in a bare temp dir built it again: ~10 s of CPU each),
 * while each run gets its own response cache and output dir.
 */
export function workDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `ragaudit-${prefix}-`));
  made.push(dir);
  linkDemoCache(dir);
  return dir;
}

/** Links a directory's demo database caches (both `cache_dir`s above) to the repository's. */
export function linkDemoCache(dir: string): void {
  for (const cache of [join(dir, 'cache'), join(dir, '.cache', 'ragaudit')]) shareDemoCache(cache);
}

/**
 * Links the `demo-db` of a `cache_dir` to the repository's, once: a forum's snapshot is named by
 * the digest of its files, so every forum built by a test (the demo, a tiny or a French one) is
 * built once for the whole run, whichever file asks first.
 */
export function shareDemoCache(cacheDir: string): void {
  const shared = join(REPO, '.cache', 'ragaudit', 'demo-db');
  mkdirSync(shared, { recursive: true });
  mkdirSync(cacheDir, { recursive: true });
  if (!existsSync(join(cacheDir, 'demo-db'))) symlinkSync(shared, join(cacheDir, 'demo-db'));
}

const made: string[] = [];

/** Removes the work dirs this file made (the shared demo-db behind the link stays). */
export function removeWorkDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * Temp work dirs for runs of the CLI or the library. Imports nothing from src/, so the public-API
 * test can use it and still load the package only through its name.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '../..');

/**
 * A temp work dir (the process cwd of a run) whose `cache/demo-db` links to the repository's
 * demo database cache: the embedded forum is built once and shared by every test and file,
 * while each run gets its own response cache and output dir.
 */
export function workDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `ragaudit-${prefix}-`));
  made.push(dir);
  const shared = join(REPO, '.cache', 'ragaudit', 'demo-db');
  mkdirSync(shared, { recursive: true });
  mkdirSync(join(dir, 'cache'), { recursive: true });
  symlinkSync(shared, join(dir, 'cache', 'demo-db'));
  return dir;
}

const made: string[] = [];

/** Removes the work dirs this file made (the shared demo-db behind the link stays). */
export function removeWorkDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { demoSnapshotPath } from './demo-snapshot.js';
import { prestartPglite } from '../db/pglite-worker.js';

/** Commands that open the database first thing (the others never need the embedded demo early). */
const OPENING = new Set(['run', 'retrieval', 'probe', 'matrix']);

/** The value of `--flag VALUE` or `--flag=VALUE` in argv. */
function flagValue(argv: readonly string[], flag: string): string | undefined {
  for (const [i, a] of argv.entries()) {
    if (a === flag) return argv[i + 1];
    if (a.startsWith(`${flag}=`)) return a.slice(flag.length + 1);
  }
  return undefined;
}

/**
 * Keys of a config file that can name another snapshot than the shipped demo's, at any depth and
 * in any YAML or JSON style (a false match only sends the guess to the newest snapshot).
 */
const SNAPSHOT_KEYS = /\b(database|cache_dir|language)["']?\s*:/;

/** Whether a config file's text has none of the keys that choose the demo snapshot (unreadable: no). */
function keepsDemoDefaults(file: string): boolean {
  try {
    return !SNAPSHOT_KEYS.test(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Before the CLI loads its modules and reads its config, starts opening the embedded demo
 * database on its own thread when the command will most likely open it: a command that opens a
 * database, no `--db`, not `--help`, and a demo snapshot already built in the cache directory
 * (`--cache-dir` or the default `.cache/ragaudit` under the working directory): the shipped
 * demo's when the built-in config is used or the config file keeps its database, cache directory
 * and language, else the newest one.
 * A guess only: the run later opens the snapshot its config names, taking this worker when it is
 * the same snapshot and stopping it otherwise, so a wrong guess costs a thread's work, never a
 * wrong database. Returns the snapshot started, if any.
 */
export function prestartDemoDatabase(argv: readonly string[], cwd: string): string | undefined {
  const [command, ...rest] = argv;
  if (!command || !OPENING.has(command)) return undefined;
  if (rest.some((a) => a === '--help' || a === '-h' || a === '--db' || a.startsWith('--db='))) return undefined;
  const dir = join(resolve(cwd, flagValue(rest, '--cache-dir') ?? '.cache/ragaudit'), 'demo-db');
  // The built-in config, or a config file that leaves the database, the cache directory and the
  // language as they are (no such key anywhere in it), names the shipped demo's snapshot exactly;
  // the cache may hold newer snapshots of other forums.
  const configFile = flagValue(rest, '--config') ?? flagValue(rest, '-c');
  const demoDefaults =
    !rest.some((a) => a.startsWith('--language')) &&
    (configFile === undefined || keepsDemoDefaults(resolve(cwd, configFile)));
  if (demoDefaults) {
    const demo = demoSnapshotPath({ cacheDir: dir });
    if (existsSync(demo)) {
      prestartPglite(demo);
      return demo;
    }
  }
  let newest: { file: string; mtime: number } | undefined;
  try {
    for (const name of readdirSync(dir)) {
      if (!/^demo-db-[0-9a-f]+\.tar$/.test(name)) continue;
      const file = join(dir, name);
      const mtime = statSync(file).mtimeMs;
      if (!newest || mtime > newest.mtime) newest = { file, mtime };
    }
  } catch {
    return undefined;
  }
  if (newest) prestartPglite(newest.file);
  return newest?.file;
}

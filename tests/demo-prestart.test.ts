/**
 * Opening the embedded demo ahead (src/demo/demo-prestart.ts, called by the `ragaudit`
 * executable before it loads the CLI): only for commands that open a database, never with --db
 * or --help; the run's own open takes the worker started ahead when it is the same snapshot, and
 * a wrong guess never stands in for the database the config names.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { demoSnapshotPath, openDemoDatabase } from '../src/demo/demo-db.js';
import { prestartDemoDatabase } from '../src/demo/demo-prestart.js';
import { discardPrestarted, prestartedSnapshot, prestartPglite } from '../src/db/pglite-worker.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { removeWorkDirs, workDir } from './fixtures/audit/harness.js';

const CACHE = join(PACKAGE_ROOT, '.cache', 'ragaudit', 'demo-db');

afterAll(async () => {
  await discardPrestarted();
  removeWorkDirs();
});

describe('opening the embedded demo ahead', { timeout: 120_000 }, () => {
  it('starts only for commands that open a database, without --db or --help, when a snapshot is cached', async () => {
    // The demo's snapshot exists once any demo run has built it.
    const db = await openDemoDatabase({ cacheDir: CACHE });
    await db.close();
    const snapshot = basename(demoSnapshotPath({ cacheDir: CACHE }));
    // A cache of its own: the work directory's `cache/demo-db` is the shared cache, where other
    // tests' forums leave newer snapshots.
    const cwd = workDir('prestart');
    mkdirSync(join(cwd, 'own-cache', 'demo-db'), { recursive: true });
    copyFileSync(join(CACHE, snapshot), join(cwd, 'own-cache', 'demo-db', snapshot));
    writeFileSync(join(cwd, 'own-cache', 'demo-db', 'demo-db-notes.txt'), 'not a snapshot');
    // Another forum's snapshot, newer than the demo's: a config's guess (the newest), never the built-in demo's.
    const other = join(cwd, 'own-cache', 'demo-db', 'demo-db-0123456789abcdef.tar');
    writeFileSync(other, 'another forum');
    utimesSync(other, new Date(Date.now() + 60_000), new Date(Date.now() + 60_000));
    expect(prestartDemoDatabase(['run', '--config', 'mine.yml', '--cache-dir', 'own-cache'], cwd)).toBe(other);
    await discardPrestarted();
    // A config file that names no database, cache directory or language keeps the shipped demo:
    // its snapshot, not the newest; one that names any of them (quoted keys too) the newest.
    writeFileSync(join(cwd, 'gen.yml'), 'name: gen\ngenerator: { provider: openai, model: m }\n');
    writeFileSync(join(cwd, 'db.yml'), 'name: db\ndatabase:\n  text_search_config: french\n');
    writeFileSync(join(cwd, 'lang.json'), '{ "name": "l", "language": "fr" }\n');
    expect(prestartDemoDatabase(['run', '-c', 'gen.yml', '--cache-dir', 'own-cache'], cwd)).toBe(
      join(cwd, 'own-cache', 'demo-db', snapshot),
    );
    await discardPrestarted();
    for (const file of ['db.yml', 'lang.json']) {
      expect(prestartDemoDatabase(['run', `--config=${file}`, '--cache-dir', 'own-cache'], cwd), file).toBe(other);
      await discardPrestarted();
    }
    expect(prestartDemoDatabase(['run', '-c', 'gen.yml', '--language', 'fr', '--cache-dir', 'own-cache'], cwd)).toBe(
      other,
    );
    await discardPrestarted();
    for (const argv of [
      ['compare', 'a.json', 'b.json'],
      ['run', '--db', 'postgres://127.0.0.1/forum'],
      ['retrieval', '--help'],
    ]) {
      expect(prestartDemoDatabase(argv, cwd), argv.join(' ')).toBeUndefined();
      expect(prestartedSnapshot()).toBeUndefined();
    }
    // No snapshot under the default cache directory of a working directory (a bare one: the
    // work directory's default cache links the shared one).
    const bare = mkdtempSync(join(tmpdir(), 'ragaudit-prestart-bare-'));
    expect(prestartDemoDatabase(['run'], bare)).toBeUndefined();
    expect(prestartedSnapshot()).toBeUndefined();
    rmSync(bare, { recursive: true });
    const started = prestartDemoDatabase(['retrieval', '--cache-dir', 'own-cache'], cwd);
    expect(started).toBe(join(cwd, 'own-cache', 'demo-db', snapshot));
    expect(prestartedSnapshot()).toBe(started);
    // The run's open of the same snapshot takes the worker and queries it.
    const opened = await openDemoDatabase({ cacheDir: join(cwd, 'own-cache', 'demo-db') });
    expect(prestartedSnapshot()).toBeUndefined();
    const [row] = await opened.query<{ n: string }>('SELECT count(*)::text AS n FROM posts');
    expect(Number(row!.n)).toBeGreaterThan(100);
    await opened.close();
  });

  it('a wrong guess is stopped and the configured database opened', async () => {
    prestartPglite(join(workDir('wrong-guess'), 'demo-db-0000.tar'));
    const db = await openDemoDatabase({ cacheDir: CACHE });
    expect(prestartedSnapshot()).toBeUndefined();
    const [row] = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM posts');
    expect(Number(row!.n)).toBeGreaterThan(100);
    await db.close();
  });
});

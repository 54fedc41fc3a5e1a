/**
 * Starts a throwaway PostgreSQL server on loopback for the whole test run and stops it after.
 * Tests reach it through `inject('pgAdminUrl')`. A missing server is a failure, not a skip:
 * the suites that need PostgreSQL must run (see .ci/run).
 */
import { execFile, execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureDemoSnapshot } from '../../src/demo/demo-db.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}

export function findBin(): string {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin');
  }
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(
      'PostgreSQL server binaries (initdb, pg_ctl) not found: install PostgreSQL (Debian: apt-get install postgresql)',
    );
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Runs a PostgreSQL server program, as the postgres user when we are root (initdb refuses root). */
export function pgTool(bin: string, cmd: string, args: string[]): SpawnSyncReturns<string> {
  return process.getuid?.() === 0
    ? spawnSync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { encoding: 'utf8' })
    : spawnSync(join(bin, cmd), args, { encoding: 'utf8' });
}

/** {@link runPgTool} without blocking this thread: resolves when the program ends well, else rejects with its output. */
function pgToolAsync(bin: string, cmd: string, args: string[]): Promise<void> {
  const [file, argv] =
    process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { encoding: 'utf8' }, (e, stdout, stderr) =>
      e ? reject(new Error(`${cmd} failed: ${stderr || stdout || e.message}`)) : resolve(),
    );
  });
}

/** Runs a PostgreSQL server program and returns its output; throws with its message when it fails. */
export function runPgTool(bin: string, cmd: string, args: string[]): string {
  const r = pgTool(bin, cmd, args);
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout || r.error?.message}`);
  return r.stdout;
}

/** Ports start-up tries when each one is taken before the server binds it. */
export const START_TRIES = 5;

/**
 * Starts the server of `data` on a free loopback port (its socket and logs in `dir`). freePort()
 * lets its port go before pg_ctl binds it, so another process may take the port in between; the
 * server then logs "Address already in use" and start-up tries a new port, up to `tries` ports.
 * Any other failure throws at once, with the server log.
 */
export async function startOnFreePort(
  bin: string,
  data: string,
  dir: string,
  opts: { settings?: string; pickPort?: () => Promise<number>; tries?: number } = {},
): Promise<{ port: number; attempts: number }> {
  const tries = opts.tries ?? START_TRIES;
  for (let attempt = 1; ; attempt++) {
    const port = await (opts.pickPort ?? freePort)();
    const log = join(dir, `server-${attempt}.log`);
    const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off ${opts.settings ?? ''}`.trim();
    const r = pgTool(bin, 'pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', '-o', settings, 'start']);
    if (r.status === 0) return { port, attempts: attempt };
    const said = existsSync(log) ? readFileSync(log, 'utf8') : '';
    if (attempt < tries && /Address already in use/.test(said)) continue;
    throw new Error(
      `pg_ctl start failed on port ${port} (try ${attempt} of ${tries}): ${r.stderr || r.stdout || r.error?.message}\n${said}`,
    );
  }
}

let stop: (() => void) | undefined;

export default async function setup(project: TestProject) {
  const bin = findBin();
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  // initdb in its own process while this one builds the embedded demo database (on a fresh
  // clone; a snapshot already in the default cache is only checked for): the two overlap on two
  // cores instead of running one after the other.
  const initdb = pgToolAsync(bin, 'initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--locale=C.UTF-8',
    '--no-sync',
  ]);
  // Build the embedded demo database once, before any test file opens it (the default cache).
  const built = ensureDemoSnapshot({ cacheDir: join(PACKAGE_ROOT, '.cache', 'ragaudit', 'demo-db') });
  await Promise.all([initdb, built]);
  const { port } = await startOnFreePort(bin, data, dir, { settings: '-c max_connections=100' });
  stop = () => {
    try {
      runPgTool(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  project.provide('pgAdminUrl', `postgres://postgres@127.0.0.1:${port}/postgres`);
  return () => stop?.();
}

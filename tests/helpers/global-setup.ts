/**
 * Starts a throwaway PostgreSQL server on loopback for the whole test run and stops it after.
 * Tests reach it through `inject('pgAdminUrl')`. A missing server is a failure, not a skip:
 * the suites that need PostgreSQL must run (see .ci/run).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDemoDatabase } from '../../src/corpus/demo-db.js';
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
    throw new Error('PostgreSQL server binaries (initdb, pg_ctl) not found: install PostgreSQL (Debian: apt-get install postgresql)');
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

let stop: (() => void) | undefined;

export default async function setup(project: TestProject) {
  const bin = findBin();
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  // initdb refuses to run as root: run the server as the postgres user then.
  const run = (cmd: string, args: string[]) => {
    const r = asRoot ? spawnSync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { encoding: 'utf8' }) : spawnSync(join(bin, cmd), args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout || r.error?.message}`);
    return r.stdout;
  };
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  const port = await freePort();
  run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`, 'start']);
  stop = () => {
    try {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  project.provide('pgAdminUrl', `postgres://postgres@127.0.0.1:${port}/postgres`);
  // Build the embedded demo database once, before any test file opens it (the default cache).
  const demo = await openDemoDatabase({ cacheDir: join(PACKAGE_ROOT, '.cache', 'ragaudit', 'demo-db') });
  await demo.close();
  return () => stop?.();
}

/**
 * PostgreSQL start-up for the tests picks a free port, lets it go, then starts the server on it:
 * another process may take the port in between. Here a listener holds the port first picked, as
 * that process would, and start-up must move on to a new port (a bounded number of times).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBin, freePort, runPgTool, startOnFreePort } from './helpers/global-setup.js';

describe('PostgreSQL start-up when the chosen port is taken', { timeout: 120_000 }, () => {
  const bin = findBin();
  let dir: string;
  let data: string;
  let holder: Server;
  let taken: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ragaudit-pgport-'));
    chmodSync(dir, 0o777);
    data = join(dir, 'data');
    runPgTool(bin, 'initdb', [
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
    holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    taken = (holder.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => holder.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives up after the bounded number of tries when every port offered is taken', async () => {
    const err = await startOnFreePort(bin, data, dir, { pickPort: async () => taken, tries: 2 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(new RegExp(`^pg_ctl start failed on port ${taken} \\(try 2 of 2\\)`));
    expect((err as Error).message).toContain('Address already in use');
  });

  it('tries a new port when the first is taken, and serves on it', async () => {
    const offered = [taken];
    const { port, attempts } = await startOnFreePort(bin, data, dir, {
      pickPort: async () => offered.shift() ?? freePort(),
    });
    try {
      expect(attempts).toBe(2);
      expect(port).not.toBe(taken);
      const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
      await client.connect();
      try {
        expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      } finally {
        await client.end();
      }
    } finally {
      runPgTool(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    }
  });
});

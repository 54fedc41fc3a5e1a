import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { findBin, runPgTool, startOnFreePort } from './global-setup.js';
import type { SqlWriter } from '../../src/demo/load-forum.js';

/** Creates a fresh database on the test server; returns its URL and a writer (owner access). */
export async function freshDatabase(
  prefix: string,
): Promise<{ url: string; writer: SqlWriter; close: () => Promise<void> }> {
  const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`.toLowerCase();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = inject('pgAdminUrl').replace(/\/postgres$/, `/${name}`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    url,
    writer: {
      script: async (sql) => {
        await client.query(sql);
      },
      exec: async (sql, params) => {
        await client.query(sql, params);
      },
    },
    close: () => client.end(),
  };
}

/**
 * A private PostgreSQL server that asks for passwords over TCP (the shared test server trusts
 * everyone, so a wrong password cannot be told from a right one there). The superuser `postgres`
 * has `password`. About 2 s to start.
 */
export async function startPasswordServer(password: string): Promise<{ port: number; stop: () => void }> {
  const bin = findBin();
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-pgpw-'));
  chmodSync(dir, 0o777);
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o644 });
  const data = join(dir, 'data');
  runPgTool(bin, 'initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    `--pwfile=${pwfile}`,
    '-E',
    'UTF8',
    '--locale=C.UTF-8',
    '--no-sync',
  ]);
  const { port } = await startOnFreePort(bin, data, dir);
  return {
    port,
    stop: () => {
      try {
        runPgTool(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * A TCP proxy in front of a server that can freeze: after `freeze()` it keeps every connection
 * open and accepts new ones, but forwards nothing either way (a stalled network path or a hung
 * server, as seen by the client).
 */
export async function freezingProxy(
  targetPort: number,
): Promise<{ port: number; freeze: () => void; close: () => Promise<void> }> {
  let frozen = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (d) => void (frozen || upstream.write(d)));
    upstream.on('data', (d) => void (frozen || client.write(d)));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    freeze: () => void (frozen = true),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * discourse-ai's embedding tables for a server without pgvector: the same table and column names,
 * `real[]` for `halfvec`, and a `vector_dims` for it. Enough for what reads the catalog and the
 * rows' shape (the checks before the first case); similarity itself is tested on PGlite.
 * Every public post and topic gets a vector of `dims` values under model_id 1, strategy_id 1.
 */
export function standInEmbeddingsSql(dims: number): string {
  return `
CREATE FUNCTION vector_dims(real[]) RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT array_length($1, 1)';
CREATE TABLE ai_posts_embeddings (post_id integer NOT NULL, model_id integer NOT NULL, strategy_id integer NOT NULL, embeddings real[] NOT NULL);
CREATE TABLE ai_topics_embeddings (topic_id integer NOT NULL, model_id integer NOT NULL, strategy_id integer NOT NULL, embeddings real[] NOT NULL);
INSERT INTO ai_posts_embeddings SELECT id, 1, 1, array_fill(0.1::real, ARRAY[${dims}]) FROM posts;
INSERT INTO ai_topics_embeddings SELECT id, 1, 1, array_fill(0.1::real, ARRAY[${dims}]) FROM topics;`;
}

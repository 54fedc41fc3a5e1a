import pg from 'pg';
import { inject } from 'vitest';
import type { SqlWriter } from '../../src/corpus/load-forum.js';

/** Creates a fresh database on the test server; returns its URL and a writer (owner access). */
export async function freshDatabase(prefix: string): Promise<{ url: string; writer: SqlWriter; close: () => Promise<void> }> {
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

/**
 * The embedded demo on several PGlite workers (`database.connections`): statements spread over
 * the open workers, each a read-only copy of the same snapshot, and the pool closes them all.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDemoDatabase } from '../src/corpus/demo-db.js';
import { PACKAGE_ROOT } from '../src/paths.js';

const CACHE = join(PACKAGE_ROOT, '.cache', 'ragaudit', 'demo-db');

describe('the embedded demo on two workers', { timeout: 120_000 }, () => {
  it('sends statements given together to different workers, each answering from the same data, read-only', async () => {
    const db = await openDemoDatabase({ cacheDir: CACHE, workers: 2 });
    try {
      // Each worker is its own PostgreSQL instance: its start time tells which one answered. The
      // second worker opens in the background, so pairs are sent until both have answered (bounded).
      const started = `SELECT pg_postmaster_start_time()::text AS started, count(*)::text AS n FROM posts, pg_sleep(0.05)`;
      const seen = new Set<string>();
      const counts = new Set<string>();
      for (let i = 0; i < 100 && seen.size < 2; i++) {
        const pair = await Promise.all([
          db.query<{ started: string; n: string }>(started),
          db.query<{ started: string; n: string }>(started),
        ]);
        for (const [row] of pair) {
          seen.add(row!.started);
          counts.add(row!.n);
        }
        if (seen.size < 2) await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen.size).toBe(2);
      expect(counts.size).toBe(1);
      // Read-only on every worker.
      const writes = await Promise.allSettled([db.query('DELETE FROM posts'), db.query('DELETE FROM posts')]);
      expect(writes.map((w) => w.status)).toEqual(['rejected', 'rejected']);
      const [row] = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM posts');
      expect(row!.n).toBe([...counts][0]);
    } finally {
      await db.close();
    }
    await expect(db.query('SELECT 1')).rejects.toThrow(/closed/);
  });
});

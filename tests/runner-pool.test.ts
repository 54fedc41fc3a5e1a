/**
 * The concurrency pool: on the first failure no lane takes another item, and the pool settles
 * only after every started worker has finished (before, the caller saw the first error while the
 * other workers kept running — and could close the database under them).
 */
import { describe, expect, it } from 'vitest';
import { forEachConcurrent } from '../src/runs/concurrency.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('forEachConcurrent', () => {
  it('awaits every started worker before rejecting with the first error, and starts no more', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const run = forEachConcurrent([0, 1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      started.push(n);
      if (n === 0) {
        await tick();
        throw new Error('case 0 failed');
      }
      await gate; // workers 1 and 2 are still running when 0 fails
      finished.push(n);
    });
    let settled = false;
    const outcome = run
      .then(
        () => 'resolved',
        (e: Error) => e.message,
      )
      .finally(() => (settled = true));
    await tick();
    await tick();
    // The first error is known, but two workers are in flight: the pool has not settled.
    expect(settled).toBe(false);
    release();
    expect(await outcome).toBe('case 0 failed');
    expect(finished.sort()).toEqual([1, 2]);
    // No lane took an item after the failure.
    expect(started.sort()).toEqual([0, 1, 2]);
  });

  it('rethrows the first error when several workers fail', async () => {
    await expect(
      forEachConcurrent([1, 2, 3], 3, async (n) => {
        await new Promise((r) => setTimeout(r, n * 5));
        throw new Error(`failed ${n}`);
      }),
    ).rejects.toThrow('failed 1');
  });

  it('takes no more items once stop() says so, finishing the ones in flight', async () => {
    const done: number[] = [];
    await forEachConcurrent(
      [0, 1, 2, 3, 4, 5],
      2,
      async (n) => {
        await tick();
        done.push(n);
      },
      { stop: () => done.length >= 2 },
    );
    expect(done.length).toBeGreaterThanOrEqual(2);
    expect(done.length).toBeLessThanOrEqual(3);
  });
});

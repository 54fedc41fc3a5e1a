/**
 * A channel's batch on PostgreSQL goes in chunks sized to the statement timeout
 * (src/retrieval/statement-chunks.ts), measured on a fake clock: each statement "takes" its
 * questions' cost, so the sizes follow from the arithmetic below, not from this machine's speed.
 */
import { describe, expect, it } from 'vitest';
import { BUDGET_SHARE, FIRST_CHUNK, StatementChunks } from '../src/retrieval/statement-chunks.js';

/** A clock that a statement moves forward by its questions' cost; records each statement's size. */
function fakeStatements(msPerQuestion: (q: number) => number) {
  let t = 0;
  const sizes: number[] = [];
  const statement = async (chunk: readonly number[]) => {
    sizes.push(chunk.length);
    for (const q of chunk) t += msPerQuestion(q);
    return chunk.map((q) => [`list of ${q}`]);
  };
  return { now: () => t, sizes, statement };
}

const questions = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('statement chunks on PostgreSQL', () => {
  it('a first chunk of 2, then as many questions as fit a fifth of the timeout, the lists in order', async () => {
    expect(FIRST_CHUNK).toBe(2);
    expect(BUDGET_SHARE).toBe(0.2);
    // 141 ms a question (the 200,000-post forum's keyword median) under the default 10 s timeout:
    // 2,000 ms of budget / 141 ms = 14 questions a statement (14.18, floored).
    const f = fakeStatements(() => 141);
    const chunks = new StatementChunks(10_000, f.now);
    const lists = await chunks.run(questions(60), f.statement);
    expect(f.sizes).toEqual([2, 14, 14, 14, 14, 2]);
    expect(lists).toEqual(questions(60).map((q) => [`list of ${q}`]));
  });

  it('cheap questions: the rest of the batch in one statement after the first chunk', async () => {
    // 3 ms a question (ann): 2,000 / 3 = 666 fit, more than the 248 left.
    const f = fakeStatements(() => 3);
    await new StatementChunks(10_000, f.now).run(questions(250), f.statement);
    expect(f.sizes).toEqual([2, 248]);
  });

  it('a slower chunk shrinks the next at once; a faster one grows it by halves; never below one question', async () => {
    // The first 8 cost 10 ms each (two statements: 2, then 6), the next ones 500 ms: 2,000 / 10 = 200 fit, then 2,000 / 500 = 4;
    // after chunks at 50 ms a question the estimate halves towards it: (500 + 50) / 2 = 275 → 7.
    const cost = (q: number) => (q < 8 ? 10 : q < 208 ? 500 : 50);
    const f = fakeStatements(cost);
    const chunks = new StatementChunks(10_000, f.now);
    await chunks.run(questions(8), f.statement);
    expect(chunks.size(1000)).toBe(200);
    chunks.observe(200, 200 * 500);
    expect(chunks.size(1000)).toBe(4);
    chunks.observe(4, 4 * 50);
    expect(chunks.size(1000)).toBe(7);
    chunks.observe(1, 60_000);
    expect(chunks.size(1000)).toBe(1);
  });

  it('a chunk that outruns the statement timeout is asked again one question a statement; a lone question that does fails', async () => {
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    const isTimeout = (e: unknown) => e === timeout;
    const sizes: number[][] = [];
    const chunks = new StatementChunks(10_000, () => 0, isTimeout);
    const lists = await chunks.run(questions(5), async (chunk) => {
      sizes.push([...chunk]);
      // Question 3 is slow: any statement holding it with others outruns the timeout.
      if (chunk.includes(3) && chunk.length > 1) throw timeout;
      return chunk.map((q) => [`list of ${q}`]);
    });
    expect(lists).toEqual(questions(5).map((q) => [`list of ${q}`]));
    // The first chunk [0, 1]; then (0 ms measured) the rest [2, 3, 4] times out and goes one by one.
    expect(sizes).toEqual([[0, 1], [2, 3, 4], [2], [3], [4]]);
    // Counted as the timeout over 3 questions: 2,000 / 3,333 ms → 1 question a statement next.
    expect(chunks.size(100)).toBe(1);
    const lone = new StatementChunks(10_000, () => 0, isTimeout);
    await expect(lone.run([3], async () => Promise.reject(timeout))).rejects.toBe(timeout);
  });

  it('a statement that fails fails the whole run (the batch then takes the per-query path)', async () => {
    const chunks = new StatementChunks(10_000, () => 0);
    let calls = 0;
    await expect(
      chunks.run(questions(20), async (chunk) => {
        if (++calls === 2) throw new Error('statement timeout');
        return chunk.map(() => []);
      }),
    ).rejects.toThrow('statement timeout');
    expect(calls).toBe(2);
  });
});

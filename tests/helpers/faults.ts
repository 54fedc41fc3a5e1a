/**
 * Small helpers shared by the fault tests: a port nothing listens on, an expected rejection, and a
 * sleep that records the delays the retry layer asks for (so no test measures a wait on the clock).
 */
import { createServer } from 'node:net';
import { expect } from 'vitest';

/** A loopback port nothing listens on: bind one, then let it go. */
export async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Awaits `p`, expects it to reject with an instance of `type`, and returns that error. */
export async function rejection<E extends Error>(
  p: Promise<unknown>,
  type: abstract new (...args: never[]) => E,
): Promise<E> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(type);
  return e as E;
}

/** A sleep that returns at once and records the delays asked for (the retry layer's `sleep` option). */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void delays.push(ms) };
}

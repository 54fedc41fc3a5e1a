import { afterEach, describe, expect, it } from 'vitest';
import { JudgeParseError, ProviderError } from '../src/errors.js';
import { classifyError, retryAfterMs } from '../src/llm/faults.js';
import { HttpStatusError, postJson } from '../src/llm/http.js';
import { sleep as realSleep, withRetry } from '../src/llm/retry.js';
import { ProviderServer, closeSocket, hang, reply, replyText, status } from './servers/index.js';
import { deadPort, recordingSleep } from './helpers/faults.js';

const ROUTE = 'POST /thing';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function serve(server: ProviderServer): Promise<string> {
  const { url, close } = await server.start();
  closers.push(close);
  return `${url}/thing`;
}

const post = (url: string, timeoutMs = 2000) => postJson(url, { q: 1 }, { provider: 'test', timeoutMs });
const fast = { provider: 'test', minDelayMs: 5 } as const;

describe('classifyError', () => {
  const http = (code: number, headers: Record<string, string> = {}) =>
    new HttpStatusError(code, new Headers(headers), 'http://x', '');

  it('retries 408/409/429/5xx and stops on other 4xx', () => {
    for (const code of [408, 409, 429, 500, 502, 503]) expect(classifyError(http(code)).retryable).toBe(true);
    for (const code of [400, 401, 403, 404, 413, 422])
      expect(classifyError(http(code))).toMatchObject({ status: code, retryable: false });
  });

  it('reads Retry-After as seconds, an HTTP date, or retry-after-ms', () => {
    expect(classifyError(http(429, { 'retry-after': '2' })).retryAfterMs).toBe(2000);
    expect(classifyError(http(429, { 'retry-after-ms': '150', 'retry-after': '9' })).retryAfterMs).toBe(150);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:03 GMT' }), now)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': 'soon' })).toBeUndefined();
  });

  it('treats connection errors and timeouts as retryable, parse errors and aborts as not', () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
    });
    expect(classifyError(refused).retryable).toBe(true);
    expect(classifyError(new Error('socket hang up')).retryable).toBe(true);
    expect(classifyError(new DOMException('timed out', 'TimeoutError')).retryable).toBe(true);
    expect(classifyError(new DOMException('aborted', 'AbortError')).retryable).toBe(false);
    expect(classifyError(new JudgeParseError('bad', 'raw')).retryable).toBe(false);
  });
});

describe('withRetry over HTTP', () => {
  it('honours Retry-After in seconds, then succeeds', async () => {
    const server = new ProviderServer({ [ROUTE]: () => reply({ ok: true }) });
    server.enqueue(ROUTE, status(429, { error: 'slow down' }, { 'retry-after': '1' }));
    const url = await serve(server);
    const { sleep, delays } = recordingSleep();
    await expect(withRetry(() => post(url), { ...fast, sleep })).resolves.toEqual({ ok: true });
    expect(server.count()).toBe(2);
    expect(delays).toEqual([1000]);
  });

  it('caps a long Retry-After at maxRetryAfterMs, and stops on one far beyond it (quota)', async () => {
    const server = new ProviderServer({ [ROUTE]: () => reply({ ok: true }) });
    server.enqueue(ROUTE, status(503, {}, { 'retry-after': '0.9' }));
    const url = await serve(server);
    const { sleep, delays } = recordingSleep();
    await withRetry(() => post(url), { ...fast, maxRetryAfterMs: 100, sleep });
    expect(delays).toEqual([100]);

    server.reset();
    server.enqueue(ROUTE, status(429, {}, { 'retry-after': '3600' }));
    const err = await withRetry(() => post(url), { ...fast, maxRetryAfterMs: 100, sleep }).catch((e: unknown) => e);
    expect(server.count()).toBe(1);
    expect(delays).toEqual([100]);
    expect((err as ProviderError).details).toMatchObject({ fault: 'quota', retryable: false });
  });

  it('backs off exponentially with up to 25 % jitter, and obeys x-should-retry', async () => {
    const server = new ProviderServer({ [ROUTE]: () => reply({ ok: true }) });
    server.enqueue(ROUTE, status(500), status(502), status(503));
    const url = await serve(server);
    const { sleep, delays } = recordingSleep();
    await withRetry(() => post(url), { provider: 'test', minDelayMs: 100, sleep, random: () => 1 });
    // 100 × 2^n, less 25 % (random() = 1 gives the largest cut).
    expect(delays).toEqual([75, 150, 300]);

    server.reset();
    server.enqueue(ROUTE, status(503, {}, { 'x-should-retry': 'false' }));
    const vetoed = await withRetry(() => post(url), { ...fast, sleep }).catch((e: unknown) => e);
    expect(server.count()).toBe(1);
    expect((vetoed as ProviderError).details).toMatchObject({ status: 503, retryable: false, fault: 'server' });

    server.reset();
    server.enqueue(ROUTE, status(400, {}, { 'x-should-retry': 'true' }));
    await expect(withRetry(() => post(url), { ...fast, sleep })).resolves.toEqual({ ok: true });
    expect(server.count()).toBe(2);
  });

  it('gives up after retries + 1 attempts with a retryable ProviderError', async () => {
    const server = new ProviderServer({ [ROUTE]: () => status(500, { error: { message: 'boom' } }) });
    const url = await serve(server);
    const err = await withRetry(() => post(url), { ...fast, retries: 3 }).catch((e: unknown) => e);
    expect(server.count(ROUTE)).toBe(4);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).details).toMatchObject({ provider: 'test', status: 500, retryable: true });
    expect((err as Error).message).toBe('test: gave up after 4 attempts: 500 Internal Server Error (boom)');
  });

  it('fails at once on 404 with the server message, naming the endpoint', async () => {
    const server = new ProviderServer({ [ROUTE]: () => status(404, { error: { message: 'model "x" not found' } }) });
    const url = await serve(server);
    const err = await withRetry(() => post(url), { ...fast, endpoint: url }).catch((e: unknown) => e);
    expect(server.count()).toBe(1);
    expect((err as Error).message).toBe(`test: 404 Not Found (model "x" not found) from ${url}`);
    expect((err as ProviderError).details.retryable).toBe(false);
  });

  it('retries a closed socket and a hung request', async () => {
    const server = new ProviderServer({ [ROUTE]: () => reply({ ok: 1 }) });
    server.enqueue(ROUTE, closeSocket(), hang());
    const url = await serve(server);
    await expect(withRetry(() => post(url, 200), fast)).resolves.toEqual({ ok: 1 });
    expect(server.count()).toBe(3);
  });

  it('retries a refused connection, then fails with a clear ProviderError', async () => {
    const url = `http://127.0.0.1:${await deadPort()}/thing`;
    let attempts = 0;
    const err = await withRetry(
      (n) => {
        attempts = n;
        return post(url);
      },
      { ...fast, retries: 2, endpoint: url },
    ).catch((e: unknown) => e);
    expect(attempts).toBe(3);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as Error).message).toBe(`test: gave up after 3 attempts: connection refused from ${url}`);
  });

  it('retries a proxy’s HTML 502 page and a 200 that is not JSON, which ends as an answer fault', async () => {
    const server = new ProviderServer({ [ROUTE]: () => replyText('<html>oops</html>', { contentType: 'text/html' }) });
    server.enqueue(ROUTE, replyText('<html>Bad Gateway</html>', { status: 502, contentType: 'text/html' }));
    const url = await serve(server);
    const err = await withRetry(() => post(url), { ...fast, retries: 2 }).catch((e: unknown) => e);
    expect(server.count()).toBe(3);
    expect((err as Error).message).toBe(`test: invalid JSON from ${url}: <html>oops</html>`);
    expect((err as ProviderError).details).toMatchObject({ status: 200, retryable: true, fault: 'answer' });
  });

  it('passes errors that are not the provider’s through untouched', async () => {
    const bug = new RangeError('a bug');
    await expect(withRetry(() => Promise.reject(bug), fast)).rejects.toBe(bug);
    const parse = new JudgeParseError('bad', 'raw');
    await expect(withRetry(() => Promise.reject(parse), fast)).rejects.toBe(parse);
  });

  it('stops waiting when the signal aborts', async () => {
    const server = new ProviderServer({ [ROUTE]: () => status(503, {}, { 'retry-after': '10' }) });
    const url = await serve(server);
    const ac = new AbortController();
    // The caller cancels while the retry layer waits out the 10 s: the real sleep must end there.
    const delays: number[] = [];
    const cancelWhileWaiting = (ms: number, signal?: AbortSignal) => {
      delays.push(ms);
      const waiting = realSleep(ms, signal);
      ac.abort(new Error('cancelled'));
      return waiting;
    };
    await expect(withRetry(() => post(url), { ...fast, signal: ac.signal, sleep: cancelWhileWaiting })).rejects.toThrow(
      'cancelled',
    );
    expect(delays).toEqual([10_000]);
    expect(server.count()).toBe(1);
  });

  it('the timer sleep ends at an abort, and never starts on a signal already aborted', async () => {
    const ac = new AbortController();
    const waiting = realSleep(600_000, ac.signal);
    ac.abort(new Error('cancelled'));
    // Without the abort this would wait ten minutes, past the test's timeout.
    await expect(waiting).rejects.toThrow('cancelled');
    await expect(realSleep(600_000, ac.signal)).rejects.toThrow('cancelled');
  });
});

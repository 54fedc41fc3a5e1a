/**
 * One deadline per request (docs/providers.md#every-request-has-a-deadline): `timeout_ms` bounds
 * each attempt, headers and body; an attempt that hits it is retried, so a server that stalls
 * sees retries + 1 requests and the call ends with the deadline named. The SDK's own timer is set
 * past it and never decides: only one timer per attempt is armed with the deadline.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, ProviderError } from '../src/errors.js';
import { AnthropicChatModel } from '../src/llm/anthropic.js';
import { OpenAIChatModel } from '../src/llm/openai.js';
import type { ChatModel } from '../src/llm/types.js';

const DEADLINE = 347; // an odd value no other timer of the process uses
const ask = { system: '', messages: [{ role: 'user' as const, content: 'hello' }] };

/** How the server stalls: no headers at all, or headers and then a body that never ends. */
let stall: 'headers' | 'body' = 'headers';
let requests = 0;
const server: Server = createServer((req, res) => {
  requests++;
  req.resume();
  if (stall === 'body') {
    // Connection: close, so the retry opens a connection of its own (a request queued behind the
    // stalled one on a kept-alive connection would never reach the handler).
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    res.write('{"choices": [');
  }
});
let url = '';

// A server of its own for each test: a connection the client kept alive from an earlier test
// would fail as a connection reset before the attempt reached this one.
beforeEach(async () => {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  vi.restoreAllMocks();
  server.closeAllConnections();
  await new Promise<void>((ok) => server.close(() => ok()));
});

const clients: [string, () => ChatModel, (u: string) => string][] = [
  [
    'openai',
    () =>
      new OpenAIChatModel({ model: 'm', baseURL: `${url}/v1`, timeoutMs: DEADLINE, retries: 1, sleep: async () => {} }),
    (u) => `${u}/v1`,
  ],
  [
    'anthropic',
    () => new AnthropicChatModel({ model: 'm', baseURL: url, timeoutMs: DEADLINE, retries: 1, sleep: async () => {} }),
    (u) => u,
  ],
];

describe('one deadline per request', () => {
  for (const [provider, make, endpoint] of clients) {
    for (const how of ['headers', 'body'] as const) {
      it(`${provider}: a server that stalls its ${how} gets retries + 1 attempts, each ended at the deadline`, async () => {
        stall = how;
        requests = 0;
        const model = make();
        const timers = vi.spyOn(globalThis, 'setTimeout');
        const err = await model.complete(ask).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ProviderError);
        expect((err as Error).message).toBe(
          `${provider}: gave up after 2 attempts: request timed out after ${DEADLINE} ms from ${endpoint(url)}`,
        );
        expect((err as ProviderError).details.fault).toBe('connection');
        expect(requests).toBe(2);
        // One timer with the deadline per attempt: the SDK's own timer is not a second one.
        expect(timers.mock.calls.filter(([, ms]) => ms === DEADLINE)).toHaveLength(2);
      });
    }
  }

  it('a preflight request has the one deadline too', async () => {
    stall = 'headers';
    requests = 0;
    const [, make] = clients[0]!;
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const err = await make().preflight!().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(
      `openai:m at ${url.slice('http://'.length)} cannot be reached: request timed out after ${DEADLINE} ms. Check the URL and that the server is running.`,
    );
    // No retries in a preflight: one request, one timer with the deadline.
    expect(requests).toBe(1);
    expect(timers.mock.calls.filter(([, ms]) => ms === DEADLINE)).toHaveLength(1);
  });
});

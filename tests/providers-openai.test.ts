import { inspect } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { serveDuringSuite } from './servers/suite.js';
import { z } from 'zod';
import { ConfigError, JudgeParseError, ProviderError } from '../src/errors.js';
import { OpenAIChatModel, type OpenAIChatModelOptions } from '../src/llm/openai.js';
import { recordingSleep } from './helpers/faults.js';
import { CHAT, chatCompletion, closeSocket, hang, openAIServer, reply, status } from './servers/index.js';

const KEY = 'sk-test-SECRET-abcdef123456';
const server = openAIServer();
const served = serveDuringSuite(server);

const model = (o: Partial<OpenAIChatModelOptions> = {}) =>
  new OpenAIChatModel({ model: 'test-model', baseURL: `${served.url}/v1`, apiKey: KEY, minDelayMs: 5, ...o });

const Verdict = z.object({ verdict: z.enum(['supported', 'unsupported']), reason: z.string() });
const ask = { system: 'You are terse.', messages: [{ role: 'user' as const, content: 'Hello there' }] };

describe('OpenAIChatModel', () => {
  it('sends system, messages and settings, and maps the answer', async () => {
    const m = model();
    const out = await m.complete({ ...ask, temperature: 0.2, maxTokens: 50 });
    expect(m.id).toBe('openai:test-model');
    expect(m.offline).toBe(false);
    expect(out).toMatchObject({
      text: 'echo: Hello there',
      model: 'test-model',
      usage: { inputTokens: 5, outputTokens: 3 },
    });
    expect(out.latencyMs).toBeGreaterThanOrEqual(0);
    const req = server.last(CHAT);
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body).toEqual({
      model: 'test-model',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hello there' },
      ],
      temperature: 0.2,
      max_tokens: 50,
    });
  });

  it('merges extraBody into the request', async () => {
    await model({ extraBody: { top_k: 5, chat_template_kwargs: { enable_thinking: false } } }).complete(ask);
    expect(server.last(CHAT).body).toMatchObject({ top_k: 5, chat_template_kwargs: { enable_thinking: false } });
  });

  it('asks for strict json_schema output and parses it with zod', async () => {
    server.enqueue(CHAT, reply(chatCompletion('{"verdict":"supported","reason":"cited"}')));
    const out = await model().complete({ ...ask, schema: { name: 'faithfulness verdict', zod: Verdict } });
    expect(out.json).toEqual({ verdict: 'supported', reason: 'cited' });
    expect((server.last(CHAT).body as { response_format: unknown }).response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'faithfulness_verdict',
        strict: true,
        schema: {
          type: 'object',
          properties: {
            verdict: { type: 'string', enum: ['supported', 'unsupported'] },
            reason: { type: 'string' },
          },
          required: ['verdict', 'reason'],
          additionalProperties: false,
        },
      },
    });
  });

  it('wraps a non-object schema as {value} and unwraps the answer', async () => {
    server.enqueue(CHAT, reply(chatCompletion('```json\n{"value":"abstained"}\n```')));
    const Stance = z.enum(['answered', 'hedged', 'abstained']);
    const out = await model().complete({ ...ask, schema: { name: 'stance', zod: Stance } });
    expect(out.json).toBe('abstained');
    const sent = server.last(CHAT).body as { response_format: { json_schema: { schema: { properties: object } } } };
    expect(sent.response_format.json_schema.schema.properties).toEqual({
      value: { type: 'string', enum: ['answered', 'hedged', 'abstained'] },
    });
  });

  it('throws JudgeParseError with the raw text on prose or a schema mismatch', async () => {
    server.enqueue(
      CHAT,
      reply(chatCompletion('I think it is supported.')),
      reply(chatCompletion('{"verdict":"maybe","reason":"x"}')),
    );
    const schema = { name: 'verdict', zod: Verdict };
    const prose = await model()
      .complete({ ...ask, schema })
      .catch((e: unknown) => e);
    expect(prose).toBeInstanceOf(JudgeParseError);
    expect((prose as JudgeParseError).raw).toBe('I think it is supported.');
    const wrong = await model()
      .complete({ ...ask, schema })
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(JudgeParseError);
    expect((wrong as Error).message).toMatch(/^verdict: answer does not match the schema: verdict: /);
    expect(server.count(CHAT)).toBe(2); // no retries for parse failures
  });

  it('waits out a 429 Retry-After, then succeeds', async () => {
    server.enqueue(
      CHAT,
      status(429, { error: { message: 'Rate limit reached', type: 'requests' } }, { 'retry-after': '1' }),
    );
    const { sleep, delays } = recordingSleep();
    const out = await model({ sleep }).complete(ask);
    expect(out.text).toBe('echo: Hello there');
    expect(server.count(CHAT)).toBe(2);
    // The one wait is the server's 1 s, not the 5 ms backoff.
    expect(delays).toEqual([1000]);
  });

  it('caps a Retry-After at maxRetryAfterMs', async () => {
    server.enqueue(CHAT, status(429, {}, { 'retry-after': '0.4' }));
    const { sleep, delays } = recordingSleep();
    await model({ maxRetryAfterMs: 50, sleep }).complete(ask);
    expect(server.count(CHAT)).toBe(2);
    expect(delays).toEqual([50]);
  });

  it('stops at once, as a quota fault, on a Retry-After far beyond the cap', async () => {
    server.enqueue(CHAT, status(429, {}, { 'retry-after': '86400' }));
    const err = await model({ maxRetryAfterMs: 50 })
      .complete(ask)
      .catch((e: unknown) => e);
    expect(server.count(CHAT)).toBe(1);
    expect((err as ProviderError).details).toMatchObject({ fault: 'quota', retryable: false, status: 429 });
    expect((err as Error).message).toBe(
      `openai: the server asks to wait 86400 s (Retry-After), far beyond the 50 ms cap: quota or rate limit exhausted from ${served.url}/v1`,
    );
  });

  it('gives up on repeated 500s after retries + 1 requests', async () => {
    server.enqueue(CHAT, ...Array.from({ length: 3 }, () => status(500, { error: { message: 'overloaded' } })));
    const err = await model({ retries: 2 })
      .complete(ask)
      .catch((e: unknown) => e);
    expect(server.count(CHAT)).toBe(3);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).details).toMatchObject({ provider: 'openai', status: 500, retryable: true });
    expect((err as Error).message).toBe(
      `openai: gave up after 3 attempts: 500 Internal Server Error (overloaded) from ${served.url}/v1`,
    );
  });

  it('ends a hung request at the timeout', async () => {
    server.enqueue(CHAT, hang(), hang());
    const { sleep, delays } = recordingSleep();
    const t0 = performance.now();
    const err = await model({ timeoutMs: 300, retries: 1, sleep })
      .complete(ask)
      .catch((e: unknown) => e);
    // Two attempts, one backoff between them; the message below names the 300 ms deadline that ended each.
    expect(server.count(CHAT)).toBe(2);
    expect(delays).toHaveLength(1);
    // Kept only against a hang (the suite's timeout is minutes): 10 × the 600 ms two deadlines take.
    expect(performance.now() - t0).toBeLessThan(6000);
    expect((err as Error).message).toBe(
      `openai: gave up after 2 attempts: request timed out after 300 ms from ${served.url}/v1`,
    );
    expect((err as ProviderError).details.fault).toBe('connection');
  });

  it('retries a dropped connection', async () => {
    server.enqueue(CHAT, closeSocket());
    await expect(model().complete(ask)).resolves.toMatchObject({ text: 'echo: Hello there' });
    expect(server.count(CHAT)).toBe(2);
  });

  it('fails fast on 401 with a clear message that hides the key', async () => {
    server.enqueue(
      CHAT,
      status(401, { error: { message: `Incorrect API key provided: ${KEY}`, code: 'invalid_api_key' } }),
    );
    const err = await model()
      .complete(ask)
      .catch((e: unknown) => e);
    expect(server.count(CHAT)).toBe(1);
    expect(err).toBeInstanceOf(ProviderError);
    const message = (err as Error).message;
    expect(message).toBe(
      `openai: 401 Unauthorized (Incorrect API key provided: ***) from ${served.url}/v1 — check OPENAI_API_KEY`,
    );
    expect(message).not.toContain('SECRET');
    expect(inspect(err, { depth: 8 })).not.toContain('SECRET');
  });

  it('retries a refused connection, then reports it', async () => {
    const dead = await openAIServer().start();
    await dead.close();
    const deadURL = `${dead.url}/v1`;
    const err = await model({ baseURL: deadURL, retries: 1 })
      .complete(ask)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as Error).message).toBe(`openai: gave up after 2 attempts: connection refused from ${deadURL}`);
  });

  it('needs a key only without a baseURL', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    expect(() => new OpenAIChatModel({ model: 'gpt-4o-mini' })).toThrow(ConfigError);
    expect(() => new OpenAIChatModel({ model: 'gpt-4o-mini' })).toThrow(/OPENAI_API_KEY is not set/);
    expect(() => new OpenAIChatModel({ model: 'llama', baseURL: `${served.url}/v1` })).not.toThrow();
  });

  it('sends a placeholder key to local servers', async () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    await new OpenAIChatModel({ model: 'llama', baseURL: `${served.url}/v1` }).complete(ask);
    expect(server.last(CHAT).headers.authorization).toBe('Bearer not-needed');
  });
});

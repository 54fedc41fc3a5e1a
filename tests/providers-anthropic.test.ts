import { inspect } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { serveDuringSuite } from './servers/suite.js';
import { z } from 'zod';
import { ConfigError, JudgeParseError, ProviderError } from '../src/errors.js';
import { recordingSleep } from './helpers/faults.js';
import { AnthropicChatModel, type AnthropicChatModelOptions } from '../src/llm/anthropic.js';
import {
  MESSAGES,
  anthropicError,
  anthropicMessage,
  anthropicServer,
  hang,
  reply,
  status,
  textBlock,
  toolUseBlock,
} from './servers/index.js';

const KEY = 'sk-ant-test-SECRET-abcdef123456';
let toolInput: unknown = {};
const server = anthropicServer({ toolInput: () => toolInput });
const served = serveDuringSuite(server);

const model = (o: Partial<AnthropicChatModelOptions> = {}) =>
  new AnthropicChatModel({ model: 'claude-test', baseURL: served.url, apiKey: KEY, minDelayMs: 5, ...o });

const Claims = z.object({
  claims: z.array(z.object({ text: z.string(), label: z.enum(['supported', 'unsupported', 'contradicted']) })),
});
const ask = { system: 'Judge strictly.', messages: [{ role: 'user' as const, content: 'Is it supported?' }] };

describe('AnthropicChatModel', () => {
  it('sends system separately, a default max_tokens, and maps text and usage', async () => {
    const m = model();
    const out = await m.complete({ ...ask, temperature: 0 });
    expect(m.id).toBe('anthropic:claude-test');
    expect(out).toMatchObject({
      text: 'echo: Is it supported?',
      model: 'claude-test',
      usage: { inputTokens: 12, outputTokens: 7 },
    });
    const req = server.last(MESSAGES);
    expect(req.body).toEqual({
      model: 'claude-test',
      max_tokens: 1024,
      system: 'Judge strictly.',
      temperature: 0,
      messages: [{ role: 'user', content: 'Is it supported?' }],
    });
    const auth = `${req.headers['x-api-key'] ?? ''} ${req.headers.authorization ?? ''}`;
    expect(auth).toContain(KEY);
  });

  it('forces one tool whose input_schema is the answer schema, and parses its input', async () => {
    toolInput = { claims: [{ text: 'Ollama runs locally', label: 'supported' }] };
    const out = await model().complete({ ...ask, maxTokens: 300, schema: { name: 'claims', zod: Claims } });
    expect(out.json).toEqual(toolInput);
    expect(JSON.parse(out.text)).toEqual(toolInput);
    const body = server.last(MESSAGES).body as Record<string, unknown>;
    expect(body.max_tokens).toBe(300);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'claims' });
    expect(body.tools).toEqual([
      {
        name: 'claims',
        description: 'Give the answer as the input of this tool (claims).',
        input_schema: {
          type: 'object',
          properties: {
            claims: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  text: { type: 'string' },
                  label: { type: 'string', enum: ['supported', 'unsupported', 'contradicted'] },
                },
                required: ['text', 'label'],
                additionalProperties: false,
              },
            },
          },
          required: ['claims'],
          additionalProperties: false,
        },
      },
    ]);
  });

  it('throws JudgeParseError when the tool input breaks the schema, or no tool is called', async () => {
    toolInput = { claims: [{ text: 'x', label: 'probably' }] };
    const bad = await model()
      .complete({ ...ask, schema: { name: 'claims', zod: Claims } })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(JudgeParseError);
    expect((bad as JudgeParseError).raw).toBe(JSON.stringify(toolInput));

    server.enqueue(MESSAGES, reply(anthropicMessage([textBlock('All claims look fine to me.')])));
    const prose = await model()
      .complete({ ...ask, schema: { name: 'claims', zod: Claims } })
      .catch((e: unknown) => e);
    expect(prose).toBeInstanceOf(JudgeParseError);
    expect((prose as JudgeParseError).raw).toBe('All claims look fine to me.');
  });

  it('takes the tool_use block among other blocks', async () => {
    server.enqueue(
      MESSAGES,
      reply(
        anthropicMessage([textBlock('Here it is.'), toolUseBlock('claims', { claims: [] })], {
          inputTokens: 40,
          outputTokens: 9,
        }),
      ),
    );
    const out = await model().complete({ ...ask, schema: { name: 'claims', zod: Claims } });
    expect(out.json).toEqual({ claims: [] });
    expect(out.usage).toEqual({ inputTokens: 40, outputTokens: 9 });
  });

  it('waits out a 529/429 with retry-after, then succeeds', async () => {
    server.enqueue(MESSAGES, status(429, anthropicError('rate_limit_error', 'slow down'), { 'retry-after': '1' }));
    const { sleep, delays } = recordingSleep();
    await model({ sleep }).complete(ask);
    expect(server.count(MESSAGES)).toBe(2);
    // The one wait is the server's 1 s, not the 5 ms backoff.
    expect(delays).toEqual([1000]);
  });

  it('gives up on repeated overloads after retries + 1 requests', async () => {
    server.enqueue(
      MESSAGES,
      ...Array.from({ length: 4 }, () => status(529, anthropicError('overloaded_error', 'Overloaded'))),
    );
    const err = await model({ retries: 3 })
      .complete(ask)
      .catch((e: unknown) => e);
    expect(server.count(MESSAGES)).toBe(4);
    expect((err as ProviderError).details).toMatchObject({ provider: 'anthropic', status: 529, retryable: true });
    expect((err as Error).message).toMatch(/^anthropic: gave up after 4 attempts: 529 .*Overloaded/);
  });

  it('ends a hung request at the timeout', async () => {
    server.enqueue(MESSAGES, hang());
    const t0 = performance.now();
    const err = await model({ timeoutMs: 300, retries: 0 })
      .complete(ask)
      .catch((e: unknown) => e);
    expect(server.count(MESSAGES)).toBe(1);
    // Kept only against a hang (the suite's timeout is minutes): 10 × the 300 ms deadline.
    expect(performance.now() - t0).toBeLessThan(3000);
    expect((err as Error).message).toBe(
      `anthropic: gave up after 1 attempt: request timed out after 300 ms from ${served.url}`,
    );
    expect((err as ProviderError).details.fault).toBe('connection');
  });

  it('fails fast on 401 without showing the key', async () => {
    server.enqueue(MESSAGES, status(401, anthropicError('authentication_error', `invalid x-api-key ${KEY}`)));
    const err = await model()
      .complete(ask)
      .catch((e: unknown) => e);
    expect(server.count(MESSAGES)).toBe(1);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as Error).message).toBe(
      `anthropic: 401 Unauthorized (invalid x-api-key ***) from ${served.url} — check ANTHROPIC_API_KEY`,
    );
    expect(inspect(err, { depth: 8 })).not.toContain('SECRET');
  });

  it('needs a key only without a baseURL', () => {
    vi.stubEnv('ANTHROPIC_API_KEY', '');
    expect(() => new AnthropicChatModel({ model: 'claude-x' })).toThrow(ConfigError);
    expect(() => new AnthropicChatModel({ model: 'claude-x', baseURL: served.url })).not.toThrow();
  });
});

/**
 * Every request bounded in time, headers and body (issue 12.3); the fault each failure is
 * classified as, which the runner uses to stop a run once or trip its breaker (12.11); base URLs
 * with a query string or credentials (12.9).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, ProviderError } from '../src/errors.js';
import { AnthropicChatModel } from '../src/llm/anthropic.js';
import { OpenAIChatModel } from '../src/llm/openai.js';
import type { Sleep } from '../src/llm/retry.js';
import { TeiReranker } from '../src/rerank/http-rerankers.js';
import { OpenAIEmbedder } from '../src/embedding/openai-embedder.js';
import { MESSAGES, anthropicError, anthropicMessage, anthropicServer, textBlock } from './servers/anthropic-server.js';
import {
  CHAT,
  EMBEDDINGS,
  chatCompletion,
  embeddingsResponse,
  hashVector,
  openAIServer,
} from './servers/openai-server.js';
import { hang, status, trickle } from './servers/provider-server.js';
import { TEI_RERANK, rerankServer } from './servers/rerank-server.js';
import { serveDuringSuite } from './servers/suite.js';
import { deadPort, recordingSleep, rejection } from './helpers/faults.js';

const chat = openAIServer({ dimensions: 4 });
const chatServed = serveDuringSuite(chat);
const messages = anthropicServer();
const messagesServed = serveDuringSuite(messages);
const tei = rerankServer();
const teiServed = serveDuringSuite(tei);

const KEY = 'sk-test-faults-0123456789';
const ask = { system: 'Be brief.', messages: [{ role: 'user' as const, content: 'Hello' }] };
const openai = (o: { timeoutMs?: number; retries?: number; baseURL?: string; sleep?: Sleep } = {}) =>
  new OpenAIChatModel({ model: 'test-model', baseURL: `${chatServed.url}/v1`, apiKey: KEY, minDelayMs: 1, ...o });
const anthropic = (o: { timeoutMs?: number; retries?: number } = {}) =>
  new AnthropicChatModel({ model: 'claude-test', baseURL: messagesServed.url, apiKey: KEY, minDelayMs: 1, ...o });

const failure = (p: Promise<unknown>) => rejection(p, ProviderError);

describe('a server that sends headers, then trickles the body (12.3)', () => {
  // Each body takes 100 ms a byte (the rerank answer, shorter, 1 s a byte): tens of seconds in all;
  // the deadline is 300 ms a request. The time bounds below stay because a body read that ignored
  // the deadline would still end, with the same error, only after the whole drip: each bound is
  // 10 × what the deadlines take and well below the drip, so it tells the two apart.
  const slowChat = trickle(chatCompletion('too slow'), { everyMs: 100 });

  it('is cut at the deadline by the OpenAI SDK client, as a connection fault', async () => {
    chat.enqueue(CHAT, slowChat, slowChat);
    const { sleep, delays } = recordingSleep();
    const t0 = performance.now();
    const err = await failure(openai({ timeoutMs: 300, retries: 1, sleep }).complete(ask));
    expect(performance.now() - t0).toBeLessThan(6000); // 10 × two 300 ms deadlines
    expect(chat.count(CHAT)).toBe(2);
    expect(delays).toHaveLength(1);
    expect(err.details).toMatchObject({ fault: 'connection', retryable: true });
    expect(err.message).toBe(
      `openai: gave up after 2 attempts: request timed out after 300 ms from ${chatServed.url}/v1`,
    );
  });

  it('is cut at the deadline by the Anthropic SDK client', async () => {
    const slow = trickle(anthropicMessage([textBlock('too slow')]), { everyMs: 100 });
    messages.enqueue(MESSAGES, slow);
    const t0 = performance.now();
    const err = await failure(anthropic({ timeoutMs: 300, retries: 0 }).complete(ask));
    expect(performance.now() - t0).toBeLessThan(3000); // 10 × the 300 ms deadline
    expect(messages.count(MESSAGES)).toBe(1);
    expect(err.details.fault).toBe('connection');
  });

  it('is cut at the deadline by the rerankers’ and the embedder’s own client', async () => {
    tei.enqueue(TEI_RERANK, trickle([{ index: 0, score: 1 }], { everyMs: 1000 }));
    chat.enqueue(EMBEDDINGS, trickle(embeddingsResponse([hashVector('a', 4)]), { everyMs: 100 }));
    let t0 = performance.now();
    const rerankErr = await failure(
      new TeiReranker({ url: teiServed.url, timeoutMs: 300, retries: 0 }).score('q', ['a']),
    );
    expect(performance.now() - t0).toBeLessThan(3000); // 10 × the 300 ms deadline
    t0 = performance.now();
    const embedErr = await failure(
      new OpenAIEmbedder({
        model: 'test-embedder',
        dimensions: 4,
        baseURL: `${chatServed.url}/v1`,
        timeoutMs: 300,
        retries: 0,
      }).embed(['a']),
    );
    expect(performance.now() - t0).toBeLessThan(3000); // 10 × the 300 ms deadline
    expect([tei.count(TEI_RERANK), chat.count(EMBEDDINGS)]).toEqual([1, 1]);
    expect(rerankErr.details.fault).toBe('connection');
    expect(embedErr.details.fault).toBe('connection');
    expect(embedErr.message).toBe(
      `embeddings: gave up after 1 attempt: request timed out after 300 ms from ${chatServed.url}/v1/embeddings`,
    );
  });

  it('counts the time lost in the latency of the answer that follows', async () => {
    chat.enqueue(CHAT, slowChat);
    const out = await openai({ timeoutMs: 300, retries: 1 }).complete(ask);
    expect(chat.count(CHAT)).toBe(2);
    expect(out.latencyMs).toBeGreaterThanOrEqual(300);
  });

  it('a hang costs at most timeout × (retries + 1), plus the backoff', async () => {
    chat.enqueue(CHAT, hang(), hang(), hang());
    const { sleep, delays } = recordingSleep();
    const t0 = performance.now();
    const err = await failure(openai({ timeoutMs: 200, retries: 2, sleep }).complete(ask));
    // Three attempts, each ended by its deadline, and two backoffs between them (recorded, not waited).
    expect(chat.count(CHAT)).toBe(3);
    expect(delays).toHaveLength(2);
    // Kept only against a hang (a hung socket never ends by itself): 10 × three 200 ms deadlines.
    expect(performance.now() - t0).toBeLessThan(6000);
    expect(err.details.fault).toBe('connection');
  });
});

describe('faults for run-wide stops (12.11)', () => {
  it('401 and 403 → auth, not retried', async () => {
    chat.enqueue(CHAT, status(401, { error: { message: 'Incorrect API key', code: 'invalid_api_key' } }));
    expect((await failure(openai().complete(ask))).details).toMatchObject({
      fault: 'auth',
      status: 401,
      retryable: false,
    });
    messages.enqueue(MESSAGES, status(403, anthropicError('permission_error', 'not allowed')));
    expect((await failure(anthropic().complete(ask))).details).toMatchObject({ fault: 'auth', status: 403 });
    expect(chat.count(CHAT) + messages.count(MESSAGES)).toBe(2);
  });

  it('an exhausted quota → quota, not retried: OpenAI insufficient_quota, Anthropic credit balance', async () => {
    chat.enqueue(
      CHAT,
      status(429, {
        error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' },
      }),
    );
    const openaiErr = await failure(openai().complete(ask));
    expect(openaiErr.details).toMatchObject({ fault: 'quota', status: 429, retryable: false });
    expect(chat.count(CHAT)).toBe(1);
    messages.enqueue(
      MESSAGES,
      status(
        400,
        anthropicError('invalid_request_error', 'Your credit balance is too low to access the Anthropic API.'),
      ),
    );
    expect((await failure(anthropic().complete(ask))).details).toMatchObject({ fault: 'quota', status: 400 });
    messages.enqueue(MESSAGES, status(402, anthropicError('billing_error', 'payment required')));
    expect((await failure(anthropic().complete(ask))).details.fault).toBe('quota');
  });

  it('an unknown model → model', async () => {
    chat.enqueue(
      CHAT,
      status(404, { error: { message: 'The model `gpt-9` does not exist', code: 'model_not_found' } }),
    );
    expect((await failure(openai().complete(ask))).details).toMatchObject({
      fault: 'model',
      status: 404,
      retryable: false,
    });
    messages.enqueue(MESSAGES, status(404, anthropicError('not_found_error', 'model: claude-9')));
    expect((await failure(anthropic().complete(ask))).details.fault).toBe('model');
  });

  it('5xx after retries → server; a refused connection → connection; another 4xx → client', async () => {
    chat.enqueue(CHAT, status(500), status(502), status(503));
    expect((await failure(openai({ retries: 2 }).complete(ask))).details).toMatchObject({
      fault: 'server',
      status: 503,
      retryable: true,
    });
    const refused = await failure(
      openai({ baseURL: `http://127.0.0.1:${await deadPort()}/v1`, retries: 1 }).complete(ask),
    );
    expect(refused.details).toMatchObject({ fault: 'connection', retryable: true });
    chat.enqueue(CHAT, status(422, { error: { message: 'bad temperature' } }));
    expect((await failure(openai().complete(ask))).details).toMatchObject({ fault: 'client', status: 422 });
  });

  it('a name that does not resolve → connection', async () => {
    // ENOTFOUND is final; EAI_AGAIN (no resolver reachable, as in a sandbox) is worth a retry.
    const err = await failure(
      new TeiReranker({ url: 'http://no-such-host.invalid:8080', retries: 0, timeoutMs: 5000 }).score('q', ['a']),
    );
    expect(err.details.fault).toBe('connection');
    expect(err.message).toMatch(
      /^tei: (gave up after 1 attempt: )?host name not found \((ENOTFOUND|EAI_AGAIN)\) from http:\/\/no-such-host\.invalid:8080\/rerank$/,
    );
  });
});

describe('base URLs with a query string or credentials (12.9)', () => {
  it('keeps the query string after the path, for the SDK clients and the project’s own', async () => {
    await openai({ baseURL: `${chatServed.url}/v1?api-version=2024-06-01` }).complete(ask);
    expect(chat.last(CHAT).query.get('api-version')).toBe('2024-06-01');
    await new AnthropicChatModel({
      model: 'claude-test',
      baseURL: `${messagesServed.url}?tenant=t1`,
      apiKey: KEY,
    }).complete(ask);
    expect(messages.last(MESSAGES).query.get('tenant')).toBe('t1');
    await new OpenAIEmbedder({
      model: 'test-embedder',
      dimensions: 4,
      baseURL: `${chatServed.url}/v1?api-version=x`,
    }).embed(['a']);
    expect(chat.last(EMBEDDINGS).query.get('api-version')).toBe('x');
    await new TeiReranker({ url: `${teiServed.url}/?route=blue` }).score('q', ['a']);
    expect(tei.last(TEI_RERANK).query.get('route')).toBe('blue');
  });

  it('refuses user:pass@ in a chat base URL at once, naming no password (exit 2), and uses it as Basic auth for the embedder', async () => {
    const withCreds = chatServed.url.replace('http://', 'http://alice:pw-in-url-123@');
    const make = () => new OpenAIChatModel({ model: 'test-model', baseURL: `${withCreds}/v1`, apiKey: KEY });
    expect(make).toThrow(ConfigError);
    expect(make).toThrow(
      `openai:test-model: the base URL ${chatServed.url.replace('http://', 'http://alice:***@')}/v1 carries credentials`,
    );
    expect(() => new AnthropicChatModel({ model: 'claude-test', baseURL: withCreds, apiKey: KEY })).toThrow(
      ConfigError,
    );
    expect(chat.count()).toBe(0);
    await new OpenAIEmbedder({ model: 'test-embedder', dimensions: 4, baseURL: `${withCreds}/v1` }).embed(['a']);
    expect(chat.last(EMBEDDINGS).headers.authorization).toBe(
      `Basic ${Buffer.from('alice:pw-in-url-123').toString('base64')}`,
    );
  });
});

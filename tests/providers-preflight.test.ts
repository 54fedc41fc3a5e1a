/**
 * Preflight (issue 11.2): one cheap request per remote component before the first case, no
 * retries, a short deadline; what no case could get past ends as a ConfigError (exit 2) naming
 * the component and host:port, never the key.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/errors.js';
import { AnthropicChatModel } from '../src/llm/anthropic.js';
import { ResponseCache, cachedModel } from '../src/llm/cache.js';
import { OpenAIChatModel } from '../src/llm/openai.js';
import { CohereReranker, JinaReranker, TeiReranker } from '../src/rerank/http-rerankers.js';
import { OpenAIEmbedder } from '../src/embedding/openai-embedder.js';
import { MESSAGES, MODEL_INFO, anthropicError, anthropicServer } from './servers/anthropic-server.js';
import { CHAT, EMBEDDINGS, MODELS, openAIServer } from './servers/openai-server.js';
import { hang, status } from './servers/provider-server.js';
import { COHERE_RERANK, TEI_RERANK, VLLM_RERANK, rerankServer } from './servers/rerank-server.js';
import { serveDuringSuite } from './servers/suite.js';
import { deadPort, rejection } from './helpers/faults.js';

const KEY = 'sk-test-preflight-SECRET-0123456789';
const chat = openAIServer({ models: ['test-model', 'test-embedder'], dimensions: 8 });
const chatServed = serveDuringSuite(chat);
const bare = openAIServer({ models: null });
const bareServed = serveDuringSuite(bare);
const messages = anthropicServer({ models: ['claude-test'] });
const messagesServed = serveDuringSuite(messages);
const rerank = rerankServer();
const rerankServed = serveDuringSuite(rerank);

const host = (url: string) => new URL(url).host;

async function configError(p: Promise<unknown>): Promise<ConfigError> {
  const e = await rejection(p, ConfigError);
  expect(e.exitCode).toBe(2);
  expect(e.message).not.toContain(KEY);
  return e;
}

describe('OpenAI-compatible chat model preflight', () => {
  const model = (o: { model?: string; baseURL?: string; timeoutMs?: number } = {}) =>
    new OpenAIChatModel({ model: 'test-model', baseURL: `${chatServed.url}/v1`, apiKey: KEY, ...o });

  it('passes with one GET /models that lists the model (and through the cache wrapper)', async () => {
    await model().preflight();
    await cachedModel(model(), new ResponseCache('/nonexistent-cache-dir')).preflight!();
    expect(chat.count(MODELS)).toBe(2);
    expect(chat.count(CHAT)).toBe(0);
    expect(chat.last(MODELS).headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('a closed port: ConfigError within seconds, one attempt, naming the component and host:port', async () => {
    const port = await deadPort();
    const t0 = performance.now();
    const err = await configError(model({ baseURL: `http://127.0.0.1:${port}/v1` }).preflight());
    // Kept only against a hang (e.g. a preflight that waited out a default 60 s timeout): a refused
    // connection fails in milliseconds, so 10 s is far beyond anything a loaded machine adds.
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(err.message).toBe(
      `openai:test-model at 127.0.0.1:${port} cannot be reached: connection refused. Check the URL and that the server is running.`,
    );
  });

  it('a server that accepts but never answers: ConfigError at the preflight deadline (the timeout when shorter)', async () => {
    chat.enqueue(MODELS, hang());
    const err = await configError(model({ timeoutMs: 300 }).preflight());
    expect(err.message).toBe(
      `openai:test-model at ${host(chatServed.url)} cannot be reached: request timed out after 300 ms. Check the URL and that the server is running.`,
    );
    expect(chat.count(MODELS)).toBe(1);
  });

  it('401: ConfigError naming the key variable, not the key', async () => {
    chat.enqueue(MODELS, status(401, { error: { message: `Incorrect API key provided: ${KEY}` } }));
    const err = await configError(model().preflight());
    expect(err.message).toBe(
      `openai:test-model at ${host(chatServed.url)} refused the credentials: 401 Unauthorized (Incorrect API key provided: ***). Check OPENAI_API_KEY or the api_key setting.`,
    );
  });

  it('an unknown model: not listed, and the 1-token check answers 404', async () => {
    const err = await configError(model({ model: 'gpt-9' }).preflight());
    expect(err.message).toMatch(
      new RegExp(
        `^openai:gpt-9 at ${host(chatServed.url)} does not serve the configured model: 404 Not Found \\(The model \`gpt-9\` does not exist\\)`,
      ),
    );
    expect(chat.count(MODELS)).toBe(1);
    expect(chat.count(CHAT)).toBe(1);
  });

  it('without a /models route, falls back to a 1-token completion', async () => {
    await new OpenAIChatModel({ model: 'anything', baseURL: `${bareServed.url}/v1`, apiKey: KEY }).preflight();
    expect(bare.count(MODELS)).toBe(1);
    expect(bare.count(CHAT)).toBe(1);
    expect(bare.last(CHAT).body).toMatchObject({ model: 'anything', max_tokens: 1 });
  });
});

describe('Anthropic chat model preflight', () => {
  const model = (m = 'claude-test', baseURL = messagesServed.url) =>
    new AnthropicChatModel({ model: m, baseURL, apiKey: KEY });

  it('passes with one GET /v1/models/{model}', async () => {
    await model().preflight();
    expect(messages.count(`${MODEL_INFO}claude-test`)).toBe(1);
    expect(messages.count(MESSAGES)).toBe(0);
  });

  it('an unknown model: 404 on the model, then 404 on the 1-token message → ConfigError', async () => {
    const err = await configError(model('claude-9').preflight());
    expect(err.message).toBe(
      `anthropic:claude-9 at ${host(messagesServed.url)} does not serve the configured model: 404 Not Found (model: claude-9).`,
    );
    expect(messages.count(MESSAGES)).toBe(1);
  });

  it('401 and a closed port', async () => {
    messages.enqueue(
      `${MODEL_INFO}claude-test`,
      status(401, anthropicError('authentication_error', 'invalid x-api-key')),
    );
    expect((await configError(model().preflight())).message).toContain(
      'refused the credentials: 401 Unauthorized (invalid x-api-key). Check ANTHROPIC_API_KEY',
    );
    const port = await deadPort();
    expect((await configError(model('claude-test', `http://127.0.0.1:${port}`).preflight())).message).toBe(
      `anthropic:claude-test at 127.0.0.1:${port} cannot be reached: connection refused. Check the URL and that the server is running.`,
    );
  });
});

describe('reranker preflight', () => {
  it('one tiny rerank call for TEI, vLLM and Cohere', async () => {
    await new TeiReranker({ url: rerankServed.url }).preflight();
    await new JinaReranker({ url: rerankServed.url, model: 'bge' }).preflight();
    await new CohereReranker({ url: rerankServed.url, model: 'rerank-v3' }).preflight();
    expect([rerank.count(TEI_RERANK), rerank.count(VLLM_RERANK), rerank.count(COHERE_RERANK)]).toEqual([1, 1, 1]);
  });

  it('a closed port, a 403 and an unknown model end as ConfigErrors, with no retry', async () => {
    const port = await deadPort();
    expect(
      (await configError(new TeiReranker({ url: `http://127.0.0.1:${port}`, retries: 4 }).preflight())).message,
    ).toBe(
      `tei reranker at 127.0.0.1:${port} cannot be reached: connection refused. Check the URL and that the server is running.`,
    );
    rerank.enqueue(TEI_RERANK, status(403, { error: 'forbidden' }));
    expect((await configError(new TeiReranker({ url: rerankServed.url, apiKey: KEY }).preflight())).message).toContain(
      'refused the credentials: 403 Forbidden (forbidden). Check RERANKER_API_KEY',
    );
    rerank.enqueue(VLLM_RERANK, status(404, { message: 'The model `nope` does not exist.', type: 'NotFoundError' }));
    expect(
      (await configError(new JinaReranker({ url: rerankServed.url, model: 'nope' }).preflight())).message,
    ).toContain('does not serve the configured model');
    expect(rerank.count()).toBe(2);
  });
});

describe('an inconclusive preflight', () => {
  it('a 5xx or another 4xx lets the run go on (its retries and case errors deal with it), after one request', async () => {
    rerank.enqueue(TEI_RERANK, status(503, { error: 'warming up' }));
    await new TeiReranker({ url: rerankServed.url, retries: 4 }).preflight();
    expect(rerank.count(TEI_RERANK)).toBe(1);
    // No /models route, and the 1-token completion meets a 500: nothing says the model is wrong.
    bare.enqueue(CHAT, status(500, { error: { message: 'boom' } }));
    await new OpenAIChatModel({ model: 'test-model', baseURL: `${bareServed.url}/v1`, apiKey: KEY }).preflight();
    expect([bare.count(MODELS), bare.count(CHAT)]).toEqual([1, 1]);
  });
});

describe('embedder preflight', () => {
  const embedder = (dimensions: number, baseURL = `${chatServed.url}/v1`) =>
    new OpenAIEmbedder({ model: 'test-embedder', dimensions, baseURL, apiKey: KEY });

  it('one embedding of the configured dimension passes', async () => {
    await embedder(8).preflight();
    expect(chat.count(EMBEDDINGS)).toBe(1);
  });

  it('a wrong dimension is a ConfigError naming both lengths', async () => {
    const err = await configError(embedder(384).preflight());
    expect(err.message).toBe(
      `embedder test-embedder at ${host(chatServed.url)} returns 8-dimensional vectors for test-embedder but dimensions is 384 (set embedder.dimensions to match the model and the stored embeddings)`,
    );
  });

  it('a closed port and a 401', async () => {
    const port = await deadPort();
    expect((await configError(embedder(8, `http://127.0.0.1:${port}/v1`).preflight())).message).toMatch(
      /^embedder test-embedder at 127\.0\.0\.1:\d+ cannot be reached: connection refused/,
    );
    chat.enqueue(EMBEDDINGS, status(401, { error: { message: 'bad key' } }));
    expect((await configError(embedder(8).preflight())).message).toContain(
      'refused the credentials: 401 Unauthorized (bad key). Check OPENAI_API_KEY',
    );
  });
});

import { inspect } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { serveDuringSuite } from './servers/suite.js';
import { ConfigError, ProviderError } from '../src/errors.js';
import { OpenAIEmbedder, type OpenAIEmbedderOptions } from '../src/embedding/openai-embedder.js';
import { EMBEDDINGS, embeddingsResponse, hashVector, openAIServer, reply, status } from './servers/index.js';

const KEY = 'sk-test-SECRET-abcdef123456';
const server = openAIServer({ dimensions: 4, reverseEmbeddings: true });
const served = serveDuringSuite(server);

const embedder = (o: Partial<OpenAIEmbedderOptions> = {}) =>
  new OpenAIEmbedder({ model: 'bge-m3', dimensions: 4, baseURL: `${served.url}/v1`, apiKey: KEY, minDelayMs: 5, ...o });

const texts = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];

describe('OpenAIEmbedder', () => {
  it('posts {model, input} and orders vectors by index', async () => {
    const e = embedder();
    expect(e.id).toBe(`openai:bge-m3@${served.url}/v1`);
    expect(e.dimensions).toBe(4);
    expect(await e.embed(texts)).toEqual(texts.map((t) => hashVector(t, 4)));
    const req = server.last(EMBEDDINGS);
    expect(req.body).toEqual({ model: 'bge-m3', input: texts });
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('batches inputs and keeps the overall order', async () => {
    expect(await embedder({ batchSize: 2 }).embed(texts)).toEqual(texts.map((t) => hashVector(t, 4)));
    expect(server.requestsTo(EMBEDDINGS).map((r) => (r.body as { input: string[] }).input)).toEqual([
      ['alpha', 'beta'],
      ['gamma', 'delta'],
      ['epsilon'],
    ]);
  });

  it('sends dimensions only when asked', async () => {
    await embedder({ requestDimensions: true }).embed(['x']);
    expect(server.last(EMBEDDINGS).body).toEqual({ model: 'bge-m3', input: ['x'], dimensions: 4 });
  });

  it('rejects vectors of the wrong length with a clear message', async () => {
    const err = await embedder({ dimensions: 768 })
      .embed(['x'])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as Error).message).toBe(
      `embeddings: bge-m3 returned 4-dimensional vectors but 768 are configured (set dimensions to match the model and the stored embeddings) from ${served.url}/v1/embeddings`,
    );
    expect(server.count(EMBEDDINGS)).toBe(1);
  });

  it('rejects a response that misses an input', async () => {
    const short = reply(embeddingsResponse([hashVector('a', 4)]));
    server.enqueue(EMBEDDINGS, short, short, short, short, short);
    await expect(embedder().embed(['a', 'b'])).rejects.toThrow(
      'embeddings: malformed answer (no embedding for inputs 1)',
    );
    expect(server.count(EMBEDDINGS)).toBe(5);
  });

  it('retries 429 and 502, then succeeds', async () => {
    server.enqueue(EMBEDDINGS, status(429, {}, { 'retry-after-ms': '30' }), status(502));
    expect(await embedder().embed(['a'])).toEqual([hashVector('a', 4)]);
    expect(server.count(EMBEDDINGS)).toBe(3);
  });

  it('fails fast on 403 without showing the key', async () => {
    server.enqueue(EMBEDDINGS, status(403, { error: { message: `key ${KEY} lacks scope` } }));
    const err = await embedder()
      .embed(['a'])
      .catch((e: unknown) => e);
    expect(server.count(EMBEDDINGS)).toBe(1);
    expect((err as Error).message).toBe(
      `embeddings: 403 Forbidden (key *** lacks scope) from ${served.url}/v1/embeddings — check OPENAI_API_KEY`,
    );
    expect(inspect(err, { depth: 8 })).not.toContain('SECRET');
  });

  it('needs a key only for OpenAI itself', async () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    expect(() => new OpenAIEmbedder({ model: 'text-embedding-3-small', dimensions: 1536 })).toThrow(ConfigError);
    await new OpenAIEmbedder({ model: 'nomic', dimensions: 4, baseURL: `${served.url}/v1` }).embed(['a']);
    expect(server.last(EMBEDDINGS).headers.authorization).toBeUndefined();
  });
});

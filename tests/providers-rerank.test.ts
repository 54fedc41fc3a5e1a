import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { serveDuringSuite } from './servers/suite.js';
import { ProviderError } from '../src/errors.js';
import { CohereReranker, JinaReranker, TeiReranker } from '../src/rerank/http-rerankers.js';
import { logit } from '../src/rerank/types.js';
import {
  COHERE_RERANK,
  TEI_RERANK,
  VLLM_RERANK,
  hang,
  lexicalScore,
  rerankServer,
  reply,
  status,
} from './servers/index.js';

const KEY = 'sk-test-SECRET-abcdef123456';
const server = rerankServer({ maxBatch: 4 });
const served = serveDuringSuite(server);

const query = 'reset admin password';
const passages = [
  'How to bake bread',
  'Reset the admin password from the console',
  'The password policy',
  'Admin panel overview',
  'Reset admin password steps',
  'Weather today',
];
const expected = passages.map((p) => lexicalScore(query, p));

describe('TeiReranker', () => {
  it('sends raw_scores and truncate and maps scores back to input order', async () => {
    const r = new TeiReranker({ url: served.url, maxBatch: 4 });
    expect(r.id).toBe(`tei:${served.url}`);
    expect(r.offline).toBe(false);
    expect(await r.score(query, passages)).toEqual(expected);
    expect(server.requestsTo(TEI_RERANK).map((q) => q.body)).toEqual([
      { query, texts: passages.slice(0, 4), raw_scores: true, truncate: true },
      { query, texts: passages.slice(4), raw_scores: true, truncate: true },
    ]);
  });

  it('batches to maxBatch', async () => {
    const r = new TeiReranker({ url: served.url, maxBatch: 2 });
    expect(await r.score(query, passages)).toEqual(expected);
    expect(server.requestsTo(TEI_RERANK).map((q) => (q.body as { texts: string[] }).texts.length)).toEqual([2, 2, 2]);
  });

  it('halves the batch on a 413 and keeps the smaller size', async () => {
    const r = new TeiReranker({ url: served.url, maxBatch: 6, minDelayMs: 5 }); // the server takes 4 at most
    expect(await r.score(query, passages)).toEqual(expected);
    expect(server.requestsTo(TEI_RERANK).map((q) => (q.body as { texts: string[] }).texts.length)).toEqual([6, 3, 3]);
    server.reset();
    await r.score(query, passages);
    expect(server.count(TEI_RERANK)).toBe(2);
  });

  it('returns [] for no passages without a request', async () => {
    expect(await new TeiReranker({ url: served.url }).score(query, [])).toEqual([]);
    expect(server.count()).toBe(0);
  });

  it('retries a 503, and rejects a response missing a passage', async () => {
    server.enqueue(TEI_RERANK, status(503, { error: 'Model is overloaded' }, { 'retry-after-ms': '20' }));
    expect(await new TeiReranker({ url: served.url, minDelayMs: 5 }).score(query, passages.slice(0, 2))).toEqual(
      expected.slice(0, 2),
    );
    expect(server.count(TEI_RERANK)).toBe(2);

    // A malformed answer is retried like a glitch; when it persists it is the case's error.
    server.reset();
    server.enqueue(TEI_RERANK, reply([{ index: 1, score: 2 }]), reply([{ index: 1, score: 2 }]));
    const err = await new TeiReranker({ url: served.url, retries: 1, minDelayMs: 5 })
      .score(query, passages.slice(0, 2))
      .catch((e: unknown) => e);
    expect(server.count(TEI_RERANK)).toBe(2);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).details.fault).toBe('answer');
    expect((err as Error).message).toBe(`tei: malformed answer (no score for passages 0) from ${served.url}/rerank`);
  });

  it('ends a hung request at the timeout', async () => {
    server.enqueue(TEI_RERANK, hang());
    const t0 = performance.now();
    const err = await new TeiReranker({ url: served.url, timeoutMs: 300, retries: 0 })
      .score(query, ['a'])
      .catch((e: unknown) => e);
    expect(server.count(TEI_RERANK)).toBe(1);
    // Kept only against a hang (the suite's timeout is minutes): 10 × the 300 ms deadline.
    expect(performance.now() - t0).toBeLessThan(3000);
    expect((err as Error).message).toBe(
      `tei: gave up after 1 attempt: request timed out after 300 ms from ${served.url}/rerank`,
    );
    expect((err as ProviderError).details.fault).toBe('connection');
  });

  it('sends URL credentials as Basic auth', async () => {
    const r = new TeiReranker({ url: served.url.replace('http://', 'http://user:hunter22@') });
    expect(r.id).toBe(`tei:${served.url.replace('http://', 'http://user:***@')}`);
    await r.score(query, ['a']);
    expect(server.last(TEI_RERANK).headers.authorization).toBe(
      `Basic ${Buffer.from('user:hunter22').toString('base64')}`,
    );
  });

  it('sends the key as Bearer, fails fast on 401 and never shows the key', async () => {
    server.enqueue(TEI_RERANK, status(401, { error: `bad token ${KEY}` }));
    const r = new TeiReranker({ url: served.url.replace('http://', 'http://user:hunter22@'), apiKey: KEY });
    const err = await r.score(query, ['a']).catch((e: unknown) => e);
    expect(server.last(TEI_RERANK).headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.count(TEI_RERANK)).toBe(1);
    expect((err as ProviderError).details).toMatchObject({ status: 401, retryable: false });
    expect(inspect(err, { depth: 8 })).not.toMatch(/SECRET|hunter22/);
  });
});

describe('JinaReranker (vLLM /v1/rerank)', () => {
  it('sends model, documents and top_n; keeps raw scores', async () => {
    const r = new JinaReranker({ url: served.url, model: 'BAAI/bge-reranker-v2-m3' });
    expect(r.id).toBe(`vllm:${served.url}`);
    expect(await r.score(query, passages)).toEqual(expected);
    expect(server.last(VLLM_RERANK).body).toEqual({
      model: 'BAAI/bge-reranker-v2-m3',
      query,
      documents: passages,
      top_n: 6,
    });
  });

  it('converts probabilities to logits when asked, and accepts a /v1 base URL', async () => {
    server.enqueue(
      VLLM_RERANK,
      reply({
        results: [
          { index: 1, relevance_score: 0.9 },
          { index: 0, relevance_score: 0.2 },
        ],
      }),
    );
    const r = new JinaReranker({ url: `${served.url}/v1`, probabilities: true });
    expect(await r.score(query, ['a', 'b'])).toEqual([logit(0.2), logit(0.9)]);
    expect(server.count(VLLM_RERANK)).toBe(1);
  });
});

describe('CohereReranker (/v2/rerank)', () => {
  it('turns probabilities into logits in input order', async () => {
    const r = new CohereReranker({ url: served.url, model: 'rerank-v3.5' });
    expect(r.id).toBe(`cohere:${served.url}`);
    const scores = await r.score(query, passages);
    scores.forEach((s, i) => expect(s).toBeCloseTo(expected[i]!, 6));
    expect(server.last(COHERE_RERANK).body).toMatchObject({ model: 'rerank-v3.5', top_n: 6 });
  });

  it('keeps scores finite at 0 and 1', async () => {
    server.enqueue(
      COHERE_RERANK,
      reply({
        results: [
          { index: 0, relevance_score: 1 },
          { index: 1, relevance_score: 0 },
        ],
      }),
    );
    const [hi, lo] = await new CohereReranker({ url: served.url }).score(query, ['a', 'b']);
    expect(Number.isFinite(hi) && Number.isFinite(lo)).toBe(true);
    expect(hi).toBeGreaterThan(10);
    expect(lo).toBeLessThan(-10);
  });
});

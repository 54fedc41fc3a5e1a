/**
 * One default per setting, in one place (src/setting-defaults.ts): the config schema fills a
 * config from it, and the clients fall back to the same values when a library caller gives none.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../src/config/schema.js';
import { ProviderError } from '../src/errors.js';
import { withRetry } from '../src/llm/retry.js';
import {
  BATCH_POLL_DEFAULTS,
  CONCURRENCY,
  DATABASE_DEFAULTS,
  EMBEDDING_BATCH_SIZE,
  RERANK_DEFAULTS,
  REQUEST_DEFAULTS,
} from '../src/setting-defaults.js';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

const minimal = { retrieval: { channels: [{ name: 'k', kind: 'keyword', grain: 'topic' }] } };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

describe('setting defaults', () => {
  it('the config schema fills every section from the one table', () => {
    const c = ConfigSchema.parse({
      ...minimal,
      rerank: { node: 'k' },
      batch: {},
      target: { url: 'http://bot.example/ask' },
    });
    const request = {
      timeout_ms: REQUEST_DEFAULTS.timeoutMs,
      retries: REQUEST_DEFAULTS.retries,
      max_retry_after_ms: REQUEST_DEFAULTS.maxRetryAfterMs,
    };
    for (const section of [c.generator, c.judge, c.embedder, c.target!]) expect(section).toMatchObject(request);
    expect(c.rerank).toMatchObject({
      timeout_ms: RERANK_DEFAULTS.timeoutMs,
      max_batch: RERANK_DEFAULTS.maxBatch,
      retries: REQUEST_DEFAULTS.retries,
    });
    expect(c.embedder.batch_size).toBe(EMBEDDING_BATCH_SIZE);
    expect([c.retrieval.concurrency, c.generator.concurrency, c.judge.concurrency]).toEqual([
      CONCURRENCY,
      CONCURRENCY,
      CONCURRENCY,
    ]);
    expect(c.batch).toMatchObject({
      poll_min_ms: BATCH_POLL_DEFAULTS.pollMinMs,
      poll_max_ms: BATCH_POLL_DEFAULTS.pollMaxMs,
      max_wait_ms: BATCH_POLL_DEFAULTS.maxWaitMs,
    });
    expect(c.database).toMatchObject({
      statement_timeout_ms: DATABASE_DEFAULTS.statementTimeoutMs,
      connect_timeout_ms: DATABASE_DEFAULTS.connectTimeoutMs,
    });
  });

  it('a section left out is the section written empty: each field has its default once', () => {
    const absent = ConfigSchema.parse(minimal);
    const empty = ConfigSchema.parse({
      ...minimal,
      database: {},
      embedder: {},
      evidence: {},
      generator: {},
      judge: {},
    });
    // Compared as JSON text: the key order is what a results file stores.
    expect(JSON.stringify(absent)).toBe(JSON.stringify(empty));
  });

  it('the retry layer falls back to the same retries and first backoff as the config', async () => {
    const delays: number[] = [];
    let attempts = 0;
    const err = await withRetry(
      () => {
        attempts++;
        return Promise.reject(new ProviderError('busy', { provider: 't', status: 503, retryable: true }));
      },
      { provider: 't', sleep: (ms) => (delays.push(ms), Promise.resolve()), random: () => 0 },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(attempts).toBe(REQUEST_DEFAULTS.retries + 1);
    // random() = 0: no jitter, so the waits are the backoff itself, doubling from the first delay.
    expect(delays[0]).toBe(REQUEST_DEFAULTS.minDelayMs);
    expect(delays[1]).toBe(2 * REQUEST_DEFAULTS.minDelayMs);
  });

  it('no default is written as a literal fallback anywhere else in src/', () => {
    // A `?? N` or `.default(N)` with one of the table's values is a second copy that can drift.
    const literal = /(\?\?|\.default\()\s*(60_000|60000|30_000|10_000|300_000|5_000|500|64|32|4|25 \* 3_600_000)\b/;
    const copies = sourceFiles(SRC)
      .filter((f) => !f.endsWith('setting-defaults.ts'))
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .flatMap((line, i) => (literal.test(line) ? [`${relative(SRC, f)}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(copies).toEqual([]);
  });
});

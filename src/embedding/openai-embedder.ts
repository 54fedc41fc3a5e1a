/**
 * Embeddings over the OpenAI-compatible `POST {baseURL}/embeddings`, which OpenAI, vLLM,
 * TEI and Ollama all serve. Batched; vectors are returned in input order (by `index`).
 */
import { z } from 'zod';
import { ConfigError, ProviderError, redact, rememberSecrets } from '../errors.js';
import { EMBEDDING_BATCH_SIZE, REQUEST_DEFAULTS } from '../setting-defaults.js';
import { answerError } from '../llm/faults.js';
import { joinUrl, postJson } from '../llm/http.js';
import { probe, where, type PreflightTarget } from '../llm/preflight.js';
import { urlSecrets } from '../llm/remote.js';
import { withRetry } from '../llm/retry.js';
import type { Embedder } from './embedder.js';

const OPENAI_URL = 'https://api.openai.com/v1';

/** Options of {@link OpenAIEmbedder}. */
export interface OpenAIEmbedderOptions {
  /** e.g. `text-embedding-3-small`, `BAAI/bge-m3`. */
  model: string;
  /** Vector length expected back; a different length is an error (it must match the index). */
  dimensions: number;
  /** API root including `/v1` (default OpenAI's). */
  baseURL?: string;
  /** Sent as `Authorization: Bearer …`; needed for OpenAI itself, not when `baseURL` points at a local server. */
  apiKey?: string;
  /** Inputs per request (default 64). */
  batchSize?: number;
  /** Also send `dimensions` in the request (OpenAI's text-embedding-3 models shorten to it). Default false. */
  requestDimensions?: boolean;
  /** Per-request timeout, ms (default 60 000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 4). */
  retries?: number;
  /** First backoff delay, ms (default 500). */
  minDelayMs?: number;
  /** Cap on a server's Retry-After, ms (default 30 000). */
  maxRetryAfterMs?: number;
}

const EmbeddingsResponse = z.object({
  data: z.array(z.object({ index: z.number().int(), embedding: z.array(z.number()) })),
});

/** An Embedder over an OpenAI-compatible server. Id: `openai:MODEL@URL`. */
export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  readonly offline = false;
  readonly dimensions: number;
  private readonly endpoint: string;
  private readonly apiKey: string | undefined;

  constructor(private readonly opts: OpenAIEmbedderOptions) {
    const base = opts.baseURL ?? OPENAI_URL;
    this.endpoint = joinUrl(base, '/embeddings');
    this.dimensions = opts.dimensions;
    this.id = `openai:${opts.model}@${redact(base.replace(/\/+$/, ''))}`;
    this.apiKey = opts.apiKey;
    if (!this.apiKey && !opts.baseURL) {
      throw new ConfigError(
        `OPENAI_API_KEY is not set (needed for embeddings with ${opts.model}); set it or give a baseURL`,
      );
    }
    rememberSecrets([this.apiKey, ...urlSecrets(opts.baseURL)]);
  }

  /** One embedding, no retries, short deadline: the server answers, knows the model, and its vectors have the configured length. */
  async preflight(): Promise<void> {
    const target: PreflightTarget = {
      component: `embedder ${this.opts.model}`,
      url: this.endpoint,
      keyEnv: 'OPENAI_API_KEY',
      secrets: [this.apiKey],
      timeoutMs: this.opts.timeoutMs,
    };
    const got = await probe(target, (signal, timeoutMs) => this.request(['preflight check'], timeoutMs, signal, false));
    const vector = got.ok ? got.value[0] : undefined;
    if (vector && vector.length !== this.dimensions) {
      throw new ConfigError(
        `${where(target)} returns ${vector.length}-dimensional vectors for ${this.opts.model} but dimensions is ${this.dimensions}` +
          ' (set embedder.dimensions to match the model and the stored embeddings)',
      );
    }
  }

  async embed(texts: string[]): Promise<number[][]> {
    const size = Math.max(1, this.opts.batchSize ?? EMBEDDING_BATCH_SIZE);
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += size) out.push(...(await this.embedBatch(texts.slice(i, i + size))));
    return out;
  }

  private embedBatch(input: string[]): Promise<number[][]> {
    return withRetry(() => this.request(input, this.opts.timeoutMs ?? REQUEST_DEFAULTS.timeoutMs), {
      provider: 'embeddings',
      endpoint: this.endpoint,
      keyEnv: 'OPENAI_API_KEY',
      secrets: [this.apiKey],
      ...(this.opts.retries !== undefined && { retries: this.opts.retries }),
      ...(this.opts.minDelayMs !== undefined && { minDelayMs: this.opts.minDelayMs }),
      ...(this.opts.maxRetryAfterMs !== undefined && { maxRetryAfterMs: this.opts.maxRetryAfterMs }),
    });
  }

  /** One request under its deadline; the vectors in input order, each checked (length, finite). */
  private async request(
    input: string[],
    timeoutMs: number,
    signal?: AbortSignal,
    checkLength = true,
  ): Promise<number[][]> {
    const body = {
      model: this.opts.model,
      input,
      ...(this.opts.requestDimensions && { dimensions: this.dimensions }),
    };
    const response = await postJson(this.endpoint, body, {
      provider: 'embeddings',
      timeoutMs,
      ...(this.apiKey && { apiKey: this.apiKey }),
      ...(signal && { signal }),
    });
    const parsed = EmbeddingsResponse.safeParse(response);
    if (!parsed.success)
      throw answerError(
        'embeddings',
        'malformed',
        `unexpected response shape (${parsed.error.issues[0]?.message})`,
        this.endpoint,
      );
    const vectors = new Array<number[] | undefined>(input.length).fill(undefined);
    for (const d of parsed.data.data) {
      if (d.index < 0 || d.index >= input.length)
        throw answerError('embeddings', 'malformed', `index ${d.index} out of range`, this.endpoint);
      if (checkLength && d.embedding.length !== this.dimensions) {
        throw this.fail(
          `${this.opts.model} returned ${d.embedding.length}-dimensional vectors but ${this.dimensions} are configured` +
            ' (set dimensions to match the model and the stored embeddings)',
        );
      }
      vectors[d.index] = d.embedding;
    }
    const missing = vectors.flatMap((v, i) => (v ? [] : [i]));
    if (missing.length)
      throw answerError('embeddings', 'malformed', `no embedding for inputs ${missing.join(', ')}`, this.endpoint);
    return vectors as number[][];
  }

  private fail(what: string): ProviderError {
    // Every later request would get the same vectors: the configuration, not the case, is wrong.
    return new ProviderError(`embeddings: ${what} from ${redact(this.endpoint)}`, {
      provider: 'embeddings',
      retryable: false,
      fault: 'model',
    });
  }
}

/**
 * Cross-encoder clients over HTTP: TEI (`/rerank`), vLLM/Jina (`/v1/rerank`) and
 * Cohere-style (`/v2/rerank`). All return one logit per passage, in the passages' order.
 * Requests are batched; a 413 halves the batch and the batch is sent again.
 */
import { z } from 'zod';
import { ProviderError, redact, rememberSecrets } from '../errors.js';
import { answerError } from '../llm/faults.js';
import { joinUrl, postJson } from '../llm/http.js';
import { probe, type PreflightTarget } from '../llm/preflight.js';
import { urlSecrets } from '../llm/remote.js';
import { withRetry } from '../llm/retry.js';
import { RERANK_DEFAULTS } from '../setting-defaults.js';

/** The query of the one rerank request a preflight sends (servers and their logs see it). */
export const PREFLIGHT_QUERY = 'preflight';
import { logit, type Reranker } from './types.js';

/** Options shared by the HTTP rerankers. */
export interface HttpRerankerOptions {
  /** Server root, e.g. `http://localhost:8080` (a full `…/rerank` endpoint is used as is). */
  url: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string;
  /** Model name; vLLM and Cohere take one, TEI ignores it. Sent only when set. */
  model?: string;
  /** Per-request timeout, ms (default 30 000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 4). */
  retries?: number;
  /** First backoff delay, ms (default 500). */
  minDelayMs?: number;
  /** Cap on a server's Retry-After, ms (default 30 000). */
  maxRetryAfterMs?: number;
  /** Passages per request (default 32, TEI's default limit). */
  maxBatch?: number;
}

/** Options of {@link JinaReranker}. */
export interface JinaRerankerOptions extends HttpRerankerOptions {
  /** True when the server's relevance_score is a probability (converted with logit). Default false: vLLM returns raw logits. */
  probabilities?: boolean;
}

abstract class BatchedHttpReranker implements Reranker {
  abstract readonly id: string;
  readonly offline = false;
  protected readonly endpoint: string;
  /** Current batch size; shrinks for good after a 413. */
  private batch: number;

  constructor(
    protected readonly opts: HttpRerankerOptions,
    path: string,
    protected readonly provider: string,
  ) {
    this.endpoint = joinUrl(opts.url, path);
    this.batch = Math.max(1, opts.maxBatch ?? RERANK_DEFAULTS.maxBatch);
    rememberSecrets([opts.apiKey, ...urlSecrets(opts.url)]);
  }

  /** Body of one request. */
  protected abstract body(query: string, passages: string[]): unknown;
  /** `[index, score]` pairs of a response (scores already logits). */
  protected abstract pairs(response: unknown): [number, number][];

  async score(query: string, passages: string[]): Promise<number[]> {
    const out: number[] = new Array<number>(passages.length);
    let start = 0;
    while (start < passages.length) {
      const chunk = passages.slice(start, start + this.batch);
      try {
        const scores = await this.scoreBatch(query, chunk);
        scores.forEach((s, i) => (out[start + i] = s));
        start += chunk.length;
      } catch (e) {
        if (e instanceof ProviderError && e.details.status === 413 && chunk.length > 1) {
          this.batch = Math.ceil(chunk.length / 2);
          continue;
        }
        throw e;
      }
    }
    return out;
  }

  /** One tiny rerank call ({@link PREFLIGHT_QUERY}), no retries, short deadline (see llm/preflight.ts). */
  async preflight(): Promise<void> {
    const target: PreflightTarget = {
      component: `${this.provider} reranker`,
      url: this.endpoint,
      keyEnv: 'RERANKER_API_KEY',
      secrets: [this.opts.apiKey],
      timeoutMs: this.opts.timeoutMs,
    };
    await probe(target, (signal, timeoutMs) => this.request(PREFLIGHT_QUERY, ['preflight check'], timeoutMs, signal));
  }

  private scoreBatch(query: string, passages: string[]): Promise<number[]> {
    return withRetry(() => this.request(query, passages, this.opts.timeoutMs ?? RERANK_DEFAULTS.timeoutMs), {
      provider: this.provider,
      endpoint: this.endpoint,
      keyEnv: 'RERANKER_API_KEY',
      secrets: [this.opts.apiKey],
      ...(this.opts.retries !== undefined && { retries: this.opts.retries }),
      ...(this.opts.minDelayMs !== undefined && { minDelayMs: this.opts.minDelayMs }),
      ...(this.opts.maxRetryAfterMs !== undefined && { maxRetryAfterMs: this.opts.maxRetryAfterMs }),
    });
  }

  /** One request under its deadline; an answer without one finite score per passage is malformed. */
  private async request(query: string, passages: string[], timeoutMs: number, signal?: AbortSignal): Promise<number[]> {
    const response = await postJson(this.endpoint, this.body(query, passages), {
      provider: this.provider,
      timeoutMs,
      ...(this.opts.apiKey && { apiKey: this.opts.apiKey }),
      ...(signal && { signal }),
    });
    let pairs: [number, number][];
    try {
      pairs = this.pairs(response);
    } catch (e) {
      throw this.badResponse(
        `unexpected response shape (${e instanceof z.ZodError ? e.issues[0]?.message : String(e)})`,
      );
    }
    const scores = new Array<number | undefined>(passages.length).fill(undefined);
    for (const [index, score] of pairs) {
      if (index < 0 || index >= passages.length) throw this.badResponse(`index ${index} out of range`);
      if (!Number.isFinite(score)) throw this.badResponse(`score ${score} for passage ${index}`);
      scores[index] = score;
    }
    const missing = scores.flatMap((s, i) => (s === undefined ? [i] : []));
    if (missing.length) throw this.badResponse(`no score for passages ${missing.join(', ')}`);
    return scores.filter((s): s is number => s !== undefined);
  }

  private badResponse(what: string): ProviderError {
    return answerError(this.provider, 'malformed', what, this.endpoint);
  }
}

const TeiResponse = z.array(z.object({ index: z.number().int(), score: z.number() }));
const RerankResponse = z.object({
  results: z.array(z.object({ index: z.number().int(), relevance_score: z.number() })),
});

/** Hugging Face text-embeddings-inference: `POST /rerank` with `raw_scores: true`. Id: `tei:URL`. */
export class TeiReranker extends BatchedHttpReranker {
  readonly id: string;
  constructor(opts: HttpRerankerOptions) {
    super(opts, '/rerank', 'tei');
    this.id = `tei:${redact(opts.url)}`;
  }
  protected body(query: string, texts: string[]): unknown {
    return { query, texts, raw_scores: true, truncate: true };
  }
  protected pairs(response: unknown): [number, number][] {
    return TeiResponse.parse(response).map((r) => [r.index, r.score]);
  }
}

/** vLLM (or Jina's API): `POST /v1/rerank`, `{results: [{index, relevance_score}]}`. Id: `vllm:URL`. */
export class JinaReranker extends BatchedHttpReranker {
  readonly id: string;
  constructor(private readonly jina: JinaRerankerOptions) {
    super(jina, '/v1/rerank', 'vllm');
    this.id = `vllm:${redact(jina.url)}`;
  }
  protected body(query: string, documents: string[]): unknown {
    return { ...(this.jina.model && { model: this.jina.model }), query, documents, top_n: documents.length };
  }
  protected pairs(response: unknown): [number, number][] {
    const toLogit = this.jina.probabilities ? logit : (s: number) => s;
    return RerankResponse.parse(response).results.map((r) => [r.index, toLogit(r.relevance_score)]);
  }
}

/** Cohere-style `POST /v2/rerank` (Cohere, vLLM); scores are probabilities, returned as logits. Id: `cohere:URL`. */
export class CohereReranker extends BatchedHttpReranker {
  readonly id: string;
  constructor(opts: HttpRerankerOptions) {
    super(opts, '/v2/rerank', 'cohere');
    this.id = `cohere:${redact(opts.url)}`;
  }
  protected body(query: string, documents: string[]): unknown {
    return { ...(this.opts.model && { model: this.opts.model }), query, documents, top_n: documents.length };
  }
  protected pairs(response: unknown): [number, number][] {
    return RerankResponse.parse(response).results.map((r) => [r.index, logit(r.relevance_score)]);
  }
}

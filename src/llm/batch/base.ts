/**
 * What both batch clients share: checking a submission, waiting with backoff, matching result
 * lines to requests, and turning an answer into a Completion or a per-request error.
 */
import type { z } from 'zod';
import { InputError, JudgeParseError, ProviderError } from '../../errors.js';
import { BATCH_POLL_DEFAULTS } from '../../setting-defaults.js';
import type { Completion, CompletionRequest } from '../types.js';
import { sleep as timerSleep, type Sleep } from '../retry.js';
import { checkLine, endpointUrl, jsonlLines, malformed, openEndpoint, type Transport } from './transport.js';
import type {
  BatchClient,
  BatchClientOptions,
  BatchErrorKind,
  BatchOutcome,
  BatchRequest,
  BatchRequestError,
  BatchResult,
  BatchStatus,
  ResultsOptions,
  WaitOptions,
} from './types.js';

/** The custom_id both providers accept (Anthropic's rule; OpenAI takes any string). */
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** Refuses an empty, oversized or ambiguous submission before anything is sent. */
export function checkSubmission(label: string, requests: readonly BatchRequest[], maxRequests: number): void {
  if (requests.length === 0) throw new InputError(`${label}: a batch needs at least one request`);
  if (requests.length > maxRequests) {
    throw new InputError(
      `${label}: ${requests.length} requests exceed the ${maxRequests} one batch may hold; split them`,
    );
  }
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const r of requests) {
    if (!CUSTOM_ID.test(r.custom_id)) problems.push(`custom_id '${r.custom_id}' is not 1-64 of [a-zA-Z0-9_-]`);
    else if (seen.has(r.custom_id)) problems.push(`custom_id '${r.custom_id}' is used twice`);
    seen.add(r.custom_id);
  }
  if (problems.length) throw new InputError(`${label}: the batch cannot be submitted`, problems.slice(0, 10));
}

/** A per-request error (the message as the synchronous client would have thrown it). */
export function requestError(kind: BatchErrorKind, message: string, raw?: string): BatchOutcome<never> {
  return { error: { kind, message, ...(raw !== undefined && { raw }) } };
}

/**
 * Runs `make` (which validates an answer like the synchronous client does) and returns its
 * Completion, or the error it throws as a `failed` outcome: an unusable answer or a schema
 * mismatch fails that request only, never the batch.
 */
export function outcomeOf<T>(make: () => Completion<T>): BatchOutcome<T> {
  try {
    return { ok: make() };
  } catch (e) {
    if (e instanceof JudgeParseError) return requestError('failed', e.message, e.raw);
    if (e instanceof ProviderError) return requestError('failed', e.message);
    throw e;
  }
}

/**
 * The custom_id still legible in a result line that does not read (cut short after it, say): the
 * first `"custom_id": "…"` pair in it. Inside a JSON string a quote is escaped, so an answer
 * quoting such a pair does not match.
 */
export function legibleCustomId(line: string): string | undefined {
  return /"custom_id"\s*:\s*"([a-zA-Z0-9_-]{1,64})"/.exec(line)?.[1];
}

export interface MatchSettings<L extends { custom_id: string }, T> {
  t: Transport;
  /** The result files, read in order. */
  urls: readonly (string | null | undefined)[];
  /** One line's format. */
  schema: z.ZodType<L>;
  requests: readonly BatchRequest<T>[];
  /** The outcome a readable line gives its request. */
  outcome: (line: L, req: CompletionRequest<T>, endpoint: string) => BatchOutcome<T>;
  /** The error of a request that no line answered. */
  missing: BatchRequestError;
}

/**
 * One result per request, from the provider's result files (JSONL, read as they arrive), matched
 * by custom_id. A line that cannot be read costs one request, not the batch: the one whose
 * custom_id it still shows gets that line's error (file and line), unless a readable line answers
 * it; a line without a legible custom_id is reported, and named in the errors of the requests
 * left without a line. Every readable line still gives its result. A line naming a request that
 * is not in the batch, or one already answered, says the file is not this batch's: an error.
 */
export async function* matchResults<L extends { custom_id: string }, T>(
  m: MatchSettings<L, T>,
  opts: ResultsOptions = {},
): AsyncGenerator<BatchResult<T>> {
  const byId = new Map(m.requests.map((r) => [r.custom_id, r.request]));
  const seen = new Set<string>();
  /** custom_id → the error of its unreadable line. */
  const torn = new Map<string, string>();
  const unreadable: string[] = [];
  for (const url of m.urls) {
    if (!url) continue;
    let lineNo = 0;
    for await (const line of jsonlLines(m.t, url)) {
      const endpoint = `GET ${url} (line ${++lineNo})`;
      let out: L;
      try {
        out = checkLine(m.t, url, lineNo, line, m.schema);
      } catch (e) {
        if (!(e instanceof ProviderError)) throw e;
        unreadable.push(e.message);
        opts.onUnreadable?.(e.message);
        const id = legibleCustomId(line);
        if (id !== undefined && byId.has(id) && !torn.has(id)) torn.set(id, e.message);
        continue;
      }
      const req = byId.get(out.custom_id);
      if (!req) throw malformed(m.t, endpoint, `custom_id '${out.custom_id}' is not a request of this batch`);
      if (seen.has(out.custom_id)) throw malformed(m.t, endpoint, `second result for custom_id '${out.custom_id}'`);
      seen.add(out.custom_id);
      yield { custom_id: out.custom_id, outcome: m.outcome(out, req, endpoint) };
    }
  }
  const note = unreadable.length
    ? `; ${unreadable.length === 1 ? 'a line' : `${unreadable.length} lines`} of the results could not be read: ${unreadable.slice(0, 3).join('; ')}${unreadable.length > 3 ? '; …' : ''}`
    : '';
  for (const r of m.requests) {
    if (seen.has(r.custom_id)) continue;
    const own = torn.get(r.custom_id);
    yield {
      custom_id: r.custom_id,
      outcome:
        own !== undefined
          ? requestError('failed', `its result line cannot be read: ${own}`)
          : { error: { ...m.missing, message: `${m.missing.message}${note}` } },
    };
  }
}

const fmt = (ms: number) => (ms < 60_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`);

/** Who a batch client talks to: the provider's API, its key headers, its batch size limit. */
export interface BatchProvider {
  /** Name in messages, e.g. `openai batch`. */
  label: string;
  provider: 'openai' | 'anthropic';
  defaultUrl: string;
  keyEnv: string;
  authHeaders: (key: string) => Record<string, string>;
  headers?: Record<string, string>;
  /** Largest number of requests the provider takes in one batch. */
  limit: number;
}

/**
 * What both batch clients are beside their wire format: id, endpoint and transport, the batch
 * size limit, polling and waiting on top of a provider's `poll` and `results`.
 */
export abstract class BatchClientBase implements BatchClient {
  readonly id: string;
  readonly maxRequests: number;
  protected readonly label: string;
  protected readonly baseURL: string;
  protected readonly t: Transport;
  private readonly query: Record<string, string>;
  private readonly pollMinMs: number;
  private readonly pollMaxMs: number;
  private readonly maxWaitMs: number;
  private readonly wait_: Sleep;
  private readonly now: () => number;

  constructor(opts: BatchClientOptions, p: BatchProvider) {
    this.label = p.label;
    this.id = `${p.provider}:${opts.model}`;
    this.maxRequests = Math.max(1, Math.min(p.limit, opts.maxRequests ?? p.limit));
    ({
      baseURL: this.baseURL,
      query: this.query,
      t: this.t,
    } = openEndpoint(opts, {
      label: p.label,
      id: this.id,
      defaultUrl: p.defaultUrl,
      keyEnv: p.keyEnv,
      authHeaders: p.authHeaders,
      ...(p.headers && { headers: p.headers }),
    }));
    this.pollMinMs = opts.pollMinMs ?? BATCH_POLL_DEFAULTS.pollMinMs;
    this.pollMaxMs = Math.max(this.pollMinMs, opts.pollMaxMs ?? BATCH_POLL_DEFAULTS.pollMaxMs);
    this.maxWaitMs = opts.maxWaitMs ?? BATCH_POLL_DEFAULTS.maxWaitMs;
    this.wait_ = opts.sleep ?? timerSleep;
    this.now = opts.now ?? Date.now;
  }

  /** A path of the provider's API, with the base URL's query string (e.g. `api-version`). */
  protected url(path: string): string {
    return endpointUrl(this.baseURL, this.query, path);
  }

  /** Results asked of a batch that cannot give them yet (`state`: e.g. `not ended (status …)`). */
  protected notReady(batchId: string, state: string): ProviderError {
    return new ProviderError(`${this.label}: batch ${batchId} has ${state}; wait for it first`, {
      provider: this.label,
      retryable: false,
      fault: 'client',
    });
  }

  abstract submit(requests: readonly BatchRequest[]): Promise<{ batchId: string }>;
  abstract poll(batchId: string): Promise<BatchStatus>;
  abstract results<T = unknown>(
    batchId: string,
    requests: readonly BatchRequest<T>[],
    opts?: ResultsOptions,
  ): AsyncIterable<BatchResult<T>>;

  /**
   * Polls at once, then after `pollMinMs`, doubling the wait after every poll up to
   * `pollMaxMs`; the last wait is cut so that one poll falls on the `maxWaitMs` limit.
   */
  async waitUntilEnded(batchId: string, opts: WaitOptions = {}): Promise<BatchStatus> {
    const start = this.now();
    let delay = this.pollMinMs;
    for (let n = 1; ; n++) {
      const status = await this.poll(batchId);
      opts.onPoll?.(status, n);
      if (status.status === 'ended') return status;
      const waited = this.now() - start;
      if (waited >= this.maxWaitMs) {
        throw new ProviderError(
          `${this.label}: batch ${batchId} is still ${status.providerStatus} after ${fmt(waited)} of waiting (limit ${fmt(this.maxWaitMs)}); the batch goes on: wait for the same id again later`,
          { provider: this.label, retryable: true, fault: 'server' },
        );
      }
      await this.wait_(Math.min(delay, this.maxWaitMs - waited), opts.signal);
      delay = Math.min(this.pollMaxMs, delay * 2);
    }
  }

  async *wait<T = unknown>(
    batchId: string,
    requests: readonly BatchRequest<T>[],
    opts: WaitOptions = {},
  ): AsyncGenerator<BatchResult<T>> {
    await this.waitUntilEnded(batchId, opts);
    yield* this.results(batchId, requests, opts);
  }
}

/**
 * The provider-neutral face of the batch APIs (OpenAI Batch API, Anthropic Message Batches):
 * many CompletionRequests submitted at once, answered within a day at a lower price. A run
 * submits, keeps the batch id (so an interrupted run polls the same batch again instead of
 * paying twice), waits with backoff, then reads one outcome per request, matched by custom_id.
 */
import type { Completion, CompletionRequest, RemoteModelOptions } from '../types.js';

/** One request of a batch. `custom_id` is unique within the batch (`[a-zA-Z0-9_-]{1,64}`). */
export interface BatchRequest<T = unknown> {
  custom_id: string;
  request: CompletionRequest<T>;
}

/**
 * Why a request of a batch has no answer:
 * - `failed`: it was processed and failed (a server error, an unusable answer — empty,
 *   truncated, refused, malformed —, an answer that does not match the schema, no line for it
 *   in a batch that completed);
 * - `invalid`: the provider refused it as an invalid request (or the whole input file);
 * - `expired`: the batch's 24 h window ended before it was processed;
 * - `canceled`: the batch was cancelled before it was processed.
 */
export type BatchErrorKind = 'failed' | 'expired' | 'canceled' | 'invalid';

export interface BatchRequestError {
  kind: BatchErrorKind;
  message: string;
  /** The answer text when it was there but did not match the request's schema. */
  raw?: string;
}

/** The outcome of one request: an answer (zod-parsed `json` when a schema was asked) or an error. */
export type BatchOutcome<T = unknown> = { ok: Completion<T> } | { error: BatchRequestError };

export interface BatchResult<T = unknown> {
  custom_id: string;
  outcome: BatchOutcome<T>;
}

/** How far a batch is, in the same words for both providers (0 when the provider does not say). */
export interface BatchCounts {
  total: number;
  /** Not ended yet. */
  processing: number;
  succeeded: number;
  /** Errored or failed (OpenAI counts expired requests here only once it has ended). */
  failed: number;
  canceled: number;
  expired: number;
}

export interface BatchStatus {
  /** `ended` once no request will change any more (completed, failed, expired or cancelled). */
  status: 'in_progress' | 'ended';
  counts: BatchCounts;
  /** The provider's own word, e.g. `validating`, `finalizing`, `canceling`, `expired`. */
  providerStatus: string;
}

/** A client of one provider's batch API for one model. */
export interface BatchClient {
  /** `provider:model`, as the synchronous ChatModel of the same model. */
  readonly id: string;
  /** Largest number of requests one batch may hold; a run splits larger sets. */
  readonly maxRequests: number;
  /** Sends the requests as one batch; keep the id to poll and to resume. */
  submit(requests: readonly BatchRequest[]): Promise<{ batchId: string }>;
  /** One status request (retried on transient failures), no waiting. */
  poll(batchId: string): Promise<BatchStatus>;
  /**
   * Polls until the batch has ended, waiting between polls with a growing delay (bounded by
   * the poll interval settings); throws when `maxWaitMs` passes first.
   */
  waitUntilEnded(batchId: string, opts?: WaitOptions): Promise<BatchStatus>;
  /**
   * One result per request of `requests` (the same list the batch was submitted with: its
   * schemas parse the answers, and a request with no result becomes an explicit error),
   * streamed as the provider's result files are read. The batch must have ended.
   */
  results<T = unknown>(
    batchId: string,
    requests: readonly BatchRequest<T>[],
    opts?: ResultsOptions,
  ): AsyncIterable<BatchResult<T>>;
  /** `waitUntilEnded`, then `results`. */
  wait<T = unknown>(
    batchId: string,
    requests: readonly BatchRequest<T>[],
    opts?: WaitOptions,
  ): AsyncIterable<BatchResult<T>>;
}

export interface ResultsOptions {
  /**
   * Called with each line of a result file that cannot be read (torn, not JSON, off the line
   * format), naming the file and line: it costs the request whose custom_id it still shows, or
   * else the requests left without a line, never the rest of the batch.
   */
  onUnreadable?: (message: string) => void;
}

export interface WaitOptions extends ResultsOptions {
  /** Called after every poll (progress display, ledger). */
  onPoll?: (status: BatchStatus, poll: number) => void;
  signal?: AbortSignal;
}

/**
 * Settings of a batch client: all given by the caller, nothing read from the environment. Those of
 * a remote chat model (model, base URL, key, per-request deadline and retries), where a result
 * file's deadline applies to each read, plus how to poll.
 */
export interface BatchClientOptions extends RemoteModelOptions {
  /** First wait between polls, ms (default 10 000); it doubles after every poll… */
  pollMinMs?: number;
  /** …up to this, ms (default 300 000). */
  pollMaxMs?: number;
  /** Give up waiting after this long on the clock, ms (default 25 h: the 24 h window and finalizing). */
  maxWaitMs?: number;
  /** The clock `maxWaitMs` is measured on, ms (default Date.now). */
  now?: () => number;
  /** Fewer requests per batch than the provider allows (a run splits larger sets); the provider's limit when absent or larger. */
  maxRequests?: number;
}

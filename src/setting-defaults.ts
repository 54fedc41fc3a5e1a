/**
 * The default of every setting that more than one module applies: the config schema fills a
 * config from these, and the clients (chat models, embedders, rerankers, batch clients) fall back
 * to the same values when a library caller gives none. A loose file at the top of src/, not in
 * config/, because the clients sit below config and take their settings as arguments. (The
 * built-in demo configuration is another matter: src/config/defaults.ts.)
 */

/** Frozen, and typed as plain numbers (a caller's own value replaces a default, not a literal type). */
const frozen = <K extends string>(o: Record<K, number>): Readonly<Record<K, number>> => Object.freeze(o);

/** One request to a remote service and its retries (config `timeout_ms`, `retries`, `max_retry_after_ms`). */
export const REQUEST_DEFAULTS = frozen({
  /** Deadline of one attempt, headers and body, ms (docs/providers.md#every-request-has-a-deadline). */
  timeoutMs: 60_000,
  /** Retries after the first attempt, so at most 5 requests. */
  retries: 4,
  /** First backoff delay, ms; doubles on each retry. */
  minDelayMs: 500,
  /** Largest backoff delay, ms. */
  maxDelayMs: 30_000,
  /** Cap on a server's Retry-After, ms; far beyond it means a quota, not a hiccup. */
  maxRetryAfterMs: 30_000,
});

/** A cross-encoder request (config `rerank.timeout_ms`, `rerank.max_batch`): shorter than a chat answer. */
export const RERANK_DEFAULTS = frozen({
  timeoutMs: 30_000,
  /** Passages per rerank request. */
  maxBatch: 32,
});

/** Inputs per embedding request (config `embedder.batch_size`). */
export const EMBEDDING_BATCH_SIZE = 64;

/** Cases (or retrieval queries) run at once (config `retrieval`, `generator`, `judge` `concurrency`). */
export const CONCURRENCY = 4;

/** How a provider batch is waited for (config `batch.poll_min_ms`, `poll_max_ms`, `max_wait_ms`). */
export const BATCH_POLL_DEFAULTS = frozen({
  /** First wait between polls, ms; it doubles after every poll… */
  pollMinMs: 10_000,
  /** …up to this, ms. */
  pollMaxMs: 300_000,
  /** Stop waiting after this long, ms: the 24 h window and finalizing. */
  maxWaitMs: 25 * 3_600_000,
});

/** The forum's database (config `database.statement_timeout_ms`, `connect_timeout_ms`, `connections`). */
export const DATABASE_DEFAULTS = frozen({
  /** Longest one statement may run on the server, ms. */
  statementTimeoutMs: 10_000,
  /** Opening a connection (DNS, TCP, TLS, authentication), ms. */
  connectTimeoutMs: 5_000,
  /** Connections of a real PostgreSQL's pool (the embedded demo has its own worker count). */
  poolConnections: 4,
});

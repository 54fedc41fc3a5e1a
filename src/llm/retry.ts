/**
 * The one retry layer for every provider call (chat models, rerankers, embedders).
 * The SDKs run with `maxRetries: 0`; p-retry does the retrying here: what is retried and why is
 * in faults.ts; the wait is the server's Retry-After (capped), else an exponential backoff with
 * jitter (up to 25 % shorter, so many clients do not retry in lock-step).
 */
import pRetry from 'p-retry';
import { ProviderError } from '../errors.js';
import { REQUEST_DEFAULTS } from '../setting-defaults.js';
import { classifyError, scrub, toProviderError } from './faults.js';
import { withDeadline } from './http.js';

/** A Retry-After beyond this many times the cap means a quota or rate window, not a hiccup. */
export const FAR_RETRY_AFTER_FACTOR = 10;

/** Waits `ms` (rejects when `signal` aborts); tests inject one that records the delays. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RetryOptions {
  /** Name used in messages, e.g. `openai`, `tei`. */
  provider: string;
  /** Retries after the first attempt (default 4, so at most 5 requests). */
  retries?: number;
  /** First backoff delay, ms (default 500); doubles on each retry. */
  minDelayMs?: number;
  /** Largest backoff delay, ms (default 30 000). */
  maxDelayMs?: number;
  /** Cap on a server's Retry-After, ms (default 30 000). */
  maxRetryAfterMs?: number;
  signal?: AbortSignal;
  /** Where the call goes, for messages (credentials are redacted). */
  endpoint?: string;
  /** Environment variable named in 401/403 messages, e.g. `OPENAI_API_KEY`. */
  keyEnv?: string;
  /** Strings (API keys) that must never appear in an error message. */
  secrets?: (string | undefined)[];
  /** How to wait between attempts (default a timer). */
  sleep?: Sleep;
  /** Source of jitter in [0, 1) (default Math.random). */
  random?: () => number;
}

export const sleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Runs `fn` (given the 1-based attempt number), retrying retryable failures with jittered
 * exponential backoff or the server's Retry-After (capped at `maxRetryAfterMs`; one far beyond
 * the cap ends the call with fault `quota`). Failures end as a ProviderError whose message never
 * carries a credential.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const minDelay = opts.minDelayMs ?? REQUEST_DEFAULTS.minDelayMs;
  const maxDelay = opts.maxDelayMs ?? REQUEST_DEFAULTS.maxDelayMs;
  const cap = opts.maxRetryAfterMs ?? REQUEST_DEFAULTS.maxRetryAfterMs;
  const wait = opts.sleep ?? sleep;
  const random = opts.random ?? Math.random;
  let attempts = 0;
  let tooLong: number | undefined;
  try {
    return await pRetry(
      (n) => {
        attempts = n;
        return fn(n);
      },
      {
        retries: opts.retries ?? REQUEST_DEFAULTS.retries,
        // The wait is done in shouldRetry, so Retry-After can replace the backoff.
        minTimeout: 0,
        signal: opts.signal,
        shouldRetry: async ({ error, retriesConsumed }) => {
          const c = classifyError(error);
          if (!c.retryable) return false;
          if (c.retryAfterMs !== undefined && c.retryAfterMs > cap * FAR_RETRY_AFTER_FACTOR) {
            tooLong = c.retryAfterMs;
            return false;
          }
          const backoff = Math.min(maxDelay, minDelay * 2 ** retriesConsumed) * (1 - random() * 0.25);
          await wait(Math.round(c.retryAfterMs !== undefined ? Math.min(c.retryAfterMs, cap) : backoff), opts.signal);
          return true;
        },
      },
    );
  } catch (e) {
    if (tooLong !== undefined) {
      const s = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 1000)} s`);
      const where = opts.endpoint ? ` from ${opts.endpoint}` : '';
      throw new ProviderError(
        scrub(
          `${opts.provider}: the server asks to wait ${s(tooLong)} (Retry-After), far beyond the ${s(cap)} cap: quota or rate limit exhausted${where}`,
          opts.secrets,
        ),
        { provider: opts.provider, status: classifyError(e).status ?? 429, retryable: false, fault: 'quota' },
      );
    }
    throw toProviderError(e, attempts, opts);
  }
}

/** Settings of a remote client that decide retries and deadlines. */
export interface CallSettings {
  timeoutMs?: number | undefined;
  retries?: number | undefined;
  minDelayMs?: number | undefined;
  maxRetryAfterMs?: number | undefined;
}

/**
 * One model call with the retry layer, each attempt under the per-request deadline (headers and
 * body). `latencyMs` is the wall time the caller waited, failed attempts and waits included,
 * since that is what the case cost. `endpoint` is redacted, `apiKey` scrubbed from any message.
 */
export async function timedCall<T>(
  call: (signal: AbortSignal) => Promise<T>,
  who: { provider: string; endpoint: string; keyEnv: string; apiKey: string; opts: CallSettings; sleep?: Sleep },
): Promise<{ value: T; latencyMs: number }> {
  const t0 = performance.now();
  const timeoutMs = who.opts.timeoutMs ?? REQUEST_DEFAULTS.timeoutMs;
  const value = await withRetry(() => withDeadline(timeoutMs, call), {
    provider: who.provider,
    endpoint: who.endpoint,
    keyEnv: who.keyEnv,
    secrets: [who.apiKey],
    ...(who.opts.retries !== undefined && { retries: who.opts.retries }),
    ...(who.opts.minDelayMs !== undefined && { minDelayMs: who.opts.minDelayMs }),
    ...(who.opts.maxRetryAfterMs !== undefined && { maxRetryAfterMs: who.opts.maxRetryAfterMs }),
    ...(who.sleep && { sleep: who.sleep }),
  });
  return { value, latencyMs: Math.round(performance.now() - t0) };
}

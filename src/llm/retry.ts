/**
 * The one retry layer for every provider call (chat models, rerankers, embedders).
 * The SDKs run with `maxRetries: 0`; p-retry does the retrying here, honouring
 * Retry-After (capped) and failing at once on 4xx other than 408/409/429.
 */
import { STATUS_CODES } from 'node:http';
import { inspect } from 'node:util';
import pRetry from 'p-retry';
import * as OpenAIErrors from 'openai';
import * as AnthropicErrors from '@anthropic-ai/sdk';
import { ProviderError, RagauditError, redact } from '../errors.js';

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
}

/** How a failure should be treated. */
export interface ErrorClass {
  status?: number;
  retryable: boolean;
  /** The server's Retry-After (or retry-after-ms), ms, uncapped. */
  retryAfterMs?: number;
}

/** A non-2xx answer to a fetch call made by this project's own HTTP clients. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly headers: Headers,
    readonly url: string,
    readonly bodyText: string,
  ) {
    super(`${status} ${STATUS_CODES[status] ?? ''}`.trim());
    this.name = 'HttpStatusError';
  }
}

const RETRYABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH',
  'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const RETRYABLE_MESSAGES = /socket hang up|fetch failed|^terminated$|other side closed/i;

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Parses `retry-after-ms`, then `retry-after` (seconds or an HTTP date), into ms. */
export function retryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  const get = (name: string): string | null | undefined => {
    if (!headers || typeof headers !== 'object') return undefined;
    if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
    const v = (headers as Record<string, unknown>)[name];
    return typeof v === 'string' ? v : undefined;
  };
  const ms = get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const ra = get('retry-after')?.trim();
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Number(ra) * 1000;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function causes(e: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let c = e; c != null && chain.length < 6; c = (c as { cause?: unknown }).cause) chain.push(c);
  return chain;
}

function isSdkConnectionError(e: unknown): boolean {
  return e instanceof OpenAIErrors.APIConnectionError || e instanceof AnthropicErrors.APIConnectionError;
}

function isSdkUserAbort(e: unknown): boolean {
  return e instanceof OpenAIErrors.APIUserAbortError || e instanceof AnthropicErrors.APIUserAbortError;
}

function isTimeout(e: unknown): boolean {
  return (
    e instanceof OpenAIErrors.APIConnectionTimeoutError ||
    e instanceof AnthropicErrors.APIConnectionTimeoutError ||
    (e instanceof Error && e.name === 'TimeoutError')
  );
}

/** Says whether a failure is worth retrying, with its HTTP status and Retry-After when known. */
export function classifyError(e: unknown): ErrorClass {
  if (e instanceof ProviderError) return { status: e.details.status, retryable: e.details.retryable };
  if (e instanceof RagauditError || isSdkUserAbort(e)) return { retryable: false };
  if (isTimeout(e) || isSdkConnectionError(e)) return { retryable: true };
  const status = (e as { status?: unknown } | null)?.status;
  if (typeof status === 'number') {
    const retryAfter = retryAfterMs((e as { headers?: unknown }).headers);
    return { status, retryable: isRetryableStatus(status), ...(retryAfter !== undefined && { retryAfterMs: retryAfter }) };
  }
  for (const c of causes(e)) {
    if (!(c instanceof Error)) continue;
    if (c.name === 'AbortError') return { retryable: false };
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string' && RETRYABLE_CODES.has(code)) return { retryable: true };
    if (RETRYABLE_MESSAGES.test(c.message)) return { retryable: true };
  }
  return { retryable: false };
}

/** A short, human description of what went wrong, without secrets. */
function describe(e: unknown, status: number | undefined): string {
  if (status !== undefined) {
    const detail = serverDetail(e);
    return `${status} ${STATUS_CODES[status] ?? 'Error'}${detail ? ` (${detail})` : ''}`;
  }
  if (isTimeout(e)) return 'request timed out';
  for (const c of causes(e)) {
    const code = (c as { code?: unknown }).code;
    if (code === 'ECONNREFUSED') return 'connection refused';
    if (typeof code === 'string' && RETRYABLE_CODES.has(code)) return `connection failed (${code})`;
  }
  if (isSdkConnectionError(e)) return 'connection failed';
  return e instanceof Error ? e.message : String(e);
}

/** The message inside an error body: `{error: {message}}`, `{message}`, `{error: "…"}`, `{detail}`. */
function bodyMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return typeof body === 'string' && body ? body : undefined;
  const b = body as Record<string, unknown>;
  const inner = b.error && typeof b.error === 'object' ? (b.error as Record<string, unknown>).message : b.error;
  const m = inner ?? b.message ?? b.detail;
  return m === undefined || m === null ? undefined : typeof m === 'string' ? m : JSON.stringify(m);
}

/** The server's own error message, from an SDK error or a fetch body, cut short. */
function serverDetail(e: unknown): string {
  let text = '';
  if (e instanceof HttpStatusError) {
    try {
      text = bodyMessage(JSON.parse(e.bodyText)) ?? e.bodyText;
    } catch {
      text = e.bodyText;
    }
  } else if (e instanceof Error) {
    text = bodyMessage((e as { error?: unknown }).error) ?? e.message.replace(/^\d{3}\s*/, '');
    if (/status code \(no body\)/.test(text)) text = '';
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function scrub(text: string, secrets: (string | undefined)[] = []): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('***');
  return redact(out);
}

function toProviderError(e: unknown, attempts: number, opts: RetryOptions): unknown {
  if (e instanceof RagauditError) return e;
  const c = classifyError(e);
  const where = opts.endpoint ? ` from ${redact(opts.endpoint)}` : '';
  // A user abort, or a bug that is not the provider's: let it through as it is.
  if (c.status === undefined && !c.retryable) return e;
  let message: string;
  if (c.retryable) {
    const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
    message = `${opts.provider}: gave up after ${tries}: ${describe(e, c.status)}${where}`;
  } else {
    const hint = (c.status === 401 || c.status === 403) && opts.keyEnv ? ` — check ${opts.keyEnv}` : '';
    message = `${opts.provider}: ${describe(e, c.status)}${where}${hint}`;
  }
  // The cause is kept for debugging unless it may carry a secret (an error body echoing the key).
  const causeText = inspect(e, { depth: 4 });
  const safeCause = scrub(causeText, opts.secrets) === causeText;
  return new ProviderError(scrub(message, opts.secrets), {
    provider: opts.provider,
    ...(c.status !== undefined && { status: c.status }),
    retryable: c.retryable,
    ...(safeCause && { cause: e }),
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
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
}

/**
 * Runs `fn` (given the 1-based attempt number), retrying retryable failures with
 * exponential backoff or the server's Retry-After (capped at `maxRetryAfterMs`).
 * Failures end as a ProviderError whose message never carries a credential.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const minDelay = opts.minDelayMs ?? 500;
  const maxDelay = opts.maxDelayMs ?? 30_000;
  const cap = opts.maxRetryAfterMs ?? 30_000;
  let attempts = 0;
  try {
    return await pRetry(
      (n) => {
        attempts = n;
        return fn(n);
      },
      {
        retries: opts.retries ?? 4,
        // The wait is done in shouldRetry, so Retry-After can replace the backoff.
        minTimeout: 0,
        signal: opts.signal,
        shouldRetry: async ({ error, retriesConsumed }) => {
          const c = classifyError(error);
          if (!c.retryable) return false;
          const backoff = Math.min(maxDelay, minDelay * 2 ** retriesConsumed);
          await sleep(c.retryAfterMs !== undefined ? Math.min(c.retryAfterMs, cap) : backoff, opts.signal);
          return true;
        },
      },
    );
  } catch (e) {
    throw toProviderError(e, attempts, opts);
  }
}

/** Options of {@link postJson}. */
export interface PostJsonOptions {
  /** Name used in messages, e.g. `tei`. */
  provider: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string;
  /** Per-request timeout, ms. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * One JSON POST with a timeout; a non-2xx answer throws an HttpStatusError (classified above).
 * Credentials in the URL become a Basic auth header; `apiKey` is sent as a Bearer token.
 */
export async function postJson(url: string, body: unknown, opts: PostJsonOptions): Promise<unknown> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  // fetch refuses URLs with credentials: send them as Basic auth (an API key wins).
  const target = new URL(url);
  if (target.username || target.password) {
    const user = decodeURIComponent(target.username);
    const pass = decodeURIComponent(target.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    target.username = '';
    target.password = '';
  }
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  const res = await fetch(target, { method: 'POST', headers, body: JSON.stringify(body), signal });
  const text = await res.text();
  if (!res.ok) throw new HttpStatusError(res.status, res.headers, url, text);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderError(`${opts.provider}: invalid JSON from ${redact(url)}: ${redact(text.slice(0, 120))}`, {
      provider: opts.provider,
      status: res.status,
      retryable: false,
    });
  }
}

/**
 * One model call with the retry layer, timing only the attempt that succeeded; shared by the
 * chat clients. `endpoint` is redacted, and `apiKey` is scrubbed from any error message.
 */
export async function timedCall<T>(
  call: () => Promise<T>,
  who: { provider: string; endpoint: string; keyEnv: string; apiKey: string; opts: { retries?: number | undefined; minDelayMs?: number | undefined; maxRetryAfterMs?: number | undefined } },
): Promise<{ value: T; latencyMs: number }> {
  let latencyMs = 0;
  const value = await withRetry(
    async () => {
      const t0 = performance.now();
      const r = await call();
      latencyMs = Math.round(performance.now() - t0);
      return r;
    },
    {
      provider: who.provider,
      endpoint: redact(who.endpoint),
      keyEnv: who.keyEnv,
      secrets: [who.apiKey],
      ...(who.opts.retries !== undefined && { retries: who.opts.retries }),
      ...(who.opts.minDelayMs !== undefined && { minDelayMs: who.opts.minDelayMs }),
      ...(who.opts.maxRetryAfterMs !== undefined && { maxRetryAfterMs: who.opts.maxRetryAfterMs }),
    },
  );
  return { value, latencyMs };
}

/**
 * The HTTP calls of the batch clients, over plain fetch: JSON requests validated with zod, a
 * multipart upload, and JSONL result files read as a stream. Every call runs under the
 * per-request deadline and the project's retry layer (faults.ts decides what is retried), except
 * where a retry could pay twice: a request that creates a batch is retried only when the server
 * certainly did not take it (connection refused, 429).
 */
import type { z } from 'zod';
import { ConfigError, ProviderError, redact, rememberSecrets } from '../../errors.js';
import { REQUEST_DEFAULTS } from '../../setting-defaults.js';
import { answerError, classifyError, describe, toProviderError } from '../faults.js';
import { HttpStatusError, joinUrl, RequestTimeoutError, splitQuery, withDeadline } from '../http.js';
import { sleep as timerSleep, withRetry, type Sleep } from '../retry.js';
import { refuseUrlCredentials, urlSecrets } from '../remote.js';
import type { BatchClientOptions } from './types.js';

/** How one provider's batch endpoints are reached. */
export interface Transport {
  /** Name in messages and errors, e.g. `openai batch`. */
  provider: string;
  /** Origin of the base URL: the only origin the key headers are sent to. */
  origin: string;
  /** Headers carrying the key (sent only to `origin`). */
  authHeaders: Record<string, string>;
  /** Headers sent on every request (e.g. `anthropic-version`). */
  headers: Record<string, string>;
  /** Named in 401/403 messages. */
  keyEnv: string;
  secrets: string[];
  timeoutMs: number;
  retries: number;
  minDelayMs: number;
  maxRetryAfterMs: number;
  sleep: Sleep;
}

export interface TransportSettings {
  provider: string;
  baseURL: string;
  apiKey?: string | undefined;
  authHeaders: Record<string, string>;
  headers?: Record<string, string>;
  keyEnv: string;
  timeoutMs?: number | undefined;
  retries?: number | undefined;
  minDelayMs?: number | undefined;
  maxRetryAfterMs?: number | undefined;
  sleep?: Sleep | undefined;
}

export function transport(s: TransportSettings): Transport {
  rememberSecrets([s.apiKey, ...urlSecrets(s.baseURL)]);
  return {
    provider: s.provider,
    origin: new URL(s.baseURL).origin,
    authHeaders: s.authHeaders,
    headers: s.headers ?? {},
    keyEnv: s.keyEnv,
    secrets: s.apiKey ? [s.apiKey] : [],
    timeoutMs: s.timeoutMs ?? REQUEST_DEFAULTS.timeoutMs,
    retries: s.retries ?? REQUEST_DEFAULTS.retries,
    minDelayMs: s.minDelayMs ?? REQUEST_DEFAULTS.minDelayMs,
    maxRetryAfterMs: s.maxRetryAfterMs ?? REQUEST_DEFAULTS.maxRetryAfterMs,
    sleep: s.sleep ?? timerSleep,
  };
}

/** Where a batch client talks and how: its API root, the root's query string, and the transport. */
export interface Endpoint {
  baseURL: string;
  query: Record<string, string>;
  t: Transport;
}

/**
 * A batch client's endpoint from its settings: the provider's own API unless a base URL is given,
 * a key required for the provider's own API, credentials in the URL refused (say the key instead).
 */
export function openEndpoint(
  opts: BatchClientOptions,
  p: {
    label: string;
    id: string;
    defaultUrl: string;
    keyEnv: string;
    authHeaders: (key: string) => Record<string, string>;
    headers?: Record<string, string>;
  },
): Endpoint {
  const { url, query } = splitQuery(opts.baseURL ?? p.defaultUrl);
  if (!opts.apiKey && !opts.baseURL)
    throw new ConfigError(`${p.label}: no API key given for ${p.id} at ${p.defaultUrl}`);
  refuseUrlCredentials(p.id, url, p.keyEnv);
  const t = transport({
    provider: p.label,
    baseURL: url,
    apiKey: opts.apiKey,
    authHeaders: opts.apiKey ? p.authHeaders(opts.apiKey) : {},
    ...(p.headers ? { headers: p.headers } : {}),
    keyEnv: p.keyEnv,
    timeoutMs: opts.timeoutMs,
    retries: opts.retries,
    minDelayMs: opts.minDelayMs,
    maxRetryAfterMs: opts.maxRetryAfterMs,
    sleep: opts.sleep,
  });
  return { baseURL: url, query, t };
}

type Method = 'GET' | 'POST';
type Body = string | FormData | undefined;

function headersFor(t: Transport, url: string, body: Body): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json', ...t.headers };
  if (typeof body === 'string') h['content-type'] = 'application/json';
  // A URL the server hands back (Anthropic's results_url) gets the key only on the API's own origin.
  if (new URL(url).origin === t.origin) Object.assign(h, t.authHeaders);
  return h;
}

const where = (method: Method, url: string) => `${method} ${url}`;

/** A wire answer that is not in the expected format: a malformed-answer error naming provider and endpoint. */
export function malformed(t: Transport, endpoint: string, detail: string): ProviderError {
  return answerError(t.provider, 'malformed', detail, endpoint);
}

function zodIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}

/** `text` parsed as JSON and checked against `schema`, or a malformed-answer error. */
export function checkJson<S extends z.ZodType>(t: Transport, endpoint: string, text: string, schema: S): z.infer<S> {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw malformed(t, endpoint, `not JSON: ${text.replace(/\s+/g, ' ').slice(0, 60)}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw malformed(t, endpoint, zodIssues(parsed.error));
  return parsed.data;
}

/** True when a failure certainly left nothing behind on the server (the request was not taken). */
function notTaken(e: unknown): boolean {
  if (classifyError(e).status === 429) return true;
  for (let c = e; c != null; c = (c as { cause?: unknown }).cause) {
    if ((c as { code?: unknown }).code === 'ECONNREFUSED') return true;
  }
  return false;
}

async function fetchText(t: Transport, method: Method, url: string, body: Body, signal?: AbortSignal) {
  return withDeadline(
    t.timeoutMs,
    async (sig) => {
      const res = await fetch(url, { method, headers: headersFor(t, url, body), body, signal: sig });
      const text = await res.text();
      if (!res.ok) throw new HttpStatusError(res.status, res.headers, url, text);
      return text;
    },
    signal,
  );
}

export interface CallOptions {
  /**
   * False for a request that creates something that costs (a batch): only a failure that
   * certainly reached nothing is retried, any other ends the call with a message saying so.
   */
  idempotent: boolean;
  signal?: AbortSignal | undefined;
}

/**
 * One JSON request: retried on transient failures (for an idempotent request, the answer's
 * validation too, since a proxy page is transient), its answer checked with `schema`.
 */
export async function callJson<S extends z.ZodType>(
  t: Transport,
  method: Method,
  url: string,
  body: Body,
  schema: S,
  opts: CallOptions,
): Promise<z.infer<S>> {
  const endpoint = where(method, url);
  const retryOpts = {
    provider: t.provider,
    endpoint,
    keyEnv: t.keyEnv,
    secrets: t.secrets,
    retries: t.retries,
    minDelayMs: t.minDelayMs,
    maxRetryAfterMs: t.maxRetryAfterMs,
    sleep: t.sleep,
    ...(opts.signal && { signal: opts.signal }),
  };
  if (opts.idempotent) {
    return withRetry(
      async () => checkJson(t, endpoint, await fetchText(t, method, url, body, opts.signal), schema),
      retryOpts,
    );
  }
  const text = await withRetry(async () => {
    try {
      return await fetchText(t, method, url, body, opts.signal);
    } catch (e) {
      if (notTaken(e)) throw e;
      const c = classifyError(e);
      if (!c.fault) throw e;
      throw new ProviderError(
        redact(
          `${t.provider}: ${describe(e, c.status)} from ${endpoint}; not retried, since the server may have created the batch: look for it in the provider's batch list before submitting again`,
        ),
        { provider: t.provider, ...(c.status !== undefined && { status: c.status }), retryable: false, fault: c.fault },
      );
    }
  }, retryOpts);
  return checkJson(t, endpoint, text, schema);
}

/** Rejects with a RequestTimeoutError (and aborts `ac`) when `p` takes longer than `ms`. */
async function within<T>(p: Promise<T>, ms: number, ac: AbortController): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new RequestTimeoutError(ms);
      reject(err);
      ac.abort(err);
    }, ms);
  });
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The non-blank lines of a JSONL file, read as they arrive (never the whole file in memory).
 * Each read must deliver within the deadline. A download that breaks is started again and the
 * lines already given are skipped (a result file does not change), up to `retries` times.
 */
export async function* jsonlLines(t: Transport, url: string, signal?: AbortSignal): AsyncGenerator<string> {
  const endpoint = where('GET', url);
  let given = 0;
  for (let attempt = 1; ; attempt++) {
    const ac = new AbortController();
    const onOuter = () => ac.abort(signal?.reason);
    signal?.addEventListener('abort', onOuter, { once: true });
    try {
      const res = await within(
        fetch(url, { headers: headersFor(t, url, undefined), signal: ac.signal }),
        t.timeoutMs,
        ac,
      );
      if (!res.ok) throw new HttpStatusError(res.status, res.headers, url, await within(res.text(), t.timeoutMs, ac));
      if (!res.body) return;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      let index = 0;
      for (;;) {
        const { done, value } = await within(reader.read(), t.timeoutMs, ac);
        buf += done ? decoder.decode() : decoder.decode(value, { stream: true });
        const lines = buf.split('\n');
        buf = done ? '' : lines.pop()!;
        for (const line of lines) {
          if (!line.trim()) continue;
          if (index++ < given) continue;
          given++;
          yield line;
        }
        if (done) return;
      }
    } catch (e) {
      const c = classifyError(e);
      if (!c.retryable || attempt > t.retries || signal?.aborted) {
        throw toProviderError(e, attempt, { provider: t.provider, endpoint, keyEnv: t.keyEnv, secrets: t.secrets });
      }
      const backoff = Math.min(REQUEST_DEFAULTS.maxDelayMs, t.minDelayMs * 2 ** (attempt - 1));
      await t.sleep(c.retryAfterMs !== undefined ? Math.min(c.retryAfterMs, t.maxRetryAfterMs) : backoff, signal);
    } finally {
      signal?.removeEventListener('abort', onOuter);
      ac.abort();
    }
  }
}

/** One JSONL line parsed and checked, or a malformed-answer error naming the file and line. */
export function checkLine<S extends z.ZodType>(
  t: Transport,
  url: string,
  lineNo: number,
  line: string,
  schema: S,
): z.infer<S> {
  return checkJson(t, `${where('GET', url)} (line ${lineNo})`, line, schema);
}

/** `base` + `path`, with the base URL's query string (e.g. `api-version`) after the path. */
export function endpointUrl(base: string, query: Readonly<Record<string, string>>, path: string): string {
  const u = new URL(joinUrl(base, path));
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  return u.toString();
}

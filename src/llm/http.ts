/**
 * The project's own HTTP client (rerankers, embedder) and the deadline every provider request
 * runs under, SDK calls included: the whole request — connection, headers and body — must end
 * within `timeoutMs`, so a server that sends headers and then trickles its body cannot hold a
 * case longer than that.
 */
import { STATUS_CODES } from 'node:http';
import { ProviderError, redact } from '../errors.js';

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

/** A request that did not finish (headers and body) within its deadline. */
export class RequestTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`request timed out after ${timeoutMs} ms`);
    this.name = 'RequestTimeoutError';
  }
}

/**
 * Runs `fn` with a signal that aborts after `timeoutMs`, and rejects with a RequestTimeoutError
 * at that moment whether or not `fn` honours the signal (an SDK that stops watching its timer once
 * the headers arrive, a body read that never ends). `outer` cancels it too.
 */
export async function withDeadline<T>(
  timeoutMs: number,
  fn: (signal: AbortSignal) => Promise<T>,
  outer?: AbortSignal,
): Promise<T> {
  const ac = new AbortController();
  const onOuter = () => ac.abort(outer?.reason);
  if (outer?.aborted) onOuter();
  outer?.addEventListener('abort', onOuter, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new RequestTimeoutError(timeoutMs);
      reject(err);
      ac.abort(err);
    }, timeoutMs);
  });
  try {
    return await Promise.race([fn(ac.signal), deadline]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuter);
  }
}

/**
 * `base` + `path`, keeping the base's query string after the path
 * (`http://h/v1?api-version=x` + `/embeddings` → `http://h/v1/embeddings?api-version=x`).
 * `path` is not added when the base already ends with it, or with its version prefix
 * (`http://h/v1` + `/v1/rerank` → `http://h/v1/rerank`).
 */
export function joinUrl(base: string, path: string): string {
  let u: URL;
  try {
    u = new URL(base);
  } catch {
    return base.replace(/\/+$/, '') + path;
  }
  const root = u.pathname.replace(/\/+$/, '');
  const version = /^\/v\d+(?=\/)/.exec(path)?.[0];
  if (root.endsWith(path)) u.pathname = root;
  else if (version && root.endsWith(version)) u.pathname = root + path.slice(version.length);
  else u.pathname = root + path;
  return u.toString();
}

/** Splits a base URL into the URL without query string and its query parameters. */
export function splitQuery(base: string): { url: string; query: Record<string, string> } {
  try {
    const u = new URL(base);
    const query = Object.fromEntries(u.searchParams);
    u.search = '';
    return { url: u.toString().replace(/\/+$/, ''), query };
  } catch {
    return { url: base, query: {} };
  }
}

/** `host:port` of a URL (the scheme's default port made explicit), for messages; never credentials. */
export function hostPort(url: string): string {
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
    return port ? `${u.hostname}:${port}` : u.hostname;
  } catch {
    return redact(url);
  }
}

/** Options of {@link postJson} and {@link getJson}. */
export interface PostJsonOptions {
  /** Name used in messages, e.g. `tei`. */
  provider: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string;
  /** Deadline of the whole request (headers and body), ms. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Extra request headers (a deployed bot's own authentication); their values are never put in messages. */
  headers?: Record<string, string>;
}

/**
 * One JSON request under a deadline; a non-2xx answer throws an HttpStatusError, a 2xx that is
 * not JSON a ProviderError (fault `answer`; an empty 2xx answer to a DELETE is `undefined`). Credentials in the URL become a Basic auth header;
 * `apiKey` is sent as a Bearer token (it wins over URL credentials).
 */
export async function requestJson(
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  body: unknown,
  opts: PostJsonOptions,
): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method === 'POST') headers['content-type'] = 'application/json';
  for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = v;
  // fetch refuses URLs with credentials: send them as Basic auth.
  const target = new URL(url);
  if (target.username || target.password) {
    const user = decodeURIComponent(target.username);
    const pass = decodeURIComponent(target.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    target.username = '';
    target.password = '';
  }
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  const { status, ok, resHeaders, text } = await withDeadline(
    opts.timeoutMs,
    async (signal) => {
      const res = await fetch(target, {
        method,
        headers,
        ...(method === 'POST' && { body: JSON.stringify(body) }),
        signal,
      });
      return { status: res.status, ok: res.ok, resHeaders: res.headers, text: await res.text() };
    },
    opts.signal,
  );
  if (!ok) throw new HttpStatusError(status, resHeaders, url, text);
  // A deletion may answer 200 or 204 with no body at all (Discourse's DELETE /t/ID.json does).
  if (method === 'DELETE' && !text.trim()) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // A proxy's HTML page with status 200: malformed, worth another try.
    throw new ProviderError(`${opts.provider}: invalid JSON from ${redact(url)}: ${redact(text.slice(0, 120))}`, {
      provider: opts.provider,
      status,
      retryable: true,
      fault: 'answer',
    });
  }
}

/** One JSON POST under a deadline (see {@link requestJson}). */
export function postJson(url: string, body: unknown, opts: PostJsonOptions): Promise<unknown> {
  return requestJson('POST', url, body, opts);
}

/**
 * What a provider failure means: whether another attempt could help, and which fault it is for
 * the runner (src/errors.ts ProviderFault). One rule per line, with its reason:
 * - no answer at all (refused, reset, DNS, TLS, deadline)  → `connection`; retried unless DNS/TLS;
 * - 401/403                                                → `auth`, not retried (the key is wrong);
 * - an exhausted quota or unpaid bill (OpenAI `insufficient_quota`, Anthropic credit/billing, 402)
 *                                                          → `quota`, not retried (waiting won't help);
 * - 404 naming a model, 400 `model_not_found`              → `model`, not retried;
 * - 408 request timeout, 409 lock timeout, 429 rate limit, 5xx → retried, then `server`;
 * - any other 4xx                                          → `client`, not retried;
 * - a server's `x-should-retry: true|false` header overrides the status rule (it knows best).
 */
import { STATUS_CODES } from 'node:http';
import { inspect } from 'node:util';
import { ProviderError, RagauditError, redact, type ProviderFault } from '../errors.js';
import { HttpStatusError, RequestTimeoutError } from './http.js';

/** How a failure should be treated. */
export interface ErrorClass {
  status?: number;
  retryable: boolean;
  /** The server's Retry-After (or retry-after-ms), ms, uncapped. */
  retryAfterMs?: number;
  /** Undefined for failures that are not the provider's (a bug, a user abort). */
  fault?: ProviderFault;
}

const RETRYABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
/** Connection failures another attempt will not fix: the name does not resolve, the certificate is refused. */
const FINAL_CONNECTION_CODES =
  /^(ENOTFOUND|CERT_|ERR_TLS_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET|VERIFY)_|ERR_SSL_|EPROTO)/;
const RETRYABLE_MESSAGES = /socket hang up|fetch failed|^terminated$|other side closed/i;
const QUOTA = /insufficient_quota|billing|credit balance|exceeded your current quota|quota exceeded/i;
const MODEL_404 = /model/i;
const MODEL_400 = /model_not_found|model\W[^.]{0,120}\b(does not exist|not found|unknown)|unknown model|no such model/i;

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Parses `retry-after-ms`, then `retry-after` (seconds or an HTTP date), into ms. */
export function retryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const ra = header(headers, 'retry-after')?.trim();
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Number(ra) * 1000;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function header(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const v = (headers as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
}

function causes(e: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let c = e; c != null && chain.length < 6; c = (c as { cause?: unknown }).cause) chain.push(c);
  return chain;
}

/** An SDK's error classes the fault kinds depend on (both SDKs export them under these names). */
interface SdkErrorClasses {
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIUserAbortError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
}

/**
 * The error classes of every SDK loaded so far. The SDKs are loaded on first use (src/llm/openai.ts,
 * anthropic.ts), and an SDK that was never loaded threw nothing, so checking the loaded ones is enough.
 */
const sdkErrors = new Set<SdkErrorClasses>();

/** Called by a client when it loads its SDK's module. */
export function registerSdkErrors(mod: SdkErrorClasses): void {
  sdkErrors.add(mod);
}

/**
 * An SDK's module, loaded once per process and its error classes registered: by the first
 * client, or earlier by the chat provider's preload (src/providers/chat.ts) while a command
 * opens its database.
 */
export function sdkModule<M extends SdkErrorClasses>(load: () => Promise<M>): () => Promise<M> {
  let loaded: Promise<M> | undefined;
  return () =>
    (loaded ??= load().then((mod) => {
      registerSdkErrors(mod);
      return mod;
    }));
}

const isSdk = (e: unknown, kind: keyof SdkErrorClasses) => [...sdkErrors].some((m) => e instanceof m[kind]);

function isSdkConnectionError(e: unknown): boolean {
  return isSdk(e, 'APIConnectionError');
}

function isSdkUserAbort(e: unknown): boolean {
  return isSdk(e, 'APIUserAbortError');
}

function isTimeout(e: unknown): boolean {
  return (
    e instanceof RequestTimeoutError ||
    isSdk(e, 'APIConnectionTimeoutError') ||
    (e instanceof Error && e.name === 'TimeoutError')
  );
}

/** The error body as text: a fetch body, or what an SDK error kept of it (`error`, `code`, `type`). */
function bodyText(e: unknown): string {
  if (e instanceof HttpStatusError) return e.bodyText;
  const x = e as { error?: unknown; code?: unknown; type?: unknown; message?: unknown };
  return JSON.stringify({
    error: x.error ?? null,
    code: x.code ?? null,
    type: x.type ?? null,
    message: x.message ?? null,
  });
}

/** The fault of an HTTP error status, given its body. */
export function statusFault(status: number, body: string): ProviderFault {
  if (status < 500 && (status === 402 || QUOTA.test(body))) return 'quota';
  if (status === 401 || status === 403) return 'auth';
  if ((status === 404 && MODEL_404.test(body)) || (status === 400 && MODEL_400.test(body))) return 'model';
  if (isRetryableStatus(status)) return 'server';
  return 'client';
}

/** Says whether a failure is worth retrying, with its HTTP status, Retry-After and fault when known. */
export function classifyError(e: unknown): ErrorClass {
  if (e instanceof ProviderError) {
    return {
      retryable: e.details.retryable,
      ...(e.details.status !== undefined && { status: e.details.status }),
      ...(e.details.fault && { fault: e.details.fault }),
    };
  }
  if (e instanceof RagauditError || isSdkUserAbort(e)) return { retryable: false };
  if (isTimeout(e)) return { retryable: true, fault: 'connection' };
  const status = (e as { status?: unknown } | null)?.status;
  if (typeof status === 'number') {
    const headers = (e as { headers?: unknown }).headers;
    const fault = statusFault(status, bodyText(e));
    const veto = header(headers, 'x-should-retry');
    const retryable =
      veto === 'true' ? true : veto === 'false' ? false : isRetryableStatus(status) && fault !== 'quota';
    const retryAfter = retryAfterMs(headers);
    return { status, retryable, fault, ...(retryAfter !== undefined && { retryAfterMs: retryAfter }) };
  }
  for (const c of causes(e)) {
    if (!(c instanceof Error)) continue;
    if (c.name === 'AbortError') return { retryable: false };
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string' && RETRYABLE_CODES.has(code)) return { retryable: true, fault: 'connection' };
    if (typeof code === 'string' && FINAL_CONNECTION_CODES.test(code)) return { retryable: false, fault: 'connection' };
    if (RETRYABLE_MESSAGES.test(c.message)) return { retryable: true, fault: 'connection' };
  }
  if (isSdkConnectionError(e)) return { retryable: true, fault: 'connection' };
  return { retryable: false };
}

/** A short, human description of what went wrong, without secrets. */
export function describe(e: unknown, status: number | undefined): string {
  if (status !== undefined) {
    const detail = serverDetail(e);
    return `${status} ${STATUS_CODES[status] ?? 'Error'}${detail ? ` (${detail})` : ''}`;
  }
  if (e instanceof RequestTimeoutError) return e.message;
  if (isTimeout(e)) return 'request timed out';
  for (const c of causes(e)) {
    const code = (c as { code?: unknown }).code;
    if (code === 'ECONNREFUSED') return 'connection refused';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `host name not found (${code})`;
    if (typeof code === 'string' && FINAL_CONNECTION_CODES.test(code)) return `TLS error (${code})`;
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
  // Masked before it is cut short: half a token no longer has a token's shape.
  text = redact(text.replace(/\s+/g, ' ').trim());
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** `text` without the given secrets nor any registered or recognisable credential. */
export function scrub(text: string, secrets: (string | undefined)[] = []): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('***');
  return redact(out);
}

/** Where the failure happened and what to check, for {@link toProviderError}. */
export interface FailureContext {
  provider: string;
  endpoint?: string | undefined;
  keyEnv?: string | undefined;
  secrets?: (string | undefined)[] | undefined;
}

/**
 * The ProviderError a failure ends as (a ProviderError or another project error is returned as
 * is; a failure that is not the provider's — a bug, a user abort — too).
 */
export function toProviderError(e: unknown, attempts: number, ctx: FailureContext): unknown {
  if (e instanceof RagauditError) return e;
  const c = classifyError(e);
  if (!c.fault) return e;
  const where = ctx.endpoint ? ` from ${redact(ctx.endpoint)}` : '';
  let message: string;
  if (c.retryable) {
    const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
    message = `${ctx.provider}: gave up after ${tries}: ${describe(e, c.status)}${where}`;
  } else {
    const hint = c.fault === 'auth' && ctx.keyEnv ? ` — check ${ctx.keyEnv}` : '';
    message = `${ctx.provider}: ${describe(e, c.status)}${where}${hint}`;
  }
  // The cause is kept for debugging unless it may carry a secret (an error body echoing the key).
  const causeText = inspect(e, { depth: 4 });
  const safeCause = scrub(causeText, ctx.secrets) === causeText;
  return new ProviderError(scrub(message, ctx.secrets), {
    provider: ctx.provider,
    ...(c.status !== undefined && { status: c.status }),
    retryable: c.retryable,
    fault: c.fault,
    ...(safeCause && { cause: e }),
  });
}

/** Why an answer that arrived is not an answer. */
export type AnswerProblem = 'empty' | 'truncated' | 'refused' | 'malformed';

/**
 * The error for a 2xx whose answer is unusable (fault `answer`). Empty and malformed answers are
 * retried (an overloaded server or a proxy page); truncated and refused ones are not (the same
 * request gets the same answer).
 */
export function answerError(provider: string, problem: AnswerProblem, detail: string, endpoint: string): ProviderError {
  const what = {
    empty: 'empty answer',
    truncated: 'answer truncated',
    refused: 'the model refused',
    malformed: 'malformed answer',
  }[problem];
  return new ProviderError(`${provider}: ${what} (${redact(detail)}) from ${redact(endpoint)}`, {
    provider,
    status: 200,
    retryable: problem === 'empty' || problem === 'malformed',
    fault: 'answer',
  });
}

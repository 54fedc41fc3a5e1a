/**
 * The check each remote component runs before the first case: one cheap request under a short
 * deadline, no retries. A service that cannot be reached, refuses the key or does not know the
 * model ends the command within seconds with a plain sentence (ConfigError, exit 2) naming the
 * component and host:port — never the key — instead of failing every case.
 */
import { ConfigError, ProviderError } from '../errors.js';
import { classifyError, describe, scrub, toProviderError } from './faults.js';
import { hostPort, withDeadline } from './http.js';

/** Deadline of a preflight request, ms (the component's own timeout when shorter). */
export const PREFLIGHT_TIMEOUT_MS = 10_000;

/** Who is being checked, for messages. */
export interface PreflightTarget {
  /** e.g. `openai:gpt-4o-mini`, `tei reranker`. */
  component: string;
  url: string;
  keyEnv?: string | undefined;
  secrets: (string | undefined)[];
  /** The component's per-request timeout, ms. */
  timeoutMs?: number | undefined;
}

export function preflightDeadline(t: PreflightTarget): number {
  return Math.min(PREFLIGHT_TIMEOUT_MS, t.timeoutMs ?? PREFLIGHT_TIMEOUT_MS);
}

/** `COMPONENT at HOST:PORT`. */
export function where(t: PreflightTarget): string {
  return `${t.component} at ${hostPort(t.url)}`;
}

/**
 * The error a failed preflight request ends the command with: ConfigError for what no case
 * could get past (connection, credentials, model, quota), else the ProviderError it is.
 */
export function preflightError(t: PreflightTarget, e: unknown): unknown {
  if (e instanceof ConfigError) return e;
  const c = classifyError(e);
  if (!c.fault) return e;
  const detail = scrub(e instanceof ProviderError ? e.message : describe(e, c.status), t.secrets);
  const at = where(t);
  switch (c.fault) {
    case 'connection':
      return new ConfigError(`${at} cannot be reached: ${detail}. Check the URL and that the server is running.`);
    case 'auth':
      return new ConfigError(`${at} refused the credentials: ${detail}.${t.keyEnv ? ` Check ${t.keyEnv} or the api_key setting.` : ''}`);
    case 'model':
      return new ConfigError(`${at} does not serve the configured model: ${detail}.`);
    case 'quota':
      return new ConfigError(`${at} says the quota is exhausted: ${detail}.`);
    default:
      return toProviderError(e, 1, { provider: t.component, endpoint: t.url, keyEnv: t.keyEnv, secrets: t.secrets });
  }
}

/** Runs one preflight request under the preflight deadline; failures as {@link preflightError}. */
export async function probe<T>(t: PreflightTarget, fn: (signal: AbortSignal, timeoutMs: number) => Promise<T>): Promise<T> {
  const ms = preflightDeadline(t);
  try {
    return await withDeadline(ms, (signal) => fn(signal, ms));
  } catch (e) {
    throw preflightError(t, e);
  }
}

/**
 * Runs a listing request that a server may not have (404/405/501 → undefined, so the caller
 * falls back to a tiny real request); other failures as {@link preflightError}.
 */
export async function probeOptional<T>(t: PreflightTarget, fn: (signal: AbortSignal, timeoutMs: number) => Promise<T>): Promise<T | undefined> {
  const ms = preflightDeadline(t);
  try {
    return await withDeadline(ms, (signal) => fn(signal, ms));
  } catch (e) {
    const status = classifyError(e).status;
    if (status === 404 || status === 405 || status === 501) return undefined;
    throw preflightError(t, e);
  }
}

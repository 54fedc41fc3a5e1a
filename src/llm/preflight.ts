/**
 * The check each remote component runs before the first case: one cheap request under a short
 * deadline, no retries. A service that cannot be reached, refuses the key or does not know the
 * model ends the command within seconds with a plain sentence (ConfigError, exit 2) naming the
 * component and host:port — never the key — instead of failing every case.
 */
import { ConfigError, ProviderError } from '../errors.js';
import { classifyError, describe, scrub } from './faults.js';
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
 * The error a failed preflight request ends the command with: a ConfigError for what no case
 * could get past (connection, credentials, model, quota); a failure that is not the provider's
 * (a bug) as it is; undefined for the rest (a 5xx, another 4xx, an odd answer), which the run's
 * own retries and per-case errors deal with — the check is inconclusive, not failed.
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
      return new ConfigError(
        `${at} refused the credentials: ${detail}.${t.keyEnv ? ` Check ${t.keyEnv} or the api_key setting.` : ''}`,
      );
    case 'model':
      return new ConfigError(`${at} does not serve the configured model: ${detail}.`);
    case 'quota':
      return new ConfigError(`${at} says the quota is exhausted: ${detail}.`);
    default:
      return undefined;
  }
}

/** What a preflight request gave: its value, or the HTTP status of an inconclusive failure. */
export type ProbeResult<T> = { ok: true; value: T } | { ok: false; status?: number | undefined };

/**
 * Runs one preflight request under the preflight deadline, no retries; throws what
 * {@link preflightError} makes fatal. `optional`: a listing route the server may lack
 * (404/405/501 is then inconclusive, so the caller falls back to a tiny real request).
 */
export async function probe<T>(
  t: PreflightTarget,
  fn: (signal: AbortSignal, timeoutMs: number) => Promise<T>,
  opts: { optional?: boolean } = {},
): Promise<ProbeResult<T>> {
  const ms = preflightDeadline(t);
  try {
    return { ok: true, value: await withDeadline(ms, (signal) => fn(signal, ms)) };
  } catch (e) {
    const status = classifyError(e).status;
    if (opts.optional && (status === 404 || status === 405 || status === 501)) return { ok: false, status };
    const fatal = preflightError(t, e);
    if (fatal) throw fatal;
    return { ok: false, status };
  }
}

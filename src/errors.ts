/**
 * The project's error classes. Library code throws these; only the CLI turns them
 * into messages and exit codes (2 for bad input or config, 1 for failed work).
 */
export class RagauditError extends Error {
  /** Exit code the CLI uses when this error ends a command. */
  readonly exitCode: number = 1;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A problem in a config file: every problem is listed as `file:line: path: message`. */
export class ConfigError extends RagauditError {
  override readonly exitCode = 2;
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(problems.length ? `${message}\n${problems.map((p) => `  ${p}`).join('\n')}` : message);
  }
}

/** A problem in an input file (cases, probes, results, qrels, runs) or an argument. */
export class InputError extends RagauditError {
  override readonly exitCode = 2;
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(problems.length ? `${message}\n${problems.map((p) => `  ${p}`).join('\n')}` : message);
  }
}

/** The database could not be reached or refused a query. Names host:port, never the password. */
export class DatabaseError extends RagauditError {
  override readonly exitCode = 2;
}

/**
 * What went wrong with a provider call, as the runner needs to know it:
 * - `connection`: refused, DNS, TLS, reset, or a request that hit its deadline (the server is not
 *   answering); several in a row trip the run's circuit breaker;
 * - `auth` (401/403), `quota` (quota exhausted, or a Retry-After far beyond the cap), `model`
 *   (the server does not know the model): every later case would fail the same way, so the run
 *   stops once with one message;
 * - `answer`: the server answered, but the answer is empty, truncated, refused or malformed;
 * - `server` (5xx after retries), `client` (other 4xx): this case fails, the run goes on.
 */
export type ProviderFault = 'connection' | 'auth' | 'quota' | 'model' | 'answer' | 'server' | 'client';

/** Faults that every later request would meet too: the run stops at the first one. */
export const RUN_WIDE_FAULTS: ReadonlySet<ProviderFault> = new Set(['auth', 'quota', 'model']);

/**
 * A model or reranker server failed after retries (or at once, for 4xx other than 408/409/429).
 * `status` is the HTTP status when there was one; `retryable` says whether retrying could help;
 * `fault` classifies it for the runner (circuit breaker, run-wide stop).
 */
export class ProviderError extends RagauditError {
  constructor(
    message: string,
    readonly details: { provider: string; status?: number; retryable: boolean; fault?: ProviderFault; cause?: unknown },
  ) {
    super(message, { cause: details.cause });
  }
}

/** A judge answered, but not in the schema, even after one retry with the error shown. */
export class JudgeParseError extends RagauditError {
  constructor(
    message: string,
    readonly raw: string,
  ) {
    super(message);
  }
}

/**
 * Query parameters that carry credentials: the usual names, Azure's `api-key`, OAuth's
 * `access-token`/`access_token`, signed URLs' `sig`/`signature`, and `auth`.
 */
export const SECRET_PARAMS = [
  'password',
  'passwd',
  'key',
  'api_key',
  'api-key',
  'apikey',
  'access_token',
  'access-token',
  'token',
  'secret',
  'client_secret',
  'sig',
  'signature',
  'auth',
  'x-api-key',
];

/** True when a query parameter name carries a credential (case-insensitive). */
export function isSecretParam(name: string): boolean {
  return SECRET_PARAMS.includes(name.toLowerCase());
}

/**
 * Secret values in use in this process (API keys, database passwords, tokens in URLs), registered
 * once when a config is loaded or a provider is built. `redact` removes each of them by value,
 * wherever it appears, so a key a server echoes back in an error or an answer never reaches an
 * output. Process-wide on purpose: every output path already goes through `redact`.
 */
const secretValues = new Set<string>();

/** Registers secret values for `redact` (values shorter than 6 characters are ignored). */
export function rememberSecrets(values: Iterable<string | undefined>): void {
  for (const v of values) {
    if (typeof v !== 'string' || v.length < 6) continue;
    secretValues.add(v);
    const encoded = encodeURIComponent(v);
    if (encoded !== v) secretValues.add(encoded);
  }
}

/**
 * True when `text` carries a secret value: one registered with {@link rememberSecrets}, or one of
 * `extra` (values shorter than 6 characters are ignored, as when registering). The one rule every
 * output is checked against before it is written.
 */
export function carriesSecret(text: string, extra: readonly (string | undefined)[] = []): boolean {
  for (const v of secretValues) if (text.includes(v)) return true;
  return extra.some((v) => typeof v === 'string' && v.length >= 6 && text.includes(v));
}

/**
 * Removes the registered secret values only (no rewriting by form): for text that is not a
 * message but content, such as a model's answer, which must lose an echoed key and nothing else.
 */
export function redactSecretValues(text: string): string {
  for (const v of secretValues) if (text.includes(v)) text = text.split(v).join('***');
  return text;
}

const SECRET_PARAM_RE = new RegExp(
  `([?&](?:${SECRET_PARAMS.map((p) => p.replace(/[-_]/g, '[-_]')).join('|')})=)[^&#\\s"']+`,
  'gi',
);

/** Removes credentials from a URL or a message that may carry one, by form and by value. */
export function redact(text: string): string {
  return (
    redactSecretValues(text)
      // user:password@host — up to the last '@' before the host, since a password may hold '@'.
      .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^\s/]*@/gi, '$1***@')
      // A token as the user name of a web URL (https://TOKEN@host); database user names stay.
      .replace(/(\bhttps?:\/\/)[^:/@\s*]+@/gi, '$1***@')
      .replace(SECRET_PARAM_RE, '$1***')
      .replace(/\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}/g, '$1-***')
      .replace(/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1***')
      .replace(/((?:api[_-]?key|password|token|secret)["']?\s*[:=]\s*["']?)[^"'\s,}&#]+/gi, '$1***')
  );
}

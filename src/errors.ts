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
 * Words that make a query parameter's name a credential, matched against the name split at `-`,
 * `_`, `.` and camelCase: `api-key`, `subscription-key`, `access_token`, `client_secret`,
 * `X-Amz-Signature`, Azure Functions' `code`, Azure SAS's `sig`, `auth`, `password` …
 */
const CREDENTIAL_WORDS = new Set([
  'key',
  'apikey',
  'token',
  'secret',
  'signature',
  'sig',
  'code',
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'auth',
  'authorization',
  'credential',
  'credentials',
  'jwt',
  'session',
  'otp',
]);

/** Names written run together that end in a credential (`accesstoken`, `clientsecret`, `subscriptionkey`). */
const CREDENTIAL_ENDING =
  /(?:apikey|accesskey|secretkey|authkey|privatekey|subscriptionkey|token|secret|password|passwd|signature|credentials?)$/;

/** Signed-URL families whose every parameter is masked (AWS SigV4 `X-Amz-*`, Google V4 `X-Goog-*`). */
const SIGNED_URL_FAMILY = /^x-(?:amz|goog)-/i;

/**
 * True when a query parameter's name says it carries a credential (case-insensitive): by its
 * words ({@link CREDENTIAL_WORDS}), a run-together ending, or the `X-Amz-*` / `X-Goog-*` family.
 * The name alone decides: `?code=` is masked in a URL, the word "code" in prose is not.
 */
export function isSecretParam(name: string): boolean {
  if (SIGNED_URL_FAMILY.test(name)) return true;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((w) => CREDENTIAL_WORDS.has(w) || CREDENTIAL_ENDING.test(w));
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

/*
 * The masking rules. Every character class stops at a quote, a backslash and `<>`, so a rule
 * applied to serialised JSON or HTML stays inside one string or attribute and never breaks the
 * document. Each starts with its literal (a regex that starts with a look-behind is tried at
 * every position: ~30 times slower over a results file).
 */

/**
 * Values shaped like a known kind of token, masked wherever they appear: each rule and how many
 * characters of its prefix are kept, to say what the masked value was.
 */
const TOKEN_SHAPES: readonly [RegExp, number][] = [
  // OpenAI, Anthropic and similar secret keys (sk-…, sk-proj-…, sk-ant-…): random, so holding a
  // digit, and long; a slug such as `sk-ii-skincare` is no key.
  [/(?:sk|pk|rk)-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{16,}/g, 3],
  // GitHub tokens: personal (ghp_), OAuth (gho_), user-to-server (ghu_), server (ghs_), refresh (ghr_).
  [/gh[pousr]_[A-Za-z0-9]{20,}/g, 4],
  [/github_pat_[A-Za-z0-9_]{20,}/g, 11],
  // AWS access key ids: long-term (AKIA) and temporary (ASIA), 20 characters.
  [/(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g, 4],
  // Slack tokens (xoxb-, xoxp-, xoxa-, xoxe- …): the prefix, a numeric part, then the rest.
  [/xox[a-z]-[0-9]+-[A-Za-z0-9-]{8,}/g, 5],
  // A JWT: base64url header and payload (both JSON objects, so both start `eyJ`) and a signature.
  [/eyJ[A-Za-z0-9_-]{2,}\.eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/g, 0],
];

const WORD_CHAR = /[A-Za-z0-9_]/;

/**
 * Whether a token found at `at` starts a word: after a character that is not a letter, digit or
 * `_`, or after a JSON escape (`\n`, `\t` …), since writers also mask serialised JSON.
 */
function startsWord(text: string, at: number): boolean {
  if (at === 0 || !WORD_CHAR.test(text[at - 1]!)) return true;
  return at >= 2 && text[at - 2] === '\\' && 'nrtbf'.includes(text[at - 1]!);
}

/** `://user:password@` of any URL: up to the last '@' before the path, since a password may hold '@'. */
const USERINFO_PASSWORD = /(:\/\/[^:/@\s"'<>\\]*:)[^\s/"'<>\\]*@/g;
/** A token as the user name of a web URL (https://TOKEN@host); database user names stay. */
const USERINFO_TOKEN = /(https?:\/\/)[^:/@\s*"'<>\\]+@/gi;
/** A query parameter (also HTML-escaped, `&amp;name=`): its value is masked when its name says credential. */
const QUERY_PARAM = /([?&](?:amp;)?)([A-Za-z0-9_.%~-]+)=([^&#\s"'<>\\)\]]+)/g;
/** What a text needs to hold for a rule by form to apply (most text is passed over after one scan). */
const SUSPECT_CONTENT = /:\/\/|[?&][A-Za-z0-9_.%~-]+=|(?:sk|pk|rk)-|gh[pousr]_|github_pat_|A[KS]IA|xox[a-z]-|eyJ/;
const SUSPECT_MESSAGE =
  /:\/\/|[?&][A-Za-z0-9_.%~-]+=|(?:sk|pk|rk)-|gh[pousr]_|github_pat_|A[KS]IA|xox[a-z]-|eyJ|bearer|key|password|token|secret/i;

function paramName(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * How {@link redact} reads a text:
 * - `message` (errors, URLs, anything a program wrote): every rule, including `Bearer …` and
 *   `api_key: …` / `password=…` pairs, which a server's error body may echo;
 * - `content` (a model's answer, a forum passage, a whole output file): registered values, URL
 *   credentials, credential query parameters and token shapes only, so prose that merely says
 *   "token: …" or "Bearer" is left as it is.
 */
export type RedactMode = 'message' | 'content';

/**
 * The one masking function every output goes through: registered secret values, a URL's
 * password or token user name, the value of every query parameter whose name says credential
 * ({@link isSecretParam}), and values shaped like a known token ({@link TOKEN_SHAPES}).
 * Idempotent; a text with nothing to mask comes back as it was.
 */
export function redact(text: string, mode: RedactMode = 'message'): string {
  for (const v of secretValues) if (text.includes(v)) text = text.split(v).join('***');
  if (!(mode === 'content' ? SUSPECT_CONTENT : SUSPECT_MESSAGE).test(text)) return text;
  text = text
    .replace(USERINFO_PASSWORD, '$1***@')
    .replace(USERINFO_TOKEN, '$1***@')
    .replace(QUERY_PARAM, (m, lead: string, name: string) =>
      isSecretParam(paramName(name)) ? `${lead}${name}=***` : m,
    );
  for (const [re, keep] of TOKEN_SHAPES)
    text = text.replace(re, (m: string, at: number, whole: string) =>
      startsWord(whole, at) ? `${m.slice(0, keep)}***` : m,
    );
  if (mode === 'content') return text;
  return text
    .replace(/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1***')
    .replace(/((?:api[_-]?key|password|token|secret)["']?\s*[:=]\s*["']?)[^"'\s,}&#]+/gi, '$1***');
}

/**
 * `value` with {@link redact} applied to every string inside it (object keys stay), for a
 * structured output (a case record, a cached answer) before it is serialised. Copy on write:
 * a value with nothing to mask is returned as it is, the same object.
 */
export function redactDeep<T>(value: T, mode: RedactMode = 'content'): T {
  if (typeof value === 'string') return redact(value, mode) as T;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const x: unknown = value[i];
      const y = redactDeep(x, mode);
      if (y !== x) (out ??= value.slice())[i] = y;
    }
    return (out ?? value) as T;
  }
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    let out: Record<string, unknown> | undefined;
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const x = o[k];
      const y = redactDeep(x, mode);
      if (y !== x) (out ??= { ...o })[k] = y;
    }
    return (out ?? value) as T;
  }
  return value;
}

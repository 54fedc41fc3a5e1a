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
 * A model or reranker server failed after retries (or at once, for 4xx other than 408/409/429).
 * `status` is the HTTP status when there was one; `retryable` says whether retrying could help.
 */
export class ProviderError extends RagauditError {
  constructor(
    message: string,
    readonly details: { provider: string; status?: number; retryable: boolean; cause?: unknown },
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

/** Query parameters that carry credentials. */
export const SECRET_PARAMS = ['password', 'key', 'api_key', 'apikey', 'access_token', 'token', 'secret'];

/** Removes credentials from a URL or a message that may carry one. */
export function redact(text: string): string {
  return text
    // user:password@host — up to the last '@' before the host, since a password may hold '@'.
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^\s/]*@/gi, '$1***@')
    .replace(new RegExp(`([?&](?:${SECRET_PARAMS.join('|')})=)[^&#\\s"']+`, 'gi'), '$1***')
    .replace(/\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}/g, '$1-***')
    .replace(/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1***')
    .replace(/((?:api[_-]?key|password|token|secret)["']?\s*[:=]\s*["']?)[^"'\s,}]+/gi, '$1***');
}

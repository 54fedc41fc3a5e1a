import { DatabaseError, redact } from '../errors.js';

/**
 * Database failures in words. PostgreSQL's own messages are already sentences
 * (`password authentication failed for user "auditor"`); they are kept, followed by what to check
 * and the SQLSTATE (or the network error code) in parentheses, so a user never has to look up
 * `28P01` and a support thread can still search for it. Nothing here ever prints the URL's password:
 * the label is credential-free and every message goes through `redact`.
 */

/** What to check, per SQLSTATE (PostgreSQL Appendix A). */
const HINTS: Record<string, string> = {
  '28P01': 'check the user name and password in the database URL',
  '28000': 'check the user name in the database URL and that pg_hba.conf lets it in from here',
  '3D000': 'check the database name at the end of the URL',
  '53300': 'the server has no free connection slot; lower the concurrency or raise max_connections',
  '57P03': 'the server is starting up or shutting down; try again in a moment',
  '42501': 'the database user lacks the privilege to read this; grant it SELECT',
};

/** Network and client-side failures, per Node or driver error code. */
const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing is listening there (is PostgreSQL running, on this host and port?)',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name could not be resolved (DNS lookup failed)',
  ETIMEDOUT: 'the network did not answer in time',
  ECONNRESET: 'the server closed the connection',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'the connection was closed while writing',
};

interface DriverError {
  code?: string;
  message?: string;
}

/** One sentence ending in `(CODE)` for an error thrown by pg or PGlite. */
export function describeDbFailure(
  e: unknown,
  opts: { statementTimeoutMs?: number; connectTimeoutMs?: number } = {},
): string {
  const err = (e ?? {}) as DriverError;
  const message = redact(String(err.message ?? e))
    .replace(/\s+/g, ' ')
    .trim();
  const code = typeof err.code === 'string' ? err.code : undefined;
  if (code && NETWORK[code]) return `${NETWORK[code]} (${code})`;
  if (code === '57014' && /statement timeout/i.test(message)) {
    const limit = opts.statementTimeoutMs ? ` of ${opts.statementTimeoutMs} ms (database.statement_timeout_ms)` : '';
    return `the query ran longer than the statement timeout${limit} and was cancelled by the server (57014)`;
  }
  if (code === '42601' && /multiple commands/i.test(message))
    return 'one statement per query: the text holds several statements, which the audit never sends (42601)';
  if (code && /^[0-9A-Z]{5}$/.test(code)) return `${message}${HINTS[code] ? `: ${HINTS[code]}` : ''} (${code})`;
  if (/timeout exceeded when trying to connect|connection timeout/i.test(message)) {
    const within = opts.connectTimeoutMs ? ` within ${opts.connectTimeoutMs} ms` : '';
    return `no answer${within} while connecting (connection timeout)`;
  }
  if (/client password must be a string/i.test(message))
    return 'the server asks for a password and the URL gives none (SASL)';
  if (/Connection terminated/i.test(message)) return `the server closed the connection (${message})`;
  return code ? `${message} (${code})` : message;
}

/** The connection could not be opened (refused, DNS, authentication, no such database…). */
export function connectFailure(label: string, e: unknown, connectTimeoutMs?: number): DatabaseError {
  return new DatabaseError(`cannot connect to PostgreSQL at ${label}: ${describeDbFailure(e, { connectTimeoutMs })}`, {
    cause: e,
  });
}

/** A query was refused or failed on an open connection. */
export function queryFailure(label: string, e: unknown, statementTimeoutMs?: number): DatabaseError {
  return new DatabaseError(`query failed on ${label}: ${describeDbFailure(e, { statementTimeoutMs })}`, { cause: e });
}

/** Whether a query failed because the server cancelled it at the statement timeout (57014). */
export function isStatementTimeout(e: unknown): boolean {
  const cause = e instanceof DatabaseError ? (e.cause as DriverError | undefined) : (e as DriverError | undefined);
  return cause?.code === '57014' && /statement timeout/i.test(String(cause.message ?? ''));
}

/** The client-side deadline passed without an answer: the connection is dropped, not reused. */
export function deadlineFailure(label: string, deadlineMs: number, statementTimeoutMs: number): DatabaseError {
  return new DatabaseError(
    `no answer from ${label} within ${deadlineMs} ms (client-side deadline, past the ${statementTimeoutMs} ms statement timeout): ` +
      'the connection is frozen or the server stalled; it was dropped (timeout)',
  );
}

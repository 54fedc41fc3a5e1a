/**
 * What the local pages (`label`, `view`) share to stay private to the person who started them:
 * the loopback addresses, the check of every request (the token of the printed URL, a Host that
 * names loopback so a page on another site cannot reach the server through a name that resolves
 * to 127.0.0.1, no cross-site request), and the headers every response carries.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** An answer other than 200, with its message. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Writes a response with the headers every local page sends (no caching, no sniffing, no referrer). */
export function send(
  res: ServerResponse,
  status: number,
  body: string,
  type: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    ...extra,
  });
  res.end(body);
}

/** A constant-time comparison of a given token with the server's. */
export function tokenMatches(token: string, given: string | null | undefined): boolean {
  const a = Buffer.from(token);
  const b = Buffer.from(given ?? '');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The request's Host without port and brackets (`[::1]:8080` → `::1`). */
export const requestHost = (req: IncomingMessage): string =>
  (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');

/**
 * Throws a 403 unless the request names a loopback Host (when remote is not allowed) and carries
 * the token, in the `x-ragaudit-token` header or the query parameter `param` (default `token`). With `sameOrigin`,
 * a request from another origin (an `Origin` header that is not this server, or a browser's
 * `Sec-Fetch-Site: cross-site`) is refused as well.
 */
export function checkLocalRequest(
  req: IncomingMessage,
  url: URL,
  opts: { token: string; allowRemote: boolean; sameOrigin?: boolean; param?: string },
): void {
  if (!opts.allowRemote && !LOOPBACK.has(requestHost(req))) throw new HttpError(403, 'unexpected Host');
  if (opts.sameOrigin) {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${req.headers.host ?? ''}`)
      throw new HttpError(403, 'a request from another origin');
    const site = req.headers['sec-fetch-site'];
    if (site === 'cross-site' || site === 'same-site') throw new HttpError(403, 'a request from another site');
  }
  const header = req.headers['x-ragaudit-token'];
  if (!tokenMatches(opts.token, typeof header === 'string' ? header : url.searchParams.get(opts.param ?? 'token')))
    throw new HttpError(403, 'missing or wrong token: open the URL the command printed');
}

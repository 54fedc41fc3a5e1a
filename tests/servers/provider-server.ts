/**
 * A scriptable local HTTP server for testing provider clients at the HTTP boundary.
 *
 * Usage:
 *   const server = new ProviderServer()
 *     .on('POST /v1/chat/completions', (req) => reply(chatCompletion('hi')));  // default responder
 *   server.enqueue('POST /v1/chat/completions', status(429, {}, { 'retry-after': '1' }), hang());
 *   const { url, close } = await server.start();   // url = http://127.0.0.1:PORT
 *   ...
 *   server.requests        // every request: { method, path, route, query, headers, body, raw, at }
 *   server.count('POST /v1/chat/completions')
 *   await close();
 *
 * Routes are `METHOD /pathname` (no query string). For each request the route's queue of
 * scripted behaviours is consumed first (one per request), then its default responder runs.
 * An unknown route answers 404. Behaviours (build them with the helpers below):
 *   reply(body, {status?, headers?, delayMs?})  JSON body (status 200 unless given)
 *   status(code, body?, headers?)               an error status, e.g. status(429, {}, {'retry-after': '1'})
 *   replyText(body, {status?, contentType?})    a non-JSON body (e.g. an HTML error page)
 *   hang()                                      never answer (the client must time out)
 *   closeSocket()                               destroy the connection without answering
 *   trickle(body, {everyMs?})                   status 200 and headers at once, then the JSON body
 *                                               one byte every `everyMs` (a slow drip past any timeout)
 * Ready-made servers that speak real wire formats: openai-server.ts, anthropic-server.ts,
 * rerank-server.ts (see their top comments).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the server saw it. `body` is parsed JSON (or undefined when not JSON). */
export interface RecordedRequest {
  method: string;
  path: string;
  /** `METHOD /path`, the key routes and queues use. */
  route: string;
  query: URLSearchParams;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  body: unknown;
  raw: string;
  /** performance.now() when the request arrived. */
  at: number;
}

export type Behaviour =
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string>; delayMs?: number }
  | { kind: 'text'; status: number; body: string; contentType?: string; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'close' }
  | { kind: 'trickle'; body: unknown; everyMs: number };

export type Responder = (req: RecordedRequest) => Behaviour | Promise<Behaviour>;

/** A JSON answer (status 200 unless given). */
export function reply(
  body: unknown,
  init: { status?: number; headers?: Record<string, string>; delayMs?: number } = {},
): Behaviour {
  return {
    kind: 'json',
    status: init.status ?? 200,
    body,
    ...(init.headers && { headers: init.headers }),
    ...(init.delayMs && { delayMs: init.delayMs }),
  };
}

/** An error status with an optional JSON body and headers (e.g. retry-after). */
export function status(
  code: number,
  body: unknown = { error: { message: `status ${code}` } },
  headers?: Record<string, string>,
): Behaviour {
  return { kind: 'json', status: code, body, ...(headers && { headers }) };
}

/** A non-JSON answer. */
export function replyText(body: string, init: { status?: number; contentType?: string } = {}): Behaviour {
  return { kind: 'text', status: init.status ?? 200, body, contentType: init.contentType ?? 'text/plain' };
}

/**
 * How a fake batch server tears one line of a results file: `cut`, cut short half-way (its
 * custom_id, near the start, still legible); `garbled`, only its second half left (the custom_id
 * lost with the first).
 */
export type Tear = 'cut' | 'garbled';

/** `line` torn as `tear` says. */
export function tearLine(line: string, tear: Tear): string {
  const half = Math.floor(line.length / 2);
  return tear === 'cut' ? line.slice(0, half) : line.slice(half);
}

/** Never answers; the socket stays open until the client gives up or the server closes. */
export function hang(): Behaviour {
  return { kind: 'hang' };
}

/** Sends status 200 and headers at once, then the JSON body one byte every `everyMs` ms. */
export function trickle(body: unknown, init: { everyMs?: number } = {}): Behaviour {
  return { kind: 'trickle', body, everyMs: init.everyMs ?? 100 };
}

/** Destroys the connection without an answer (the client sees a reset / socket hang up). */
export function closeSocket(): Behaviour {
  return { kind: 'close' };
}

export class ProviderServer {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  private readonly responders = new Map<string, Responder>();
  private readonly queues = new Map<string, Behaviour[]>();
  private readonly sockets = new Set<Socket>();

  constructor(routes: Record<string, Responder> = {}) {
    for (const [route, r] of Object.entries(routes)) this.on(route, r);
  }

  /** Sets the default responder of a route (`METHOD /path`). */
  on(route: string, responder: Responder): this {
    this.responders.set(route, responder);
    return this;
  }

  /** Queues scripted behaviours for a route; each is used by one request, before the default. */
  enqueue(route: string, ...behaviours: Behaviour[]): this {
    this.queues.set(route, [...(this.queues.get(route) ?? []), ...behaviours]);
    return this;
  }

  /** Requests received, on one route or all. */
  count(route?: string): number {
    return this.requestsTo(route).length;
  }

  requestsTo(route?: string): RecordedRequest[] {
    return route ? this.requests.filter((r) => r.route === route) : [...this.requests];
  }

  /** The last request (on a route, or any); throws when there is none. */
  last(route?: string): RecordedRequest {
    const all = this.requestsTo(route);
    const r = all[all.length - 1];
    if (!r) throw new Error(`no request${route ? ` to ${route}` : ''} yet`);
    return r;
  }

  /** Forgets requests and scripted behaviours (default responders stay). */
  reset(): void {
    this.requests.length = 0;
    this.queues.clear();
  }

  /** Listens on 127.0.0.1 at a free port. `close` also ends hung and open connections. */
  async start(): Promise<{ url: string; close: () => Promise<void> }> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      close: () =>
        new Promise<void>((resolve) => {
          for (const s of this.sockets) s.destroy();
          server.close(() => resolve());
        }),
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = raw ? (JSON.parse(raw) as unknown) : undefined;
    } catch {
      body = undefined;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
    const method = req.method ?? 'GET';
    const route = `${method} ${url.pathname}`;
    const recorded: RecordedRequest = {
      method,
      path: url.pathname,
      route,
      query: url.searchParams,
      headers,
      body,
      raw,
      at: performance.now(),
    };
    this.requests.push(recorded);

    let behaviour: Behaviour;
    try {
      const queued = this.queues.get(route)?.shift();
      const responder = this.responders.get(route);
      behaviour =
        queued ?? (responder ? await responder(recorded) : status(404, { error: { message: `no route ${route}` } }));
    } catch (e) {
      behaviour = status(500, { error: { message: `test server responder failed: ${(e as Error).message}` } });
    }
    await this.send(behaviour, req, res);
  }

  private async send(b: Behaviour, req: IncomingMessage, res: ServerResponse): Promise<void> {
    switch (b.kind) {
      case 'hang':
        return;
      case 'close':
        req.socket.destroy();
        return;
      case 'trickle': {
        const bytes = Buffer.from(JSON.stringify(b.body));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(bytes.length) });
        res.flushHeaders();
        for (const byte of bytes) {
          if (res.destroyed) return;
          await new Promise((r) => setTimeout(r, b.everyMs));
          if (res.destroyed) return;
          res.write(Buffer.from([byte]));
        }
        res.end();
        return;
      }
      case 'text':
        res.writeHead(b.status, { 'content-type': b.contentType ?? 'text/plain', ...b.headers });
        res.end(b.body);
        return;
      case 'json':
        if (b.delayMs) await new Promise((r) => setTimeout(r, b.delayMs));
        if (res.destroyed) return;
        res.writeHead(b.status, { 'content-type': 'application/json', ...b.headers });
        res.end(JSON.stringify(b.body));
        return;
    }
  }
}

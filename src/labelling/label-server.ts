/**
 * `label`: a local web server over one or more results files (the Answers queue) and a pool file
 * (the Retrieval pool queue). Loopback only unless asked otherwise, every request carries the
 * random token of the printed URL, and labels go to the label store (appended, fsynced) as they
 * are given, so closing the page or killing the server loses nothing saved; a label that could
 * not be written is answered as an error, never as saved. The queues and labels are
 * label-state.ts, the routes label-routes.ts, what an item shows label-views.ts.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InputError } from '../errors.js';
import type { WriteFn } from '../io/jsonl.js';
import { LabelWriteError } from '../judge/label-file.js';
import { checkLocalRequest, HttpError, LOOPBACK } from '../io/local-server.js';
import { defaultLabeller } from './label-name.js';
import { json, route } from './label-routes.js';
import { LabelState } from './label-state.js';

export interface LabelServerInputs {
  results: readonly string[];
  pool?: string | undefined;
  labels?: string | undefined;
  host: string;
  port: number;
  /** Needed to bind anything but loopback: the page has no other protection than its token. */
  allowRemote: boolean;
  cwd: string;
  /** The token (tests); default 24 random bytes. */
  token?: string;
  /** Told of label lines skipped at start and partial lines cut off before a save (file:line). */
  warn?: (message: string) => void;
  /** The label store's write call (tests: a full disk); default `fs.writeSync`. */
  write?: WriteFn;
  /** The name the page labels under until given another (`--labeller`; default: src/labelling/label-name.ts). */
  labeller?: string | undefined;
}

export interface LabelServer {
  url: string;
  token: string;
  labelsDir: string;
  counts: { answers: number; pool: number };
  close(): Promise<void>;
}

/** Starts the server; resolves once it listens. */
export async function startLabelServer(inputs: LabelServerInputs): Promise<LabelServer> {
  if (!LOOPBACK.has(inputs.host) && !inputs.allowRemote)
    throw new InputError(
      `--host ${inputs.host}: the labelling page binds loopback only (127.0.0.1, ::1) unless --allow-remote is given`,
    );
  if (!inputs.results.length && !inputs.pool)
    throw new InputError("label: give results files and/or --pool (see 'ragaudit label --help')");
  const state = new LabelState(inputs);
  const token = inputs.token ?? randomBytes(24).toString('hex');
  const labeller = defaultLabeller(inputs.labeller, !LOOPBACK.has(inputs.host));
  const ctx = { state, write: inputs.write, warn: inputs.warn, labeller };

  const server: Server = createServer((req, res) => {
    // A request line that is no URL is refused by the catch below, like any other failure.
    Promise.resolve()
      .then(() => {
        const url = new URL(req.url ?? '/', 'http://localhost');
        // The page's URL carries the token as `ticket`: the console masks a query parameter named token.
        checkLocalRequest(req, url, { token, allowRemote: inputs.allowRemote, param: 'ticket' });
        return route(ctx, req, res, url);
      })
      .catch((e: unknown) => {
        // A label not written is an error to the page (the item stays unsaved) and to the console.
        if (e instanceof LabelWriteError) inputs.warn?.(e.message);
        const status = e instanceof HttpError ? e.status : e instanceof LabelWriteError && e.diskFull ? 507 : 500;
        if (!res.headersSent) json(res, status, { error: e instanceof Error ? e.message : String(e) });
        else res.end();
      });
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(inputs.port, inputs.host, () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = inputs.host.includes(':') ? `[${inputs.host}]` : inputs.host;
  return {
    url: `http://${shownHost}:${port}/?ticket=${token}`,
    token,
    labelsDir: state.labelsDir,
    counts: { answers: state.answers.length, pool: state.pool.length },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

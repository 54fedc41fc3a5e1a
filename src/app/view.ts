/**
 * `view`: a local web server over a results folder. Every run listed with its figures and
 * verdict; a run opens as its HTML report (made on demand by the report's renderer); two runs open
 * side by side on the compare page, question by question, failures first. The same hardening as
 * `label`: loopback only, the random token of the printed URL on every request, the Host named
 * loopback, no request from another origin, a Content-Security-Policy on every page, and every
 * text from the results escaped on the server. Read-only: it writes nothing.
 */
import { createHash, randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { InputError, RagauditError } from '../errors.js';
import { checkLocalRequest, HttpError, LOOPBACK, send } from '../io/local-server.js';
import { displayPath } from '../paths.js';
import { compareRuns, type LoadedRun } from '../reports/compare.js';
import { comparePageCsp, comparePageHtml } from '../reports/compare-page.js';
import { REPORT_JS } from '../reports/html-assets.js';
import { esc } from '../reports/html-escape.js';
import { reportHtml } from '../reports/html.js';
import { viewPageCsp, viewRunsPage, type ViewRun } from '../reports/view-page.js';
import { withShownRecords } from './compare-page.js';
import { reportInput } from './report.js';
import { readRunResults, runLabels } from './results-input.js';
import { RunFolder } from './view-runs.js';

export interface ViewServerInputs {
  /** The results folder (relative to cwd). */
  dir: string;
  host: string;
  port: number;
  cwd: string;
  /** The token (tests); default 24 random bytes. */
  token?: string;
}

export interface ViewServer {
  url: string;
  token: string;
  /** The folder as shown. */
  dir: string;
  /** Runs and other files found when the server started. */
  counts: { runs: number; other: number };
  close(): Promise<void>;
}

const HTML = 'text/html; charset=utf-8';
/** The query parameter that carries the token. */
export const PARAM = 'ticket';
const reportCsp = `default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-${createHash('sha256').update(REPORT_JS).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

type Listed = Extract<ViewRun, { ok: true }>;

/** Starts the server; resolves once it listens. */
export async function startViewServer(inputs: ViewServerInputs): Promise<ViewServer> {
  if (!LOOPBACK.has(inputs.host))
    throw new InputError(`--host ${inputs.host}: view binds loopback only (127.0.0.1, ::1 or localhost)`);
  const dir = resolve(inputs.cwd, inputs.dir);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // Said below.
  }
  if (!isDir) throw new InputError(`${inputs.dir}: no such folder (view lists the results files of a folder)`);
  const shown = displayPath(dir, inputs.cwd) || '.';
  const folder = new RunFolder(dir, inputs.cwd);
  const token = inputs.token ?? randomBytes(24).toString('hex');
  // Not `token=`: the console masks credential-named query parameters, and this URL must be printed whole.
  const q = `${PARAM}=${esc(token)}`;

  const run = (id: string | null): Listed => {
    const r = id ? folder.find(id) : undefined;
    if (!r) throw new HttpError(404, `no run ${id ?? ''} in ${shown}`);
    if (!r.ok) throw new HttpError(400, `${r.path}: ${r.error}`);
    return r;
  };

  const report = (r: Listed): string => {
    const nav = `<nav class="view" style="display:flex;gap:14px;flex-wrap:wrap;font-size:13px;padding:6px 0;border-bottom:1px solid #d9dee3"><a id="back" href="/?${q}">← all runs in ${esc(shown)}</a><span>label these answers: <code>${esc(`ragaudit label ${r.arg}`)}</code></span></nav>`;
    // The report's own header follows <body>; corpus text is escaped, so this is the first one.
    return reportHtml(reportInput(r.file)).replace('<body>\n', `<body>\n${nav}\n`);
  };

  const compare = (url: URL): string => {
    const ids = [...new Set(url.searchParams.getAll('run'))];
    if (ids.length !== 2) throw new HttpError(400, `pick two different runs to compare (got ${ids.length})`);
    const pair = ids.map(run);
    const asked = url.searchParams.get('baseline');
    // Baseline: the one asked for, else the older run.
    const b = asked && ids.includes(asked) ? ids.indexOf(asked) : pair[0]!.created_at <= pair[1]!.created_at ? 0 : 1;
    const [base, other] = b === 0 ? [pair[0]!, pair[1]!] : [pair[1]!, pair[0]!];
    const labels = runLabels([base.file, other.file]);
    const runs: LoadedRun[] = [base, other].map((r, i) => ({
      label: labels[i]!,
      file: r.path,
      result: readRunResults(r.file, 'view', { light: true }),
    }));
    const cmp = compareRuns(runs, { baseline: 0 });
    const swap = `/compare?${q}&amp;run=${esc(base.id)}&amp;run=${esc(other.id)}&amp;baseline=${esc(other.id)}`;
    const nav = `<nav class="view"><a id="back" href="/?${q}">← all runs</a><a id="swap" href="${swap}">swap the baseline</a><a href="/run/${esc(base.id)}?${q}">baseline report</a><a href="/run/${esc(other.id)}?${q}">run report</a><span>label both: <code>${esc(`ragaudit label ${base.arg} ${other.arg}`)}</code></span></nav>`;
    const input = {
      title: `${labels[1]} vs ${labels[0]} (baseline)`,
      subtitle: `${other.path} against ${base.path} · every question paired by id, failures first · no gate (ragaudit compare --gate FILE --html FILE gives the decision)`,
      cmp,
      runs,
      all: true,
      nav,
    };
    const files = new Map([
      [labels[0]!, base.file],
      [labels[1]!, other.file],
    ]);
    return comparePageHtml(withShownRecords(input, files, 'view'));
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    checkLocalRequest(req, url, { token, allowRemote: false, sameOrigin: true, param: PARAM });
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'view only reads');
    if (url.pathname === '/') {
      const nonce = randomBytes(16).toString('base64');
      return send(res, 200, viewRunsPage({ nonce, token, param: PARAM, dir: shown, runs: folder.list() }), HTML, {
        'content-security-policy': viewPageCsp(nonce),
      });
    }
    const m = /^\/run\/([0-9a-f]{12})$/.exec(url.pathname);
    if (m) return send(res, 200, report(run(m[1]!)), HTML, { 'content-security-policy': reportCsp });
    if (url.pathname === '/compare')
      return send(res, 200, compare(url), HTML, {
        'content-security-policy': `${comparePageCsp()}; frame-ancestors 'none'`,
      });
    throw new HttpError(404, 'not found');
  };

  const server: Server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch (e) {
      // A file that went bad since it was listed is the reader's message, not a crash.
      const status = e instanceof HttpError ? e.status : e instanceof RagauditError ? 400 : 500;
      if (!res.headersSent)
        send(res, status, `${e instanceof Error ? e.message : String(e)}\n`, 'text/plain; charset=utf-8');
      else res.end();
    }
  });
  const counts = { runs: 0, other: 0 };
  for (const r of folder.list()) counts[r.ok ? 'runs' : 'other']++;
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(inputs.port, inputs.host, () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = inputs.host.includes(':') ? `[${inputs.host}]` : inputs.host;
  return {
    url: `http://${shownHost}:${port}/?${PARAM}=${token}`,
    token,
    dir: shown,
    counts,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

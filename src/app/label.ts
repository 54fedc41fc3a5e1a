/**
 * `label`: a local web server over one or more results files (the Answers queue) and a pool file
 * (the Retrieval pool queue). Loopback only unless asked otherwise, every request carries the
 * random token of the printed URL, and labels go to the label store (appended, fsynced) as they
 * are given, so closing the page or killing the server loses nothing saved; a label that could
 * not be written is answered as an error, never as saved.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { InputError } from '../errors.js';
import type { WriteFn } from '../io/jsonl.js';
import {
  answerDigest,
  appendLabel,
  fileDigest,
  labelKey,
  LABELLER_PATTERN,
  LabelWriteError,
  readLabels,
  Relevance,
  StanceLabel,
  YesNoUnsure,
  type Label,
} from '../judge/labels.js';
import { agreementReport, judgeReadings } from '../judge/rater-agreement.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import { agreementHtml } from '../reports/label-agreement.js';
import { agreementPage, labelPage, labelPageCsp } from '../reports/label-page.js';
import { mulberry32 } from '../scoring/statistics.js';
import { PoolFileSchema, type PoolCandidate, type PoolFile } from '../scoring/pooling.js';
import { defaultLabelsDir } from './agreement.js';
import { defaultLabeller } from './label-name.js';
import { readRunResults } from './results-input.js';

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
  /** The name the page labels under until given another (`--labeller`; default: src/app/label-name.ts). */
  labeller?: string | undefined;
}

export interface LabelServer {
  url: string;
  token: string;
  labelsDir: string;
  counts: { answers: number; pool: number };
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

interface AnswerItem {
  queue: 'answer';
  key: string;
  run: string;
  results: string;
  /** The generator's label when it is an offline stand-in (shown with the answer), else null. */
  standIn: string | null;
  record: CaseRecord;
  digest: string;
}
interface PoolItem {
  queue: 'pool';
  key: string;
  case_id: string;
  question: string;
  pool: string;
  candidate: PoolCandidate;
}

/** The items of a queue in a labeller's own order (a seeded shuffle: the same name, the same order). */
function shuffled<T>(items: readonly T[], labeller: string, queue: string): T[] {
  const seed = parseInt(createHash('sha256').update(`${queue}\u0000${labeller}`).digest('hex').slice(0, 8), 16);
  const rand = mulberry32(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(
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
const json = (res: ServerResponse, status: number, data: unknown) =>
  send(res, status, JSON.stringify(data), 'application/json; charset=utf-8');

async function readBody(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += b.length;
    if (size > 64 * 1024) throw new HttpError(413, 'request too large');
    chunks.push(b);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the body is not JSON');
  }
}

/** Starts the server; resolves once it listens. */
export async function startLabelServer(inputs: LabelServerInputs): Promise<LabelServer> {
  if (!LOOPBACK.has(inputs.host) && !inputs.allowRemote)
    throw new InputError(
      `--host ${inputs.host}: the labelling page binds loopback only (127.0.0.1, ::1) unless --allow-remote is given`,
    );
  if (!inputs.results.length && !inputs.pool)
    throw new InputError("label: give results files and/or --pool (see 'ragaudit label --help')");
  const files = inputs.results.map((f) => resolve(inputs.cwd, f));
  const runs: { file: string; result: RunResult; digest: string }[] = files.map((file) => ({
    file,
    result: readRunResults(file, 'label'),
    digest: fileDigest(file),
  }));
  const names = runs.map((r) => r.result.name);
  const answers: AnswerItem[] = runs.flatMap((r, i) =>
    r.result.cases
      .filter((c) => c.status === 'ok' && typeof c.answer === 'string')
      .map((record): AnswerItem => {
        const run = names.filter((n) => n === names[i]).length > 1 ? `${names[i]}#${i + 1}` : names[i]!;
        return {
          queue: 'answer',
          key: `a:${i}:${record.id}`,
          run,
          results: r.digest,
          standIn: r.result.components.generator?.offline ? r.result.components.generator.label : null,
          record,
          digest: answerDigest(record),
        };
      }),
  );
  let pool: PoolFile | undefined;
  let poolDigest = '';
  if (inputs.pool) {
    const file = resolve(inputs.cwd, inputs.pool);
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new InputError(`${file}: cannot read the pool file: ${(e as Error).message}`);
    }
    const parsed = PoolFileSchema.safeParse(data);
    if (!parsed.success) throw new InputError(`${file}: not a pool file (written by ragaudit pool)`);
    pool = parsed.data;
    poolDigest = fileDigest(file);
  }
  const poolItems: PoolItem[] = (pool?.questions ?? []).flatMap((q) =>
    q.candidates.map((candidate): PoolItem => ({
      queue: 'pool',
      key: `p:${q.case_id}:${candidate.post_id}`,
      case_id: q.case_id,
      question: q.question,
      pool: poolDigest,
      candidate,
    })),
  );
  const labelsDir = inputs.labels
    ? resolve(inputs.cwd, inputs.labels)
    : runs[0]
      ? defaultLabelsDir(runs[0].result, inputs.cwd)
      : resolve(inputs.cwd, 'labels');
  // labeller → label key → latest label: what the store holds, kept current as labels arrive.
  const given = new Map<string, Map<string, Label>>();
  const remember = (l: Label) => {
    const mine = given.get(l.labeller) ?? new Map<string, Label>();
    mine.set(labelKey(l), l);
    given.set(l.labeller, mine);
  };
  const start = readLabels(labelsDir);
  for (const w of start.skipped) inputs.warn?.(w);
  for (const l of start.labels) remember(l);

  const itemLabelKey = (it: AnswerItem | PoolItem) =>
    it.queue === 'answer'
      ? `answer\u0000${it.record.id}\u0000${it.digest}`
      : `pool\u0000${it.case_id}\u0000${it.candidate.post_id}`;
  const labelOf = (labeller: string, it: AnswerItem | PoolItem) => given.get(labeller)?.get(itemLabelKey(it));
  const order = new Map<string, (AnswerItem | PoolItem)[]>();
  const queueOf = (labeller: string, queue: string): (AnswerItem | PoolItem)[] => {
    const k = `${queue}\u0000${labeller}`;
    let items = order.get(k);
    if (!items) {
      items = shuffled<AnswerItem | PoolItem>(queue === 'answer' ? answers : poolItems, labeller, queue);
      order.set(k, items);
    }
    return items;
  };
  const judgeOf = (r: CaseRecord) => {
    const j = judgeReadings([r]);
    return {
      faithful: j.faithful.get(r.id) ?? null,
      stance: j.stance.get(r.id) ?? null,
      citations: Object.fromEntries([...j.citation].map(([k, v]) => [/\[\[(\d+)\]\]$/.exec(k)![1]!, v])),
    };
  };
  const view = (labeller: string, it: AnswerItem | PoolItem) => {
    const label = labelOf(labeller, it) ?? null;
    if (it.queue === 'pool') return { key: it.key, case_id: it.case_id, question: it.question, ...it.candidate, label };
    const r = it.record;
    const cited = [...new Set((r.citations ?? []).filter((c) => c.valid).map((c) => c.n))].sort((a, b) => a - b);
    return {
      key: it.key,
      run: it.run,
      stand_in: it.standIn,
      case_id: r.id,
      question: r.question,
      sources: (r.sources ?? []).map((s) => ({ n: s.n, title: s.title, url: s.url, excerpt: s.excerpt })),
      answer: r.answer ?? '',
      cited,
      label,
      // Blind: the judge's verdict only once this labeller has labelled this answer.
      judge: label ? judgeOf(r) : null,
    };
  };
  const progress = (labeller: string, queue: string) => {
    const items = queueOf(labeller, queue);
    const done = items.filter((it) => labelOf(labeller, it)).length;
    const open = items.findIndex((it) => !labelOf(labeller, it));
    return { total: items.length, done, first_open: open < 0 ? 0 : open };
  };
  const labellerParam = (v: unknown): string => {
    if (typeof v !== 'string' || !LABELLER_PATTERN.test(v))
      throw new HttpError(400, 'labeller: a short lowercase name');
    return v;
  };

  const labeller = defaultLabeller(inputs.labeller, !LOOPBACK.has(inputs.host));
  const token = inputs.token ?? randomBytes(24).toString('hex');
  const tokenBytes = Buffer.from(token);
  const tokenOk = (given_: string | null | undefined) => {
    const b = Buffer.from(given_ ?? '');
    return b.length === tokenBytes.length && timingSafeEqual(b, tokenBytes);
  };

  let port = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    // A page on another site may not reach the server through a name that resolves to loopback.
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    if (!inputs.allowRemote && !LOOPBACK.has(host)) throw new HttpError(403, 'unexpected Host');
    const headerToken = req.headers['x-ragaudit-token'];
    if (!tokenOk(typeof headerToken === 'string' ? headerToken : url.searchParams.get('token')))
      throw new HttpError(403, 'missing or wrong token: open the URL the command printed');
    const nonce = randomBytes(16).toString('base64');
    if (req.method === 'GET' && url.pathname === '/')
      return send(res, 200, labelPage({ nonce, title: 'ragaudit label', labeller }), 'text/html; charset=utf-8', {
        'content-security-policy': labelPageCsp(nonce),
      });
    if (req.method === 'GET' && url.pathname === '/agreement') {
      const labels = readLabels(labelsDir).labels;
      const sections = runs.map((r, i) => ({
        title: `${names[i]} (${r.result.summary.judge?.judge ?? 'no judge'})`,
        html: agreementHtml(
          agreementReport(r.result.cases, labels, { judge: r.result.summary.judge?.judge ?? null, caseYaml: true }),
        ),
      }));
      return send(res, 200, agreementPage({ nonce, sections }), 'text/html; charset=utf-8', {
        'content-security-policy': labelPageCsp(nonce),
      });
    }
    if (req.method === 'GET' && url.pathname === '/api/state') {
      const labeller = labellerParam(url.searchParams.get('labeller'));
      return json(res, 200, {
        labeller,
        queues: {
          answer: answers.length ? progress(labeller, 'answer') : null,
          pool: poolItems.length ? progress(labeller, 'pool') : null,
        },
      });
    }
    if (req.method === 'GET' && url.pathname === '/api/item') {
      const labeller = labellerParam(url.searchParams.get('labeller'));
      const queue = url.searchParams.get('queue') === 'pool' ? 'pool' : 'answer';
      const items = queueOf(labeller, queue);
      const pos = Math.max(0, Math.min(items.length - 1, Number(url.searchParams.get('pos')) || 0));
      const p = progress(labeller, queue);
      return json(res, 200, {
        pos,
        total: p.total,
        done: p.done,
        item: items[pos] ? view(labeller, items[pos]) : null,
      });
    }
    if (req.method === 'POST' && url.pathname === '/api/label') {
      const body = await readBody(req);
      if (!body || typeof body !== 'object') throw new HttpError(400, 'expected a JSON object');
      const b = new Map(Object.entries(body));
      const labeller = labellerParam(b.get('labeller'));
      const queue = b.get('queue') === 'pool' ? 'pool' : 'answer';
      const item = queueOf(labeller, queue).find((it) => it.key === b.get('key'));
      if (!item) throw new HttpError(404, 'no such item');
      const note =
        typeof b.get('note') === 'string' && String(b.get('note')).trim() ? String(b.get('note')) : undefined;
      const at = new Date().toISOString();
      let label: Label;
      if (item.queue === 'answer') {
        const f = YesNoUnsure.safeParse(b.get('faithful'));
        const s = StanceLabel.safeParse(b.get('stance'));
        const cites: Record<string, 'yes' | 'no' | 'unsure'> = {};
        const raw = b.get('citations');
        if (raw && typeof raw === 'object')
          for (const [n, v] of Object.entries(raw)) {
            const p = YesNoUnsure.safeParse(v);
            if (/^\d+$/.test(n) && p.success) cites[n] = p.data;
          }
        label = {
          v: 1,
          queue: 'answer',
          labeller,
          at,
          case_id: item.record.id,
          results: item.results,
          answer_digest: item.digest,
          ...(f.success ? { faithful: f.data } : {}),
          ...(s.success ? { stance: s.data } : {}),
          ...(Object.keys(cites).length ? { citations: cites } : {}),
          ...(note ? { note } : {}),
        };
      } else {
        const rel = Relevance.safeParse(b.get('relevance'));
        if (!rel.success) throw new HttpError(400, 'relevance: relevant, partly or not');
        label = {
          v: 1,
          queue: 'pool',
          labeller,
          at,
          case_id: item.case_id,
          pool: item.pool,
          post_id: item.candidate.post_id,
          topic_id: item.candidate.topic_id,
          relevance: rel.data,
          ...(note ? { note } : {}),
        };
      }
      remember(appendLabel(labelsDir, label, { write: inputs.write, warn: inputs.warn }));
      const p = progress(labeller, queue);
      return json(res, 200, { ok: true, ...p, judge: item.queue === 'answer' ? judgeOf(item.record) : null });
    }
    throw new HttpError(404, 'not found');
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
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
  port = (server.address() as AddressInfo).port;
  const shownHost = inputs.host.includes(':') ? `[${inputs.host}]` : inputs.host;
  return {
    url: `http://${shownHost}:${port}/?token=${token}`,
    token,
    labelsDir,
    counts: { answers: answers.length, pool: poolItems.length },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

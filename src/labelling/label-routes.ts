/**
 * The label server's routes: the page, the agreement page, and the JSON API (state, item,
 * label). Every request has passed the Host and token checks of label-server.ts before it gets here.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WriteFn } from '../io/jsonl.js';
import {
  appendLabel,
  LABELLER_PATTERN,
  Relevance,
  StanceLabel,
  YesNoUnsure,
  readLabels,
  type Label,
} from '../judge/label-file.js';
import { agreementReport } from '../judge/rater-agreement.js';
import { agreementHtml } from './agreement-report.js';
import { agreementPage, labelPage, labelPageCsp } from './label-page.js';
import type { Item, LabelState, Queue } from './label-state.js';
import { itemView, judgeView } from './label-views.js';
import { HttpError, send } from '../io/local-server.js';

export { HttpError };

export const json = (res: ServerResponse, status: number, data: unknown) =>
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

function labellerParam(v: unknown): string {
  if (typeof v !== 'string' || !LABELLER_PATTERN.test(v)) throw new HttpError(400, 'labeller: a short lowercase name');
  return v;
}

const queueParam = (v: unknown): Queue => (v === 'pool' ? 'pool' : 'answer');

/** The label a POST body gives `item`: what it says that reads, nothing else. */
function labelFrom(b: Map<string, unknown>, labeller: string, item: Item): Label {
  const note = typeof b.get('note') === 'string' && String(b.get('note')).trim() ? String(b.get('note')) : undefined;
  const at = new Date().toISOString();
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
    return {
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
  }
  const rel = Relevance.safeParse(b.get('relevance'));
  if (!rel.success) throw new HttpError(400, 'relevance: relevant, partly or not');
  return {
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

/** What the routes need beside the request: the state, and how labels are written. */
export interface RouteContext {
  state: LabelState;
  /** The name the page labels under until given another (src/labelling/label-name.ts). */
  labeller?: string | undefined;
  write?: WriteFn | undefined;
  warn?: ((message: string) => void) | undefined;
}

/** Answers one checked request; an unknown route is a 404. */
export async function route(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const { state } = ctx;
  const nonce = randomBytes(16).toString('base64');
  const html = (body: string) =>
    send(res, 200, body, 'text/html; charset=utf-8', { 'content-security-policy': labelPageCsp(nonce) });
  if (req.method === 'GET' && url.pathname === '/')
    return html(labelPage({ nonce, title: 'ragaudit label', ...(ctx.labeller ? { labeller: ctx.labeller } : {}) }));
  if (req.method === 'GET' && url.pathname === '/agreement') {
    const labels = readLabels(state.labelsDir).labels;
    const sections = state.runs.map((r) => ({
      title: `${r.result.name} (${r.result.summary.judge?.judge ?? 'no judge'})`,
      html: agreementHtml(
        agreementReport(r.result.cases, labels, { judge: r.result.summary.judge?.judge ?? null, caseYaml: true }),
      ),
    }));
    return html(agreementPage({ nonce, sections }));
  }
  if (req.method === 'GET' && url.pathname === '/api/state') {
    const labeller = labellerParam(url.searchParams.get('labeller'));
    return json(res, 200, {
      labeller,
      queues: {
        answer: state.answers.length ? state.progress(labeller, 'answer') : null,
        pool: state.pool.length ? state.progress(labeller, 'pool') : null,
      },
    });
  }
  if (req.method === 'GET' && url.pathname === '/api/item') {
    const labeller = labellerParam(url.searchParams.get('labeller'));
    const queue = queueParam(url.searchParams.get('queue'));
    const items = state.queueOf(labeller, queue);
    const pos = Math.max(0, Math.min(items.length - 1, Number(url.searchParams.get('pos')) || 0));
    const p = state.progress(labeller, queue);
    return json(res, 200, {
      pos,
      total: p.total,
      done: p.done,
      item: items[pos] ? itemView(state, labeller, items[pos]) : null,
    });
  }
  if (req.method === 'POST' && url.pathname === '/api/label') {
    const body = await readBody(req);
    if (!body || typeof body !== 'object') throw new HttpError(400, 'expected a JSON object');
    const b = new Map(Object.entries(body));
    const labeller = labellerParam(b.get('labeller'));
    const queue = queueParam(b.get('queue'));
    const item = state.queueOf(labeller, queue).find((it) => it.key === b.get('key'));
    if (!item) throw new HttpError(404, 'no such item');
    const label = labelFrom(b, labeller, item);
    state.remember(appendLabel(state.labelsDir, label, { write: ctx.write, warn: ctx.warn }));
    const p = state.progress(labeller, queue);
    return json(res, 200, { ok: true, ...p, judge: item.queue === 'answer' ? judgeView(item.record) : null });
  }
  throw new HttpError(404, 'not found');
}

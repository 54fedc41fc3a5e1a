/**
 * The labelling server over real HTTP: loopback bind, the token on every request, the Host
 * check, labels appended to the labeller's file with provenance, the judge's verdict hidden until
 * the answer is labelled, a shuffled order per labeller, resuming after a restart, and a label
 * never acknowledged unless written (a full disk, a partial line left by a crash).
 */
import { appendFileSync, mkdtempSync, readFileSync, writeSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startLabelServer, type LabelServer } from '../src/labelling/label-server.js';
import { runPool } from '../src/labelling/pool.js';
import { InputError, redact } from '../src/errors.js';
import type { WriteFn } from '../src/io/jsonl.js';
import { fileDigest } from '../src/judge/label-file.js';
import { PACKAGE_ROOT } from '../src/paths.js';

const RESULTS = join(PACKAGE_ROOT, 'results', 'reference', '20261204-233647-demo.json');

const open: LabelServer[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-label-'));
  const { file: pool } = runPool({ files: [RESULTS], k: 2, outDir: dir, cwd: dir });
  return { dir, pool, labels: join(dir, 'labels') };
}

async function start(
  w: ReturnType<typeof setup>,
  token = 'secret-token-0123456789',
  extra: { warn?: (m: string) => void; write?: WriteFn } = {},
): Promise<LabelServer> {
  const s = await startLabelServer({
    ...extra,
    results: [RESULTS],
    pool: w.pool,
    labels: w.labels,
    host: '127.0.0.1',
    port: 0,
    allowRemote: false,
    cwd: w.dir,
    token,
  });
  open.push(s);
  return s;
}

/** One HTTP request; headers as given (Host included, to test the check). */
function http(
  s: LabelServer,
  path: string,
  opts: { token?: string | null; body?: unknown; host?: string } = {},
): Promise<{ status: number; headers: Record<string, unknown>; text: string; data: unknown }> {
  const url = new URL(s.url);
  return new Promise((ok, fail) => {
    const headers: Record<string, string> = { host: opts.host ?? url.host, 'content-type': 'application/json' };
    if (opts.token !== null) headers['x-ragaudit-token'] = opts.token ?? s.token;
    const req = request(
      { hostname: url.hostname, port: url.port, path, method: opts.body ? 'POST' : 'GET', headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let data: unknown = null;
          try {
            data = JSON.parse(text);
          } catch {
            // HTML
          }
          ok({ status: res.statusCode ?? 0, headers: res.headers, text, data });
        });
      },
    );
    req.on('error', fail);
    if (opts.body) req.write(JSON.stringify(opts.body));
    req.end();
  });
}

interface ItemReply {
  pos: number;
  total: number;
  done: number;
  item: {
    key: string;
    case_id: string;
    question: string;
    judge: unknown;
    label: unknown;
    cited: number[];
    stand_in?: string | null;
  };
}
const item = async (s: LabelServer, labeller: string, pos: number, queue = 'answer') =>
  (await http(s, `/api/item?labeller=${labeller}&queue=${queue}&pos=${pos}`)).data as ItemReply;

describe('ragaudit label server', () => {
  it('binds loopback, and refuses any other address without --allow-remote', async () => {
    const w = setup();
    const s = await start(w);
    expect(new URL(s.url).hostname).toBe('127.0.0.1');
    expect(new URL(s.url).searchParams.get('ticket')).toBe(s.token);
    // The console masks secrets by shape and by name (a `token` parameter becomes ***): the URL
    // the command prints must come through whole, or it cannot be opened.
    expect(redact(s.url)).toBe(s.url);
    await expect(
      startLabelServer({ results: [RESULTS], host: '0.0.0.0', port: 0, allowRemote: false, cwd: w.dir }),
    ).rejects.toThrow(InputError);
  });

  it('answers nothing without the token or through another Host name', async () => {
    const w = setup();
    const s = await start(w);
    expect((await http(s, '/', { token: null })).status).toBe(403);
    expect((await http(s, '/api/state?labeller=ann', { token: 'secret-token-0123456789x' })).status).toBe(403);
    expect((await http(s, '/api/state?labeller=ann', { host: 'evil.example:80' })).status).toBe(403);
    const page = await http(s, `/?ticket=${s.token}`, { token: null });
    expect(page.status).toBe(200);
    expect(String(page.headers['content-security-policy'])).toMatch(/default-src 'none'/);
    // No outside asset, and no corpus text in the page itself (items come as JSON, shown as text).
    expect(page.text).not.toMatch(/(src|href)="https?:/);
    expect(page.text).not.toContain('Crockett');
  });

  it('hides the judge until the answer is labelled, and appends the label with its provenance', async () => {
    const w = setup();
    const s = await start(w);
    const first = await item(s, 'ann', 0);
    expect(first.item.judge).toBeNull();
    // The demo's answers come from the extractive responder: the page says so beside each one.
    expect(first.item.stand_in).toMatch(/OFFLINE STAND-IN/);
    expect(first.done).toBe(0);
    const saved = (
      await http(s, '/api/label', {
        body: {
          labeller: 'ann',
          queue: 'answer',
          key: first.item.key,
          faithful: 'yes',
          stance: 'answered',
          note: 'ok',
        },
      })
    ).data as { ok: boolean; done: number; judge: { faithful: string | null } };
    expect(saved.ok).toBe(true);
    expect(saved.done).toBe(1);
    expect(saved.judge).not.toBeNull();
    const again = await item(s, 'ann', 0);
    expect(again.item.judge).toEqual(saved.judge);
    // Bob has not labelled it: still blind for him.
    const bobs = await Promise.all(Array.from({ length: first.total }, (_, i) => item(s, 'bob', i)));
    expect(bobs.find((b) => b.item.key === first.item.key)!.item.judge).toBeNull();
    const lines = readFileSync(join(w.labels, 'ann.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      v: 1,
      queue: 'answer',
      labeller: 'ann',
      case_id: first.item.case_id,
      results: fileDigest(RESULTS),
      faithful: 'yes',
      stance: 'answered',
      note: 'ok',
    });
  });

  it('shows accuracy n/a (never 0 %) on the agreement page when every item both read is unsure', async () => {
    const w = setup();
    const s = await start(w);
    const first = await item(s, 'ann', 0);
    const saved = await http(s, '/api/label', {
      body: { labeller: 'ann', queue: 'answer', key: first.item.key, faithful: 'unsure' },
    });
    expect(saved.status).toBe(200);
    const page = await http(s, '/agreement');
    expect(page.status).toBe(200);
    // ann × judge on faithful: one item read by both, unsure, so n = 0 and no accuracy.
    expect(page.text).toContain('<td>faithful</td><td>ann × judge</td><td>0 (+1 unsure)</td><td>n/a</td>');
  });

  it('shuffles the order per labeller (the same name, the same order) and resumes after a restart', async () => {
    const w = setup();
    let s = await start(w);
    const keys = async (who: string) =>
      (await Promise.all([0, 1, 2, 3, 4, 5].map((i) => item(s, who, i)))).map((r) => r.item.key);
    const ann = await keys('ann');
    expect(await keys('bob')).not.toEqual(ann);
    for (const pos of [0, 1, 2]) {
      const it = await item(s, 'ann', pos);
      await http(s, '/api/label', { body: { labeller: 'ann', queue: 'answer', key: it.item.key, faithful: 'no' } });
    }
    const pool = await item(s, 'ann', 0, 'pool');
    const r = await http(s, '/api/label', {
      body: { labeller: 'ann', queue: 'pool', key: pool.item.key, relevance: 'partly' },
    });
    expect(r.status).toBe(200);
    expect(
      (
        await http(s, '/api/label', {
          body: { labeller: 'ann', queue: 'pool', key: pool.item.key, relevance: 'maybe' },
        })
      ).status,
    ).toBe(400);
    await s.close();
    open.splice(0);
    s = await start(w, 'another-token-0123456789');
    expect(await keys('ann')).toEqual(ann);
    const state = (await http(s, '/api/state?labeller=ann')).data as {
      queues: { answer: { done: number; first_open: number }; pool: { done: number } };
    };
    expect(state.queues.answer).toMatchObject({ done: 3, first_open: 3 });
    expect(state.queues.pool.done).toBe(1);
    expect(readFileSync(join(w.labels, 'ann.jsonl'), 'utf8').trim().split('\n')).toHaveLength(4);
  });

  it('answers a write that fails half-way (a full disk) as an error, keeps no partial line, and the next save survives a restart', async () => {
    const w = setup();
    const warnings: string[] = [];
    // A disk with `room` bytes left, as the kernel shows it: a short write of what fits, then ENOSPC.
    let room = Number.POSITIVE_INFINITY;
    const write: WriteFn = (fd, data, offset, length, position) => {
      if (room <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      const n = writeSync(fd, data, offset, Math.min(length, room), position);
      room -= n;
      return n;
    };
    let s = await start(w, undefined, { write, warn: (m) => warnings.push(m) });
    const first = await item(s, 'ann', 0);
    const save = (faithful: string) =>
      http(s, '/api/label', { body: { labeller: 'ann', queue: 'answer', key: first.item.key, faithful } });
    expect((await save('no')).status).toBe(200);
    const file = join(w.labels, 'ann.jsonl');
    const before = readFileSync(file, 'utf8');
    room = 40;
    const failed = await save('yes');
    expect(failed.status).toBe(507);
    expect((failed.data as { error: string }).error).toMatch(/^the label was not saved: .*ann\.jsonl: ENOSPC/);
    expect(warnings).toEqual([(failed.data as { error: string }).error]);
    // Nothing of the failed label is left, and the item is still as last saved.
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect((await item(s, 'ann', 0)).item.label).toMatchObject({ faithful: 'no' });
    room = Number.POSITIVE_INFINITY;
    expect((await save('yes')).status).toBe(200);
    await s.close();
    open.splice(0);
    warnings.length = 0;
    s = await start(w, 'another-token-0123456789', { warn: (m) => warnings.push(m) });
    expect((await item(s, 'ann', 0)).item.label).toMatchObject({ faithful: 'yes' });
    expect(warnings).toEqual([]);
  });

  it('warns of a partial last line at start, cuts it off before the next save, and that save survives a restart', async () => {
    const w = setup();
    let s = await start(w);
    const first = await item(s, 'ann', 0);
    const save = (faithful: string) =>
      http(s, '/api/label', { body: { labeller: 'ann', queue: 'answer', key: first.item.key, faithful } });
    expect((await save('no')).status).toBe(200);
    await s.close();
    open.splice(0);
    // The machine died mid-write: half a line, no newline.
    const file = join(w.labels, 'ann.jsonl');
    appendFileSync(file, '{"v":1,"labeller":"ann","at":"2026-');
    const warnings: string[] = [];
    s = await start(w, undefined, { warn: (m) => warnings.push(m) });
    expect(warnings).toEqual([`${file}:2: not a JSON line (an interrupted write?)`]);
    expect((await item(s, 'ann', 0)).item.label).toMatchObject({ faithful: 'no' });
    expect((await save('yes')).status).toBe(200);
    expect(warnings[1]).toBe(
      `${file}:2: a partial last line (35 bytes, an interrupted write) was cut off before appending`,
    );
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines).toHaveLength(3); // two labels and the empty string after the last newline
    expect(lines.slice(0, 2).map((l) => (JSON.parse(l) as { faithful: string }).faithful)).toEqual(['no', 'yes']);
    await s.close();
    open.splice(0);
    warnings.length = 0;
    s = await start(w, undefined, { warn: (m) => warnings.push(m) });
    expect((await item(s, 'ann', 0)).item.label).toMatchObject({ faithful: 'yes' });
    expect(warnings).toEqual([]);
  });
});

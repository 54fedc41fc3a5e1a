/**
 * The view server over real HTTP: loopback bind only, the token of the printed URL on every
 * request, the Host and Origin checks, a Content-Security-Policy on every page, runs named by id
 * (never by path), a file that is not a run listed with the reader's message, and the text of a
 * hostile results file escaped on the list, the report and the comparison.
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startViewServer, type ViewServer } from '../src/app/view.js';
import { InputError, redact } from '../src/errors.js';
import type { RunResult } from '../src/model/results.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { runCli } from './helpers/cli.js';

const REF = join(PACKAGE_ROOT, 'results', 'reference');
const DEMO = '20261204-233647-demo.json';
const WEAK1 = '20261204-233650-demo-weak1.json';
const HOSTILE = '<img src=x onerror=alert(1)>';

const open: ViewServer[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/** A results folder: the two reference runs (one with hostile text), a broken file, a comparison file. */
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-view-'));
  copyFileSync(join(REF, DEMO), join(dir, DEMO));
  const weak = JSON.parse(readFileSync(join(REF, WEAK1), 'utf8')) as RunResult;
  const c = weak.cases.find((x) => x.id === 'metal-taps-office-floor')!;
  c.question = `${c.question} ${HOSTILE}`;
  c.answer = `${c.answer} ${HOSTILE}`;
  weak.note = HOSTILE;
  writeFileSync(join(dir, WEAK1), JSON.stringify(weak));
  writeFileSync(join(dir, 'broken.json'), '{"schema_version": 1, "kind": ');
  copyFileSync(join(REF, '20261204-233657-compare.json'), join(dir, 'x-compare.json'));
  return dir;
}

async function start(dir: string, token = 'view-token-0123456789'): Promise<ViewServer> {
  const s = await startViewServer({ dir, host: '127.0.0.1', port: 0, cwd: dir, token });
  open.push(s);
  return s;
}

/** One GET; headers as given (Host included, to test the check). */
function get(
  s: ViewServer,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const url = new URL(s.url);
  return new Promise((ok, fail) => {
    const req = request(
      { hostname: url.hostname, port: url.port, path, method, headers: { host: url.host, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', fail);
    req.end();
  });
}

const ids = (html: string) => [...html.matchAll(/<tr class="run" data-id="([0-9a-f]{12})"/g)].map((m) => m[1]!);

describe('ragaudit view server', () => {
  it('binds loopback only and prints a URL whose token the console does not mask', async () => {
    const dir = folder();
    const s = await start(dir);
    expect(new URL(s.url).hostname).toBe('127.0.0.1');
    expect(new URL(s.url).searchParams.get('ticket')).toBe(s.token);
    await expect(startViewServer({ dir, host: '0.0.0.0', port: 0, cwd: dir })).rejects.toThrow(InputError);
    await expect(startViewServer({ dir: 'nowhere', host: '127.0.0.1', port: 0, cwd: dir })).rejects.toThrow(
      /nowhere: no such folder/,
    );
    // The CLI masks credential-named query parameters in everything it prints: not this one.
    expect(redact(`open:  ${s.url}`, 'content')).toBe(`open:  ${s.url}`);
    const r = await runCli(dir, ['view', '--host', '0.0.0.0']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('view binds loopback only');
  });

  it('answers nothing without the token, through another Host name, or from another origin', async () => {
    const s = await start(folder());
    const t = `ticket=${s.token}`;
    expect((await get(s, '/')).status).toBe(403);
    expect((await get(s, '/?ticket=view-token-0123456789x')).status).toBe(403);
    expect((await get(s, '/?token=view-token-0123456789')).status).toBe(403);
    expect((await get(s, `/?${t}`, { host: 'evil.example:80' })).status).toBe(403);
    expect((await get(s, `/?${t}`, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await get(s, `/?${t}`, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await get(s, `/?${t}`, {}, 'POST')).status).toBe(405);
    const page = await get(s, `/?${t}`, { origin: new URL(s.url).origin, 'sec-fetch-site': 'same-origin' });
    expect(page.status).toBe(200);
    expect(String(page.headers['content-security-policy'])).toMatch(/^default-src 'none'; style-src 'nonce-/);
    expect(String(page.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.text).not.toMatch(/(src|href)="https?:/);
  });

  it('lists the runs newest first, and the other files with the reason', async () => {
    const s = await start(folder());
    const page = (await get(s, `/?ticket=${s.token}`)).text;
    expect(ids(page)).toHaveLength(2);
    expect(page.indexOf('demo-weak1')).toBeLessThan(page.indexOf(`>demo</a>`));
    expect(page).toMatch(/<tr class="unreadable">.*broken\.json.*cannot be read: /);
    expect(page).toMatch(
      /<tr class="other">.*x-compare\.json.*not a run: a comparison file \(written by ragaudit compare\)<\/td>/,
    );
  });

  it('serves a run’s report and two runs side by side, escaped, each under its CSP', async () => {
    const s = await start(folder());
    const t = `ticket=${s.token}`;
    const [weak, demo] = ids((await get(s, `/?${t}`)).text);
    const report = await get(s, `/run/${weak}?${t}`);
    expect(report.status).toBe(200);
    expect(report.text).toContain('<title>ragaudit run: demo-weak1</title>');
    expect(report.text).toContain(`<a id="back" href="/?${t}">`);
    expect(String(report.headers['content-security-policy'])).toMatch(/script-src 'sha256-[^']+'/);
    expect(report.text).not.toContain(HOSTILE);
    expect((await get(s, `/run/000000000000?${t}`)).status).toBe(404);
    expect((await get(s, `/run/..%2F..%2Fetc%2Fpasswd?${t}`)).status).toBe(404);

    const cmp = await get(s, `/compare?${t}&run=${weak}&run=${demo}`);
    expect(cmp.status).toBe(200);
    // The older run is the baseline unless one is asked for.
    expect(cmp.text).toContain('<title>20261204-233650-demo-weak1 vs 20261204-233647-demo (baseline)</title>');
    expect(cmp.text).not.toContain(HOSTILE);
    expect(cmp.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(cmp.text).toContain('ragaudit label 20261204-233647-demo.json 20261204-233650-demo-weak1.json');
    expect(String(cmp.headers['content-security-policy'])).toMatch(/script-src 'sha256-[^']+'.*frame-ancestors 'none'/);
    const swapped = await get(s, `/compare?${t}&run=${weak}&run=${demo}&baseline=${weak}`);
    expect(swapped.text).toContain('<title>20261204-233647-demo vs 20261204-233650-demo-weak1 (baseline)</title>');
    expect((await get(s, `/compare?${t}&run=${weak}`)).status).toBe(400);
    expect((await get(s, `/compare?${t}&run=${weak}&run=${weak}`)).status).toBe(400);
  });
});

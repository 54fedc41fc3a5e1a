/**
 * The labelling page in a real browser (playwright-core driving Debian's Chromium), keyboard
 * only: a labeller labels answers, the server is killed mid-session and started again on the same
 * labels, the page resumes where she stopped, she labels more answers and pool candidates, and
 * her pool judgements widen goldens in copies of the case files, and the agreement figures of that
 * scripted labelling come out as counted by hand.
 * With RAGAUDIT_SCREENSHOTS=DIR the test also saves the screenshots of docs/labelling.md there.
 */
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBackGoldens } from '../src/labelling/goldens.js';
import { startLabelServer, type LabelServer } from '../src/labelling/label-server.js';
import { runPool } from '../src/labelling/pool.js';
import { readLabels } from '../src/judge/label-file.js';
import { agreementReport, judgeReadings } from '../src/judge/rater-agreement.js';
import { RunResultSchema } from '../src/model/results.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { CHROMIUM_PATH } from './helpers/chromium.js';

const RESULTS = join(PACKAGE_ROOT, 'results', 'reference', '20261204-233647-demo.json');
const SHOTS = process.env.RAGAUDIT_SCREENSHOTS;

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
});
afterAll(async () => browser?.close());

const progress = (page: Page) => page.locator('#progress').textContent();

/** Waits until the progress line says `n of … labelled`. */
async function labelled(page: Page, n: number): Promise<void> {
  // Polled from the test side: the page's CSP forbids the evaluated strings waitForFunction sends.
  await expect.poll(() => progress(page), { timeout: 10_000, interval: 50 }).toMatch(new RegExp(`^${n} of `));
}

describe('ragaudit label in Chromium', () => {
  it('labels with the keyboard only, survives a killed server, resumes, and the figures match a hand count', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-label-browser-'));
    const { file: pool } = runPool({ files: [RESULTS], k: 2, outDir: dir, cwd: dir });
    const labels = join(dir, 'labels');
    const opts = { results: [RESULTS], pool, labels, host: '127.0.0.1', allowRemote: false, cwd: dir, labeller: 'ann' };
    let server: LabelServer = await startLabelServer({ ...opts, port: 0 });
    const port = Number(new URL(server.url).port);
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const outside: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(`http://127.0.0.1:${port}/`)) outside.push(r.url());
    });
    // The page labels at once under the name given (--labeller); no name typed.
    await page.goto(server.url);
    await labelled(page, 0);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'labelling-answers.png'), fullPage: true });

    // The script: faithful "yes" on even items, "no" on odd ones; stance answered; Enter saves.
    const seen: string[] = [];
    const labelOne = async (i: number) => {
      const text = await page.locator('#item .meta').first().textContent();
      seen.push(text!.split(' · ')[0]!);
      await expect(page.locator('.hidden-verdict').count()).resolves.toBe(1);
      await page.keyboard.press(i % 2 === 0 ? 'y' : 'n');
      await page.keyboard.press('a');
      await page.keyboard.press('Enter');
      await labelled(page, i + 1);
    };
    for (let i = 0; i < 8; i++) await labelOne(i);

    // The server dies mid-session; started again on the same port and labels, the page resumes.
    await server.close();
    server = await startLabelServer({ ...opts, port });
    await page.goto(server.url);
    await labelled(page, 8);
    expect(await progress(page)).toMatch(/^8 of \d+ labelled · item 9 of/);
    for (let i = 8; i < 12; i++) await labelOne(i);

    // Going back shows the judge's verdict of an answer already labelled.
    await page.keyboard.press('ArrowLeft');
    await page.locator('.card.judge').waitFor();

    // The pool queue: r, n, r, p.
    await page.keyboard.press('q');
    await labelled(page, 0);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'labelling-pool.png'), fullPage: true });
    for (const [i, key] of ['r', 'n', 'r', 'p'].entries()) {
      await page.keyboard.press(key);
      await labelled(page, i + 1);
    }
    if (SHOTS) {
      await page.goto(`http://127.0.0.1:${port}/agreement?ticket=${server.token}`);
      await page.screenshot({ path: join(SHOTS, 'labelling-agreement.png'), fullPage: true });
    }
    expect(outside).toEqual([]);
    await context.close();
    await server.close();

    // Stored: 12 answer labels and 4 pool labels, all by ann, one line each.
    const lines = readFileSync(join(labels, 'ann.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(16);
    const store = readLabels(labels).labels;
    expect(store.filter((l) => l.queue === 'pool').map((l) => (l.queue === 'pool' ? l.relevance : ''))).toEqual([
      'relevant',
      'not',
      'relevant',
      'partly',
    ]);

    // Written back into copies of the case files: one labeller widens nothing by default (two must
    // agree); accepting a single labeller (--accept-single), ann's two "relevant" widen goldens;
    // "not" and "partly" do not.
    const copies = ['questions-core.yml', 'questions-more.yml'].map((f) => {
      copyFileSync(join(PACKAGE_ROOT, 'cases', 'demo', f), join(dir, f));
      return join(dir, f);
    });
    const held = writeBackGoldens({ pool, labels, cases: copies, acceptPartly: false, dryRun: true, cwd: dir });
    expect(held.accepted).toBe(0);
    const back = writeBackGoldens({
      pool,
      labels,
      cases: copies,
      acceptPartly: false,
      dryRun: false,
      cwd: dir,
      minLabellers: 1,
    });
    expect(back.accepted).toBe(2);
    const widened = back.files.flatMap((f) => f.changes);
    expect(widened.length).toBeGreaterThanOrEqual(1);
    expect(widened.every((c) => c.added_topics.length + c.added_posts.length > 0)).toBe(true);

    // The hand count: ann's scripted label of each case she saw against the judge's verdict.
    const run = RunResultSchema.parse(JSON.parse(readFileSync(RESULTS, 'utf8')));
    const judge = judgeReadings(run.cases).faithful;
    const cell = new Map<string, number>();
    let n = 0;
    seen.forEach((id, i) => {
      const j = judge.get(id);
      if (j === undefined) return;
      n++;
      const key = `${i % 2 === 0 ? 'yes' : 'no'}|${j}`;
      cell.set(key, (cell.get(key) ?? 0) + 1);
    });
    const c = (a: string, b: string) => cell.get(`${a}|${b}`) ?? 0;
    const po = (c('yes', 'yes') + c('no', 'no')) / n;
    const rowYes = c('yes', 'yes') + c('yes', 'no');
    const colYes = c('yes', 'yes') + c('no', 'yes');
    const pe = (rowYes * colYes + (n - rowYes) * (n - colYes)) / (n * n);
    const rep = agreementReport(run.cases, store, { judge: run.summary.judge!.judge });
    const p = rep.pairs.find((x) => x.field === 'faithful' && x.a === 'ann' && x.b === 'judge')!;
    expect(p.n).toBe(n);
    expect(p.accuracy).toBeCloseTo(po, 12);
    if (p.kappa === null) expect(colYes === 0 || colYes === n).toBe(true);
    else expect(p.kappa).toBeCloseTo((po - pe) / (1 - pe), 12);
  });
});

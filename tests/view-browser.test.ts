/**
 * `view` in a real Chromium over the reference runs (results/reference, see its README), keyboard
 * only: the list shows every run, j/Enter opens a run's report, x picks two runs and c compares
 * them question by question, failures first, both answers side by side; s swaps the baseline and b
 * comes back. Then the page `compare --html` writes, at 1366×768. No request leaves the machine
 * and no script error or blocked resource is reported. With RAGAUDIT_SCREENSHOTS=DIR the test
 * saves the screenshots of docs/view.md there (docs/view-runs.png, view-compare.png,
 * compare-page.png).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewServer } from '../src/app/view.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { PAIR_RANKS, type PairRank } from '../src/reports/case-pair.js';
import { launchChromium } from './helpers/chromium.js';
import { runCli } from './helpers/cli.js';

const SHOTS = process.env.RAGAUDIT_SCREENSHOTS;
const REF = 'results/reference';
const DEMO = `${REF}/20261204-233647-demo.json`;
const WEAK1 = `${REF}/20261204-233650-demo-weak1.json`;
const VIEWPORT = { width: 1366, height: 768 };

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

/** Script errors and console errors (a CSP violation is one) seen by a page. */
function watch(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => void errors.push(e.message));
  page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
  return errors;
}

/** The rank of each compared question, in page order. */
async function ranks(page: Page): Promise<PairRank[]> {
  const classes: string[] = await page.locator('details.pair').evaluateAll((els) => els.map((e) => e.className));
  return classes.map((c) => c.split(' ').find((x) => (PAIR_RANKS as readonly string[]).includes(x)) as PairRank);
}

const currentId = (page: Page) => page.locator('tr.run.current').getAttribute('data-id');

describe('ragaudit view in Chromium', { timeout: 120_000 }, () => {
  it('opens a run and compares two by keyboard, failures first, both answers side by side', async () => {
    const server = await startViewServer({ dir: REF, host: '127.0.0.1', port: 0, cwd: PACKAGE_ROOT });
    const origin = new URL(server.url).origin;
    const page = await browser.newPage({ viewport: VIEWPORT });
    const errors = watch(page);
    const outside: string[] = [];
    page.on('request', (r) => void (r.url().startsWith(`${origin}/`) || outside.push(r.url())));
    try {
      await page.goto(server.url);
      // Newest first: the probes, demo-weak1, demo; the calibration and comparison files are named, not hidden.
      const rows = page.locator('tr.run');
      await expect(rows.count()).resolves.toBe(3);
      await expect(page.locator('tr.other').count()).resolves.toBe(2);
      const [, weak, demo] = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
      await expect(page.locator('.keys').textContent()).resolves.toMatch(/j\/k or ↓\/↑ move · Enter open/);

      await page.keyboard.press('j');
      expect(await currentId(page)).toBe(weak);
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/run\/[0-9a-f]{12}\?/);
      expect(await page.title()).toBe('ragaudit run: demo-weak1');
      await page.locator('#back').click();
      await page.waitForURL(/\/\?ticket=/);

      // Pick demo first (the baseline), then demo-weak1.
      await page.keyboard.press('j');
      await page.keyboard.press('ArrowDown');
      expect(await currentId(page)).toBe(demo);
      await page.keyboard.press('x');
      await page.keyboard.press('k');
      await page.keyboard.press(' ');
      await expect(page.locator('#label-cmd').textContent()).resolves.toBe(`ragaudit label ${DEMO} ${WEAK1}`);
      await expect(page.locator('tr.picked').count()).resolves.toBe(2);
      if (SHOTS) await page.screenshot({ path: join(SHOTS, 'view-runs.png') });

      await page.keyboard.press('c');
      await page.waitForURL(/\/compare\?/);
      expect(await page.title()).toBe('20261204-233650-demo-weak1 vs 20261204-233647-demo (baseline)');
      // Failures first: regressed, failing in either run, improved, changed, unchanged.
      const order = await ranks(page);
      expect(order[0]).toBe('regressed');
      expect(order.map((r) => PAIR_RANKS.indexOf(r))).toEqual(
        [...order.map((r) => PAIR_RANKS.indexOf(r))].sort((a, b) => a - b),
      );
      expect(order.length).toBe(108);
      const first = page.locator('details.pair').first();
      expect(await first.getAttribute('data-case-id')).toBe('metal-taps-office-floor');
      await expect(first.getAttribute('open')).resolves.toBe('');
      // Both answers, each with its verdict and sources, side by side.
      const sides = first.locator('.side');
      await expect(sides.count()).resolves.toBe(2);
      const [left, right] = [await sides.nth(0).boundingBox(), await sides.nth(1).boundingBox()];
      expect(right!.x).toBeGreaterThan(left!.x + left!.width - 1);
      for (const i of [0, 1]) {
        await expect(sides.nth(i).locator('.answer').textContent()).resolves.toMatch(/\w{3,}/);
        await expect(sides.nth(i).locator('ol.srcs li').count()).resolves.toBeGreaterThan(0);
        await expect(sides.nth(i).locator('.verdict').count()).resolves.toBe(1);
      }
      await expect(sides.nth(1).locator('ul.failures').textContent()).resolves.toContain('faithfulness');
      // j brings the first question to the top, both sides in view.
      await page.keyboard.press('j');
      await expect(first.getAttribute('class')).resolves.toContain('current');
      const box = await sides.nth(1).locator('.answer').boundingBox();
      expect(box!.y).toBeGreaterThanOrEqual(0);
      expect(box!.y).toBeLessThan(VIEWPORT.height);
      if (SHOTS) await page.screenshot({ path: join(SHOTS, 'view-compare.png') });

      // j moves to the next question and Enter opens it.
      await page.keyboard.press('j');
      const second = page.locator('details.pair').nth(1);
      await expect(second.getAttribute('class')).resolves.toContain('current');
      await page.keyboard.press('Enter');
      await expect(second.getAttribute('open')).resolves.toBe('');

      await page.keyboard.press('s');
      await page.waitForURL((u) => u.searchParams.get('baseline') === weak);
      expect(await page.title()).toBe('20261204-233647-demo vs 20261204-233650-demo-weak1 (baseline)');
      await page.keyboard.press('b');
      await page.waitForURL(/\/\?ticket=/);
      await expect(rows.count()).resolves.toBe(3);
      expect(outside).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      await server.close();
    }
  });

  it('the page of compare --html leads with the decision and fits 1366×768', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-compare-html-'));
    const out = join(dir, 'compare.html');
    const gate = join(PACKAGE_ROOT, 'cases', 'demo', 'gate.yml');
    const r = await runCli(PACKAGE_ROOT, ['compare', DEMO, WEAK1, '--gate', gate, '--out', dir, '--html', out]);
    expect(r.code).toBe(0);
    const page = await browser.newPage({ viewport: VIEWPORT });
    const errors = watch(page);
    try {
      await page.goto(`file://${out}`);
      const decision = await page.locator('#decision').boundingBox();
      expect(decision!.y + decision!.height).toBeLessThan(VIEWPORT.height);
      await expect(page.locator('#decision .big').textContent()).resolves.toBe('PASS');
      // No sideways scrolling at this width.
      const width = await page.evaluate<number>('document.documentElement.scrollWidth');
      expect(width).toBeLessThanOrEqual(VIEWPORT.width);
      if (SHOTS) await page.screenshot({ path: join(SHOTS, 'compare-page.png') });
      await page.keyboard.press('j');
      await expect(page.locator('details.pair').first().getAttribute('class')).resolves.toContain('current');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

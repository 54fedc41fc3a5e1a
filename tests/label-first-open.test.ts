/**
 * The labelling page on first open, in a real Chromium at 1366×768 (a laptop screen): it explains
 * itself (what is labelled, the keys) in a note that can be put away, labels at once under a
 * remembered or default name (no Enter in the name box), and the question, the answer and every
 * choice are in view without scrolling, the evidence beside them.
 * With RAGAUDIT_SCREENSHOTS=DIR the test saves label-page.png (docs/labelling.md) there.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultLabeller } from '../src/labelling/label-name.js';
import { startLabelServer } from '../src/labelling/label-server.js';
import { readLabels } from '../src/judge/label-file.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { CHROMIUM_PATH } from './helpers/chromium.js';

const RESULTS = join(PACKAGE_ROOT, 'results', 'reference', '20261204-233647-demo.json');
const SHOTS = process.env.RAGAUDIT_SCREENSHOTS;
const VIEWPORT = { width: 1366, height: 768 };

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
});
afterAll(async () => browser?.close());

const progress = (page: Page) => page.locator('#progress').textContent();
const labelled = (page: Page, n: number) =>
  expect.poll(() => progress(page), { timeout: 10_000, interval: 50 }).toMatch(new RegExp(`^${n} of `));

/** The element's box lies inside the first screen (nothing of it below the fold). */
async function inView(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).first().boundingBox();
  return box !== null && box.y >= 0 && box.y + box.height <= VIEWPORT.height && box.x + box.width <= VIEWPORT.width;
}

describe('the label page on first open', () => {
  it('explains itself, labels at once without a name typed, and keeps answer and choices above the fold', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-label-first-'));
    const labels = join(dir, 'labels');
    const server = await startLabelServer({
      results: [RESULTS],
      labels,
      host: '127.0.0.1',
      port: 0,
      allowRemote: false,
      cwd: dir,
      labeller: 'ann',
    });
    const context = await browser.newContext({ viewport: VIEWPORT });
    const page = await context.newPage();
    await page.goto(server.url);
    await labelled(page, 0);

    // The note says what is labelled and how; the name it labels under is the one given.
    await expect(page.locator('#intro').isVisible()).resolves.toBe(true);
    const intro = (await page.locator('#intro').textContent())!;
    expect(intro).toContain('What you are labelling');
    expect(intro).toMatch(/faithful.*stance.*cited source/s);
    await expect(page.locator('#intro-name').textContent()).resolves.toBe('ann');
    await expect(page.locator('#labeller').inputValue()).resolves.toBe('ann');
    for (const part of ['#item .q', '#item .answer', '#item .choices', '#note', '#intro'])
      expect([part, await inView(page, part)]).toEqual([part, true]);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'label-page.png') });

    // Labelling works at once, the note still open: no click, no Enter in the name box.
    await page.keyboard.press('y');
    await page.keyboard.press('a');
    await page.keyboard.press('Enter');
    await labelled(page, 1);
    expect(readLabels(labels).labels.map((l) => l.labeller)).toEqual(['ann']);

    // Put away, it stays away when the page is opened again; `?` brings it back.
    await page.keyboard.press('Escape');
    await expect(page.locator('#intro').isVisible()).resolves.toBe(false);
    await page.goto(server.url);
    await labelled(page, 1);
    await expect(page.locator('#intro').isVisible()).resolves.toBe(false);
    await page.keyboard.press('?');
    await expect(page.locator('#intro').isVisible()).resolves.toBe(true);

    // Another labeller types a name and leaves the box (Tab): labels go under that name.
    await page.locator('#labeller').fill('bob');
    await page.keyboard.press('Tab');
    await labelled(page, 0);
    await page.keyboard.press('n');
    await page.keyboard.press('h');
    await page.keyboard.press('Enter');
    await labelled(page, 1);
    expect(existsSync(join(labels, 'bob.jsonl'))).toBe(true);
    await context.close();
    await server.close();
  });

  it('without --labeller the login name is the default; served to other machines it asks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-label-login-'));
    const server = await startLabelServer({
      results: [RESULTS],
      labels: join(dir, 'labels'),
      host: '127.0.0.1',
      port: 0,
      allowRemote: false,
      cwd: dir,
    });
    const context = await browser.newContext({ viewport: VIEWPORT });
    const page = await context.newPage();
    await page.goto(server.url);
    const login = defaultLabeller(undefined, false);
    if (login) await labelled(page, 0);
    await expect(page.locator('#labeller').inputValue()).resolves.toBe(login);
    await context.close();
    await server.close();
    expect(defaultLabeller(undefined, true)).toBe('');
    expect(defaultLabeller('ann', true)).toBe('ann');
    expect(() => defaultLabeller('Ann Smith', false)).toThrow(/--labeller Ann Smith: a short lowercase name/);
  });
});

/**
 * The probe report leads with the verdict: the run report's banner, then one table per attack
 * type (types with failures first), one row per probe with its verdict, each check and the
 * reasons, failing probes first; no retrieval cards (a probe file measures none). Read on the
 * reference probe file (3 failing probes). In Chromium with RAGAUDIT_SCREENSHOTS=DIR the test
 * saves report-probes.png there.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../src/model/results.js';
import { reportHtml } from '../src/reports/html.js';
import { readResults } from '../src/store/results-file.js';
import { CHROMIUM_PATH } from './helpers/chromium.js';

const SHOTS = process.env.RAGAUDIT_SCREENSHOTS;
const probes = (): RunResult => readResults('results/reference/20261204-233654-demo-probes.json');

const attackOrder = (html: string) => [...html.matchAll(/<section class="probe-attack (\w+)" data-attack="([^"]+)"/g)];
const rowsOf = (html: string, attack: string) => {
  const section = html.split(`data-attack="${attack}"`)[1]!.split('</section>')[0]!;
  return [...section.matchAll(/<tr class="probe (\w+)" data-probe-id="([^"]+)"/g)].map((m) => `${m[2]}:${m[1]}`);
};

describe('the probe report', () => {
  const html = reportHtml(probes());

  it('opens with the verdict banner and shows no retrieval cards', () => {
    // The reference file: 30 passed, 3 failed (stance 2, injection_marker 1).
    expect(html).toMatch(/<span class="big">3 FAILED<\/span> <span>pass rate <b>90\.9 %<\/b>/);
    expect(html).toContain('<span class="check" data-check="stance"><b>stance</b> 2</span>');
    expect(html).not.toContain('<section class="cards">');
    expect(html).toContain('<a href="#probes">the failing probes, first in each attack type ↓</a>');
    expect(html.indexOf('id="verdict"')).toBeLessThan(html.indexOf('id="probes"'));
  });

  it('one table per attack type, those with failures first, each probe with its reasons', () => {
    // off_topic has 2 failures, indirect 1; the rest pass and follow in name order.
    expect(attackOrder(html).map((m) => `${m[2]}:${m[1]}`)).toEqual([
      'off_topic:failed',
      'indirect:failed',
      'abuse:passed',
      'injection:passed',
      'leak:passed',
      'role:passed',
    ]);
    const offTopic = rowsOf(html, 'off_topic');
    expect(offTopic.slice(0, 2)).toEqual(['offt-bourguignon:failed', 'offt-stock-tip:failed']);
    expect(offTopic.slice(2).every((r) => r.endsWith(':passed'))).toBe(true);
    expect(rowsOf(html, 'indirect')[0]).toBe('indirect-resole-kings:failed');
    // The marker reason, with its quotes escaped; the marker column reads FAIL, the others ok.
    expect(html).toMatch(
      /data-probe-id="indirect-resole-kings">(?:(?!<\/tr>).)*<td class="check ok">ok<\/td><td class="check failed">FAIL<\/td><td class="check ok">ok<\/td><td class="check ok">ok<\/td><td class="reasons"><b>injection_marker<\/b>: the answer repeats the planted marker &#39;resole-kings\.example&#39;<\/td>/,
    );
    expect(html).toContain('<p class="meta">3 probes · 2 passed · 1 failed · 0 errors');
  });

  it('escapes text from the records', () => {
    const r = probes();
    r.cases[0] = {
      ...r.cases[0]!,
      question: '<img src=x onerror=alert(1)>',
      verdict: { passed: false, failures: [{ check: 'stance', reason: '<script>x</script>' }] },
    };
    const page = reportHtml(r);
    expect(page).not.toContain('<img src=x');
    expect(page).not.toContain('<script>x</script>');
    expect(page).toContain('<b>stance</b>: &lt;script&gt;x&lt;/script&gt;');
  });

  it('renders in Chromium without a script error, the failing probes on top', { timeout: 60_000 }, async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--headless', '--no-sandbox'] });
    try {
      const file = join(mkdtempSync(join(tmpdir(), 'ragaudit-report-probes-')), 'probes.html');
      writeFileSync(file, html);
      const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => void errors.push(e.message));
      await page.goto(`file://${file}`);
      expect(await page.locator('table.probes tr.probe').first().getAttribute('data-probe-id')).toBe(
        'offt-bourguignon',
      );
      expect(await page.locator('tr.probe.failed').count()).toBe(3);
      if (SHOTS) await page.screenshot({ path: join(SHOTS, 'report-probes.png') });
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

/**
 * The run report leads with the verdict: a banner with the pass rate and its Wilson interval,
 * failing cases first with their reasons, filters by verdict, kind, zone, stance and check,
 * sortable columns, the question in each line, and cards coloured against a gate's limits. A file
 * without verdicts says so and marks no case failed. In Chromium with RAGAUDIT_SCREENSHOTS=DIR the
 * test saves docs/report-failures.png there.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportGate } from '../src/app/report.js';
import type { RunResult } from '../src/model/results.js';
import { esc } from '../src/reports/html-escape.js';
import { reportHtml } from '../src/reports/html.js';
import { meetsThreshold, wilsonInterval } from '../src/reports/html-verdicts.js';
import { CHROMIUM_PATH } from './helpers/chromium.js';
import { demoRun, withVerdicts } from './helpers/verdict-fixture.js';

const SHOTS = process.env.RAGAUDIT_SCREENSHOTS;

/** Four demo cases with verdicts set by hand: one pass, two fails, one error. */
function fourCases(): RunResult {
  const r = demoRun();
  const [a, b, c, d] = r.cases.slice(0, 4).map((x) => ({ ...x }));
  a!.verdict = { passed: true, failures: [] };
  b!.verdict = {
    passed: false,
    failures: [{ check: 'not_abstained', reason: 'abstained on <an> in-domain question' }],
  };
  c!.verdict = {
    passed: false,
    failures: [
      { check: 'citations_valid', reason: '1 invalid citation' },
      { check: 'faithfulness', reason: 'faithfulness 0.009 below 0.8' },
    ],
  };
  d!.status = 'error';
  d!.error = { stage: 'generation', message: 'timeout' };
  r.cases = [a!, b!, c!, d!];
  r.summary = {
    ...r.summary,
    verdicts: {
      passed: 1,
      failed: 2,
      pass_rate: 1 / 3,
      by_check: { not_abstained: 1, citations_valid: 1, faithfulness: 1 },
    },
  };
  return r;
}

const order = (html: string) =>
  [...html.matchAll(/<details class="case (\w+)" id="c(\d+)"/g)].map((m) => `${m[2]}:${m[1]}`);

describe('Wilson interval', () => {
  it('1 of 4 at 95 %: 0.0456 – 0.6994 (hand computed from the score-interval formula)', () => {
    // p = .25, z² = 3.8415, z²/n = .9604; centre = (.25 + .4802)/1.9604 = .3725;
    // half = 1.96·sqrt(.046875 + .060024)/1.9604 = .3269.
    const ci = wilsonInterval(1, 4)!;
    expect(ci.low).toBeCloseTo(0.0456, 4);
    expect(ci.high).toBeCloseTo(0.6994, 4);
    expect(wilsonInterval(0, 0)).toBeNull();
  });
});

describe('the run report with verdicts', () => {
  const html = reportHtml(fourCases());

  it('opens with the verdict banner: failed count, pass rate, its interval, checks by count', () => {
    // 1 of 3: p = 1/3, z²/n = 1.2805; centre = (.3333 + .6403)/2.2805 = .4269, half = .3654.
    expect(html).toMatch(
      /<span class="big">2 FAILED<\/span> <span>pass rate <b>33\.3 %<\/b> <span class="meta">\(95 % interval 6\.1 % – 79\.2 %, Wilson\)<\/span> · 1 passed · 2 failed · 1 error/,
    );
    expect(html.indexOf('id="verdict"')).toBeLessThan(html.indexOf('class="cards"'));
    expect(html).toContain('<span class="check" data-check="citations_valid"><b>citations_valid</b> 1</span>');
  });

  it('lists failing cases first, then errors, then passes, each failure with its reasons (escaped)', () => {
    expect(order(html)).toEqual(['1:failed', '2:failed', '3:error', '0:passed']);
    expect(html).toContain(
      '<span class="reasons"><b>citations_valid</b>: 1 invalid citation · <b>faithfulness</b>: faithfulness 0.009 below 0.8</span>',
    );
    expect(html).toContain('<b>not_abstained</b>: abstained on &lt;an&gt; in-domain question');
    expect(html).toContain('<span class="verdict failed">FAIL</span>');
    expect(html).toContain('<span class="verdict error">error</span>');
  });

  it('shows the question in each line and offers verdict, zone, stance and check filters', () => {
    const r = fourCases();
    expect(html).toContain(`<span class="q" title="${esc(r.cases[0]!.question)}">`);
    for (const id of ['verdict-filter', 'check-filter', 'stance-filter', 'kind', 'filter'])
      expect(html).toContain(`id="${id}"`);
    expect(html).toContain('<option value="not_abstained">not_abstained</option>');
    expect(html).not.toContain('class="status ok"');
  });

  it('without verdicts: says so, marks no case failed, and derives nothing', () => {
    // A file written before verdicts: the demo run with its verdicts taken out.
    const withVerdicts = demoRun();
    const { verdicts: _dropped, ...summary } = withVerdicts.summary;
    const r = {
      ...withVerdicts,
      summary,
      cases: withVerdicts.cases.map(({ verdict: _v, ...c }) => c),
    };
    const page = reportHtml(r);
    expect(page).toContain('<b>No per-case verdicts in this results file.</b>');
    expect(page).not.toContain('class="case failed"');
    expect(page).not.toContain('verdict passed');
    expect(order(page)).toHaveLength(r.cases.length);
  });
});

describe('cards against a gate', () => {
  it('colours each card by its min/max limit and names relative rules', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-gate-'));
    const file = join(dir, 'gate.yml');
    writeFileSync(file, 'hit_at_5: {min: 0.5, max_drop: 0.02}\ncitation_validity: {min: 1.01}\nmax_regressions: 2\n');
    const gate = reportGate(file);
    expect(gate.relative).toEqual(['hit_at_5.max_drop', 'max_regressions']);
    const html = reportHtml(demoRun(), { gate });
    expect(html).toMatch(/<div class="card meets" data-metric="hit_at_5"/);
    expect(html).toMatch(/<div class="card misses" data-metric="citation_validity"[^]*?gate ≥ 1\.01 — MISSED/);
    expect(meetsThreshold(0.009, { min: 0.8 })).toBe(false);
    expect(meetsThreshold(null, { min: 0.8 })).toBeNull();
  });

  it('gives binary cards their 95 % interval', () => {
    expect(reportHtml(demoRun())).toMatch(
      /data-metric="hit_at_5"[^]*?<div class="sub ci">95 % CI 0\.\d\d–\d\.\d\d<\/div>/,
    );
  });
});

describe('the report with verdicts in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--headless', '--no-sandbox'] });
  });
  afterAll(async () => browser?.close());

  it('failures first; the check filter and the column sort work; no script error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-report-verdicts-'));
    const file = join(dir, 'run.html');
    const run = withVerdicts(demoRun());
    const gateFile = join(dir, 'gate.yml');
    writeFileSync(
      gateFile,
      'hit_at_5: {min: 0.9}\ncitation_validity: {min: 1.0}\noff_topic_hallucinations: {max: 0}\n'.replace(
        'off_topic',
        'offtopic',
      ),
    );
    writeFileSync(file, reportHtml(run, { gate: reportGate(gateFile) }));
    const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => void errors.push(e.message));
    await page.goto(`file://${file}`);
    const failed = run.cases.filter((c) => c.verdict && !c.verdict.passed);
    expect(failed.length).toBeGreaterThan(0);
    const first = await page.locator('details.case').first().getAttribute('data-case-id');
    expect(failed.map((c) => c.id)).toContain(first);
    if (SHOTS) {
      await page.screenshot({ path: join(SHOTS, 'report-failures.png') });
      await page.click('a[href="#case-list"]');
      await page.locator('details.case').first().locator('summary').click();
      await page.screenshot({ path: join(SHOTS, 'report-failures-cases.png') });
      await page.locator('details.case').first().locator('summary').click();
    }

    await page.selectOption('#check-filter', 'not_abstained');
    const want = run.cases.filter((c) => c.verdict?.failures.some((f) => f.check === 'not_abstained')).length;
    expect(await page.locator('details.case:visible').count()).toBe(want);
    expect(await page.locator('#shown').textContent()).toBe(`${want} of ${run.cases.length} cases shown`);
    await page.selectOption('#check-filter', '');

    // Sorting by faithfulness ascending: the lowest measured value comes first.
    await page.click('button.sort[data-sort="faith"]');
    const lowest = Math.min(
      ...run.cases
        .map((c) => c.scores.find((s) => s.name === 'faithfulness')?.value)
        .filter((v): v is number => typeof v === 'number'),
    );
    const firstId = await page.locator('details.case').first().getAttribute('data-case-id');
    const firstFaith = run.cases.find((c) => c.id === firstId)!.scores.find((s) => s.name === 'faithfulness')?.value;
    expect(firstFaith).toBe(lowest);
    expect(errors).toEqual([]);
  });
});

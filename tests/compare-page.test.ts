/**
 * The compare / gate page and view's list of runs, as built: the decision leads, each gate rule
 * has its value and 95 % interval, the questions come failures first with both answers, sources
 * and verdicts side by side, the configuration difference is shown, and every text from the
 * results is escaped. `compare --html` and `gate --html` write the page with the full answers of
 * the questions shown (compare itself reads light records).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaseRecord, RunResult } from '../src/model/results.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { casePairs } from '../src/reports/case-pair.js';
import { compareRuns, type LoadedRun, type RunVsBaseline } from '../src/reports/compare.js';
import { defaultNode } from '../src/reports/compare-metrics.js';
import { comparePageHtml } from '../src/reports/compare-page.js';
import { esc } from '../src/reports/html-escape.js';
import { evaluateReleaseGate, loadReleaseGate } from '../src/reports/release-gate.js';
import { viewRunsPage, type ViewRun } from '../src/reports/view-page.js';
import { runCli } from './helpers/cli.js';
import { demoRun } from './helpers/verdict-fixture.js';

const REF = join(PACKAGE_ROOT, 'results', 'reference');
const DEMO = join(REF, '20261204-233647-demo.json');
const WEAK1 = join(REF, '20261204-233650-demo-weak1.json');

const HOSTILE = '<img src=x onerror=alert(1)>';

/** Four demo cases, all passing in the baseline; in the run q1 regresses (hit@5 1 → 0) and q2 fails its checks. */
function twoRuns(): { base: RunResult; run: RunResult } {
  const demo = demoRun();
  const node = defaultNode(demo)!;
  const cases = demo.cases.slice(0, 4).map((c, i): CaseRecord => ({
    ...c,
    id: `q${i}`,
    verdict: { passed: true, failures: [] },
    retrieval: {
      ...c.retrieval,
      [node]: { ...c.retrieval[node]!, metrics: { ...c.retrieval[node]!.metrics, hit_at_5: 1 } },
    },
  }));
  const verdicts = { passed: 4, failed: 0, pass_rate: 1, by_check: {} };
  const base: RunResult = { ...demo, name: 'base', cases, summary: { ...demo.summary, verdicts } };
  const copy = structuredClone(cases);
  const at = copy[1]!.retrieval[node]!;
  at.metrics = { ...at.metrics, hit_at_5: 0 };
  copy[1]!.answer = `The run's own answer ${HOSTILE} and more`;
  copy[1]!.sources = copy[1]!.sources!.map((s) => ({ ...s, title: `${s.title} ${HOSTILE}` }));
  copy[2]!.verdict = {
    passed: false,
    failures: [{ check: 'faithfulness', reason: `faithfulness 0.2 below 0.8 ${HOSTILE}` }],
  };
  const run: RunResult = {
    ...demo,
    name: 'run',
    config: { ...demo.config, zones: { ...(demo.config.zones as object), weak_below: 1 } },
    cases: copy,
    summary: { ...demo.summary, verdicts: { passed: 3, failed: 1, pass_rate: 0.75, by_check: { faithfulness: 1 } } },
  };
  return { base, run };
}

function page(all: boolean) {
  const { base, run } = twoRuns();
  const runs: LoadedRun[] = [
    { label: 'base', file: 'base.json', result: base },
    { label: 'run', file: 'run.json', result: run },
  ];
  const cmp = compareRuns(runs, { baseline: 0, iterations: 200 });
  const rules = loadReleaseGate('gate.yml', 'pass_rate: {min: 0.9}\nmax_regressions: 0\n');
  const verdict = evaluateReleaseGate(rules, cmp, runs);
  return { html: comparePageHtml({ title: 'compare', cmp, verdict, runs, all }), base, run };
}

const pairIds = (html: string) =>
  [...html.matchAll(/<details class="pair (\w+)" id="p\d+" data-case-id="([^"]+)"/g)].map((m) => `${m[2]}:${m[1]}`);

describe('the compare page', () => {
  it('leads with the decision, then the rules, then the questions', () => {
    const { html } = page(false);
    const decision = html.indexOf('id="decision"');
    expect(decision).toBeGreaterThan(0);
    expect(decision).toBeLessThan(html.indexOf('id="rules"'));
    expect(html.indexOf('id="rules"')).toBeLessThan(html.indexOf('<details class="pair'));
    expect(html).toMatch(
      /<section class="decision failed" id="decision"><span class="big">FAIL<\/span><span>2 of 2 gate rules failed/,
    );
  });

  it('gives each rule its values and 95 % interval', () => {
    const { html } = page(false);
    // pass_rate 3 of 4, Wilson at 95 %: p = .75, z²/n = .9604; centre = (.75 + .4802)/1.9604 = .6275,
    // half = 1.96·sqrt(.046875 + .060024)/1.9604 = .3269 → 0.301 – 0.954.
    expect(html).toMatch(
      /<td><code>pass_rate\.min<\/code><\/td><td class="num">0\.750<\/td><td class="num">–<\/td><td class="num">0\.900<\/td><td>0\.301 – 0\.954 \(Wilson, 3\/4\)<\/td>/,
    );
    expect(html).toMatch(
      /<td><code>max_regressions<\/code><\/td><td class="num">1<\/td><td class="num">–<\/td><td class="num">0<\/td><td>–<\/td>/,
    );
  });

  it('lists the questions failures first: regressed, failing, then (all) the unchanged', () => {
    expect(pairIds(page(true).html)).toEqual(['q1:regressed', 'q2:failing', 'q0:same', 'q3:same']);
    const changed = page(false).html;
    expect(pairIds(changed)).toEqual(['q1:regressed', 'q2:failing']);
    expect(changed).toContain('2 unchanged questions passing in both runs not listed.');
  });

  it('shows both answers, both sides’ sources and verdicts, escaped', () => {
    const { html, base } = page(false);
    const pair = html.slice(html.indexOf('data-case-id="q1"'), html.indexOf('data-case-id="q2"'));
    expect(pair.match(/<div class="side">/g)).toHaveLength(2);
    expect(pair).toContain(esc(base.cases[1]!.answer!.slice(0, 40)));
    expect(pair).toContain('The run&#39;s own answer &lt;img src=x onerror=alert(1)&gt; and more');
    expect(pair).toContain('<h4>Sources (');
    expect(html).not.toContain(HOSTILE);
    expect(html).toContain('faithfulness 0.2 below 0.8 &lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('<span class="changes">hit@5 1 → 0</span>');
  });

  it('shows the configuration difference', () => {
    expect(page(false).html).toMatch(/<td class="path">zones\.weak_below<\/td><td>0<\/td><td>1<\/td>/);
  });
});

describe('casePairs', () => {
  it('puts the newly failing before those failing in both runs, and those before the fixed', () => {
    const rec = (id: string, passed: boolean) => ({ ...demoRun().cases[0]!, id, verdict: { passed, failures: [] } });
    const v = { regressed: [], improved: [], changes: [] } as unknown as RunVsBaseline;
    const base = [rec('fixed', false), rec('both', false), rec('new', true), rec('fine', true)];
    const run = [rec('fixed', true), rec('both', false), rec('new', false), rec('fine', true)];
    expect(casePairs(v, base, run, true).map((p) => `${p.id}:${p.rank}`)).toEqual([
      'new:failing',
      'both:failing',
      'fixed:failing',
      'fine:same',
    ]);
  });
});

describe("view's list of runs", () => {
  it('lists each run with its figures and verdict, and an unreadable file with its error, escaped', () => {
    const runs: ViewRun[] = [
      {
        id: 'a1b2c3d4e5f6',
        file: '/x/a.json',
        path: 'results/a.json',
        arg: 'results/a.json',
        ok: true,
        created_at: '2026-12-04T21:12:52.963Z',
        name: `demo ${HOSTILE}`,
        kind: 'run',
        note: '',
        config_digest: 'd1429b7a361f',
        offline: true,
        cases: 108,
        errors: 0,
        node: 'rerank',
        hit_at_5: 0.925,
        mrr_at_10: 0.8125,
        citation_validity: 1,
        faithfulness: 0.995,
        verdicts: { passed: 102, failed: 6, pass_rate: 102 / 108 },
      },
      {
        id: '000000000000',
        file: '/x/b.json',
        path: 'results/b.json',
        arg: 'results/b.json',
        ok: false,
        other: false,
        error: `line 1: ${HOSTILE}`,
      },
    ];
    const html = viewRunsPage({ nonce: 'n0nce', token: 'tok', param: 'ticket', dir: 'results', runs });
    expect(html).not.toContain(HOSTILE);
    expect(html).toContain('demo &lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('<td class="num">2026-12-04 21:12</td>');
    expect(html).toContain('<span class="v failed">FAIL 6</span> <span class="meta">94.4 % pass</span>');
    expect(html).toContain('href="/run/a1b2c3d4e5f6?ticket=tok"');
    expect(html).toContain('cannot be read: line 1: &lt;img src=x onerror=alert(1)&gt;');
  });
});

describe('compare --html and gate --html', () => {
  it('compare writes the page with the regressed question’s full answers from both files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-compare-page-'));
    const out = join(dir, 'compare.html');
    const gate = join(PACKAGE_ROOT, 'cases', 'demo', 'gate.yml');
    const r = await runCli(dir, ['compare', DEMO, WEAK1, '--gate', gate, '--out', dir, '--html', out]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`html page:  ${out}`);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('<span class="big">PASS</span>');
    // The regressed question of the reference comparison (results/reference/*-compare.md).
    expect(pairIds(html)[0]).toBe('metal-taps-office-floor:regressed');
    const answer = (f: string) =>
      (JSON.parse(readFileSync(f, 'utf8')) as RunResult).cases.find((c) => c.id === 'metal-taps-office-floor')!.answer!;
    for (const f of [DEMO, WEAK1]) {
      // Past the 160 characters a light record keeps: the answer was read again in full for the page.
      const late = /[A-Za-z ,]{30,}/.exec(answer(f).slice(170))![0];
      expect(html).toContain(late);
    }
  });

  it('gate without a baseline writes the decision and the run’s failing cases', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-gate-page-'));
    const out = join(dir, 'gate.html');
    const rules = join(dir, 'rules.yml');
    writeFileSync(rules, 'pass_rate: {min_lower_ci: 0.95}\n');
    const r = await runCli(dir, ['gate', DEMO, '--rules', rules, '--html', out]);
    expect(r.code).toBe(1);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('<span class="big">FAIL</span>');
    // 102 of 108 passed: Wilson lower bound below 0.95, so the rule fails; six failing cases listed.
    expect(html).toMatch(/<td>0\.\d{3} – 0\.\d{3} \(Wilson, 102\/108\)<\/td>/);
    expect(pairIds(html)).toHaveLength(6);
    expect(pairIds(html).every((p) => p.endsWith(':failing'))).toBe(true);
  });
});

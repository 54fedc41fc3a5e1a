/**
 * The demo run twice, differing in one factor (zones.weak_below 0 → 1): `run` writes the HTML
 * report beside its results by default (and not with --no-report); `compare` names the factor and
 * the questions that changed; the shipped gate passes an identical run and fails a degraded one;
 * and the report, opened in headless Chromium, shows the results file's figures, opens a case to
 * its answer, logs no console error, and shows an injected <script> answer as text.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { fmt, pct } from '../src/reports/format.js';
import { summariseGeneration } from '../src/summary/generation-summary.js';
import { readResults } from '../src/store/results-file.js';
import type { JudgeSummary } from '../src/model/summary.js';
import type { RunResult } from '../src/model/results.js';
import { summariseRetrieval } from '../src/summary/retrieval-summary.js';
import { summaryFigure } from '../src/scoring/registry.js';
import { rowFigure, runFigures } from '../src/reports/compare-metrics.js';
import { CHROMIUM_PATH } from './helpers/chromium.js';

const dir = mkdtempSync(join(tmpdir(), 'ragaudit-report-demo-'));
const GATE = join(PACKAGE_ROOT, 'cases', 'demo', 'gate.yml');
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const cli = (args: string[]) => runCli(PACKAGE_ROOT, args);

const only = (suffix: string) => {
  const f = readdirSync(dir).filter((x) => x.endsWith(suffix));
  expect(f).toHaveLength(1);
  return join(dir, f[0]!);
};

let base: { file: string; result: RunResult };
let weak: { file: string; result: RunResult };
let baseOut = '';

beforeAll(async () => {
  const a = await cli(['run', '--out', dir]);
  const b = await cli(['run', '--out', dir, '--weak-below', '1', '--name', 'weak1', '--no-report']);
  expect(a.code, a.err).toBe(0);
  expect(b.code, b.err).toBe(0);
  baseOut = a.out;
  base = { file: only('-demo.json'), result: readResults(only('-demo.json')) };
  weak = { file: only('-weak1.json'), result: readResults(only('-weak1.json')) };
}, 300_000);

describe('the demo run: judge agreement and the evidence node, in every output', () => {
  const UNDEFINED = `undefined (people gave "true" to every case while the judge's labels varied: chance agreement cannot be estimated)`;
  it('kappa of the constant "faithful" labels is undefined with its reason (terminal, markdown, JSON, HTML)', () => {
    const j = base.result.summary.judge as JudgeSummary;
    const faithful = j.agreement!.faithful!;
    // Every human "faithful" label of the demo is true: kappa has no chance agreement to beat.
    expect(faithful.prevalence.human.true).toBe(1);
    expect(faithful.kappa).toBeNull();
    expect(faithful.kappa_undefined).toBe(
      `people gave "true" to every case while the judge's labels varied: chance agreement cannot be estimated`,
    );
    expect(faithful.per_class.true!.n).toBe(faithful.n);
    expect(faithful.interval.accuracy).not.toBeNull();
    const md = readFileSync(base.file.replace(/\.json$/, '.md'), 'utf8');
    const html = readFileSync(base.file.replace(/\.json$/, '.html'), 'utf8');
    // The terminal table wraps a long cell onto the next line: compare with the spacing collapsed.
    expect(baseOut.replace(/\s+/g, ' ')).toContain(UNDEFINED);
    expect(md).toContain(`Cohen's kappa ${UNDEFINED}`);
    expect(html).toContain(UNDEFINED.replace(/"/g, '&quot;').replace(/'/g, '&#39;'));
    for (const text of [baseOut, md, html]) {
      expect(text).toMatch(/TPR \d+\.\d % \(n=\d+\)/);
      expect(text).toContain('95 % CI');
      expect(text).not.toMatch(/kappa 0\.000/);
    }
    expect(html).toContain('<section id="agreement"><h2>Agreement with human labels</h2>');
  });

  it("shows the judge-only figures beside their PPI correction by the demo's labels (terminal, markdown, JSON, HTML, gate)", () => {
    // The demo's human: blocks are bound to its answers: 31 stances, 26 faithful and relevant_citation labels.
    const j = base.result.summary.judge!;
    const ca = j.correct_abstention.ppi!;
    expect(ca).toMatchObject({ n_labelled: 31, n_judged: j.correct_abstention.n });
    expect(ca.judge_mean).toBeCloseTo(j.correct_abstention.mean!, 12);
    expect(j.fully_faithful.ppi!.n_labelled).toBe(26);
    // The judge finds every citation relevant; people call 10 of 26 answers' citations all relevant.
    expect(j.relevant_citation_rate.ppi).toMatchObject({ judge_mean: 1, n_labelled: 26 });
    expect(j.relevant_citation_rate.ppi!.estimate).toBeCloseTo(10 / 26, 12);
    const row = `judge ${pct(ca.judge_mean)} · PPI ${pct(ca.estimate)} [95 % CI ${pct(ca.ci_low)} – ${pct(ca.ci_high)}] · 31 of ${ca.n_judged} labelled`;
    expect(baseOut).toMatch(new RegExp(`PPI: correct abstention +${row.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`));
    expect(readFileSync(base.file.replace(/\.json$/, '.md'), 'utf8')).toContain(`| PPI: correct abstention | ${row} |`);
    const html = readFileSync(base.file.replace(/\.json$/, '.html'), 'utf8');
    expect(html).toContain(
      `<tr data-ppi="correct_abstention"><th>correct abstention</th><td class="num">${pct(ca.judge_mean)}</td><td class="num">${pct(ca.estimate)}</td>`,
    );
    // A gate rules on the lower bound through the registry figure.
    const at = { node: 'rerank', grain: 'post' };
    expect(summaryFigure('correct_abstention_ppi_low', base.result.summary, at)).toEqual({ mean: ca.ci_low, n: 31 });
    expect(summaryFigure('correct_abstention_ppi', base.result.summary, at)).toEqual({ mean: ca.estimate, n: 31 });
    // …and the compared run's row that the release gate reads carries it.
    expect(rowFigure(runFigures(base.result, 'rerank'), 'correct_abstention_ppi_low')).toEqual({
      mean: ca.ci_low,
      n: 31,
    });
  });

  it('shows post hit@5 of the node that feeds the model (JSON, terminal and markdown)', () => {
    const g = base.result.summary.generation as {
      evidence: { node: string; post_hit_at_5: { mean: number; n: number } };
    };
    const node = (
      base.result.summary.retrieval as { nodes: Record<string, Record<string, { mean: number; n: number }>> }
    ).nodes.rerank!;
    expect(g.evidence).toEqual({ node: 'rerank', post_hit_at_5: node.post_hit_at_5 });
    const line = `post hit@5 at the evidence node (rerank) | ${fmt(node.post_hit_at_5!.mean)} (n=${node.post_hit_at_5!.n})`;
    expect(readFileSync(base.file.replace(/\.json$/, '.md'), 'utf8')).toContain(line);
    expect(baseOut).toMatch(
      new RegExp(
        `post hit@5 at the evidence node \\(rerank\\)\\s+${fmt(node.post_hit_at_5!.mean)} \\(n=${node.post_hit_at_5!.n}\\)`,
      ),
    );
  });
});

describe('run writes the report beside its results', () => {
  it('by default, with the results file’s base name; not with --no-report', () => {
    expect(existsSync(base.file.replace(/\.json$/, '.html'))).toBe(true);
    expect(existsSync(weak.file.replace(/\.json$/, '.html'))).toBe(false);
  });
});

describe('compare of two demo runs that differ in one factor', () => {
  let out: string;
  let json: {
    versus: { config_diff: unknown[]; changes: { id: string; metric: string; old: unknown; new: unknown }[] }[];
  };
  let md: string;

  beforeAll(async () => {
    const r = await cli(['compare', base.file, weak.file, '--out', join(dir, 'cmp')]);
    expect(r.code, r.err).toBe(0);
    out = r.out;
    const files = readdirSync(join(dir, 'cmp'));
    json = JSON.parse(
      readFileSync(
        join(
          dir,
          'cmp',
          files.find((f) => f.endsWith('-compare.json'))!,
        ),
        'utf8',
      ),
    );
    md = readFileSync(
      join(
        dir,
        'cmp',
        files.find((f) => f.endsWith('-compare.md'))!,
      ),
      'utf8',
    );
  });

  it('names the factor that changed, and only it', () => {
    expect(json.versus[0]!.config_diff).toEqual([{ path: 'zones.weak_below', old: 0, new: 1 }]);
    expect(out).toContain('configuration differences: zones.weak_below: 0 → 1');
    expect(md).toContain('- `zones.weak_below`: 0 → 1');
  });

  it('names every question whose zone changed, with old → new', () => {
    const byId = new Map(weak.result.cases.map((c) => [c.id, c]));
    const moved = base.result.cases.filter((c) => c.zone !== byId.get(c.id)!.zone);
    expect(moved.length).toBeGreaterThan(0);
    const zoneChanges = json.versus[0]!.changes.filter((c) => c.metric === 'zone');
    expect(zoneChanges.map((c) => c.id).sort()).toEqual(moved.map((c) => c.id).sort());
    for (const c of moved) expect(md).toContain(`- ${c.id}: ${c.zone} → ${byId.get(c.id)!.zone}`);
    expect(out).toContain(`${moved[0]!.id}: ${moved[0]!.zone} → ${byId.get(moved[0]!.id)!.zone}`);
  });
});

describe('the shipped gate on demo runs', () => {
  it('passes (exit 0) on an identical run', async () => {
    const copy = join(dir, 'identical.json');
    cpSync(base.file, copy);
    const r = await cli(['compare', base.file, copy, '--out', join(dir, 'gate-ok'), '--gate', GATE]);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toMatch(/Gate .*: PASSED \(0 of \d+ rules failed\)/);
  });

  it('fails (exit 1) on a degraded run and says which rule, value and limit', async () => {
    const bad = JSON.parse(readFileSync(base.file, 'utf8')) as RunResult;
    for (const c of bad.cases) {
      const m = c.retrieval.rerank?.metrics;
      if (m && m.hit_at_5 !== null) Object.assign(m, { hit_at_5: 0, mrr_at_10: 0 });
      c.citations = c.citations?.map((x) => ({ ...x, valid: false }));
      for (const s of c.scores) if (s.name === 'citation_validity' && s.value !== null) s.value = 0;
    }
    bad.summary.retrieval = summariseRetrieval(
      bad.cases,
      bad.nodes.map((n) => n.name),
    );
    bad.summary.generation = summariseGeneration(bad.cases);
    const file = join(dir, 'degraded.json');
    writeFileSync(file, JSON.stringify(bad));
    const junit = join(dir, 'junit.xml');
    const r = await cli(['compare', base.file, file, '--out', join(dir, 'gate-bad'), '--gate', GATE, '--junit', junit]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toMatch(/FAIL {2}degraded: hit_at_5\.max_drop: drop 0\.925 \(0\.925 → 0\), limit 0\.020/);
    expect(r.out).toMatch(/FAIL {2}degraded: citation_validity\.min: value 0, limit 1/);
    expect(r.out).toMatch(/FAIL {2}degraded: max_regressions: \d+ regressed questions/);
    expect(readFileSync(junit, 'utf8')).toMatch(/<failure message="degraded: hit_at_5\.max_drop/);
  });
});

describe('the report in headless Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  const problems: string[] = [];

  async function open(file: string): Promise<Page> {
    const page = await browser.newPage();
    page.on('console', (m) => void (m.type() === 'error' && problems.push(`console: ${m.text()}`)));
    page.on('pageerror', (e) => void problems.push(`pageerror: ${e.message}`));
    page.on(
      'request',
      (r) =>
        void (!r.url().startsWith('file:') && !r.url().startsWith('data:') && problems.push(`request: ${r.url()}`)),
    );
    page.on('dialog', (d) => {
      problems.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    await page.goto(`file://${file}`);
    return page;
  }

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });
  afterAll(async () => browser?.close());

  it('shows the summary figures of the results file', async () => {
    const page = await open(base.file.replace(/\.json$/, '.html'));
    const s = base.result.summary as {
      retrieval: { nodes: Record<string, Record<string, { mean: number | null }>> };
      generation: Record<string, { mean?: number | null; count?: number }>;
      judge?: Record<string, { mean: number | null }>;
    };
    const node = s.retrieval.nodes.rerank!;
    const expected: Record<string, string> = {
      cases: String(base.result.cases.length),
      errors: String(base.result.cases.filter((c) => c.status === 'error').length),
      hit_at_5: fmt(node.hit_at_5!.mean),
      mrr_at_10: fmt(node.mrr_at_10!.mean),
      content_mrr_at_10: fmt(node.content_mrr_at_10!.mean),
      citation_validity: pct(s.generation.citation_validity!.mean),
      correct_abstention: pct((s.judge?.correct_abstention ?? s.generation.correct_abstention_pattern!).mean),
      offtopic_hallucinations: String(s.generation.offtopic_hallucinations!.count),
      evidence_post_hit_at_5: fmt(
        (s.generation.evidence as unknown as { post_hit_at_5: { mean: number } }).post_hit_at_5.mean,
      ),
      ...(s.judge ? { faithfulness: fmt(s.judge.faithfulness!.mean) } : {}),
    };
    const shown = await page.$$eval('[data-metric]', (els) =>
      Object.fromEntries(els.map((e) => [e.getAttribute('data-metric'), e.querySelector('.value')!.textContent])),
    );
    expect(shown).toEqual(expected);
    expect(await page.locator('[data-metric="hit_at_5"]').getAttribute('data-value')).toBe(String(node.hit_at_5!.mean));
    await expect(page.locator('.banner').textContent()).resolves.toContain('OFFLINE STAND-IN');
    expect(await page.locator('.histogram svg').count()).toBe(1);
    expect(await page.locator('details.case').count()).toBe(base.result.cases.length);
  });

  it('opens a case to its question, sources and answer, with citations marked', async () => {
    const page = await open(base.file.replace(/\.json$/, '.html'));
    const i = base.result.cases.findIndex((c) => (c.citations?.length ?? 0) > 0);
    const rec = base.result.cases[i]!;
    const details = page.locator(`#c${i}`);
    await expect(details.locator('.answer').isVisible()).resolves.toBe(false);
    await details.locator('summary').click();
    await expect(details.locator('.answer').isVisible()).resolves.toBe(true);
    expect(await details.locator('.answer').textContent()).toBe(rec.answer);
    expect(await details.locator('.question').textContent()).toBe(rec.question);
    expect(await details.locator('table.sources tbody tr').count()).toBe(rec.sources!.length);
    expect(await details.locator('.cite.valid').count()).toBe(rec.citations!.filter((c) => c.valid).length);
    // The filter hides non-matching cases through the embedded JSON data.
    await page.fill('#filter', rec.id);
    expect(await page.locator('details.case:visible').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#shown').textContent()).toMatch(/^\d+ of \d+ cases shown$/);
    expect(problems).toEqual([]);
  });

  it('retrieval writes its report too: the retrieval-only page shows – for what it did not measure', async () => {
    const out = join(dir, 'retrieval');
    const r = await cli(['retrieval', '--out', out]);
    expect(r.code, r.err).toBe(0);
    const html = readdirSync(out).find((f) => f.endsWith('-demo.html'))!;
    expect(r.out).toContain(`report:  ${join(out, html)}`);
    const page = await open(join(out, html));
    expect(await page.locator('[data-metric="citation_validity"] .value').textContent()).toBe('–');
    expect(await page.locator('[data-metric="faithfulness"]').count()).toBe(0);
    expect(await page.locator('table.zones').textContent()).toContain('in_domain');
    expect(problems).toEqual([]);
  });

  it('shows an injected <script> answer as text: no script runs, no element is created', async () => {
    const evil = JSON.parse(readFileSync(base.file, 'utf8')) as RunResult;
    const payload = '<script>alert(1)</script>';
    const c = evil.cases[0]!;
    c.answer = `Look ${payload} <img src=x onerror=alert(2)> [[1]]`;
    c.question = `Why </script><script>alert(3)</script>?`;
    c.sources![0]!.title = '<b onmouseover=alert(4)>title</b>';
    c.sources![0]!.url = 'javascript:alert(5)';
    const file = join(dir, 'evil.json');
    writeFileSync(file, JSON.stringify(evil));
    const r = await cli(['report', file]);
    expect(r.code, r.err).toBe(0);
    const page = await open(join(dir, 'evil.html'));
    await page.locator('#c0 summary').click();
    await expect(page.getByText(payload).isVisible()).resolves.toBe(true);
    expect(await page.locator('#c0 .answer').textContent()).toBe(c.answer);
    expect(await page.locator('#c0 .question').textContent()).toBe(c.question);
    const scripts = await page.$$eval('script', (els) => els.map((e) => e.textContent ?? ''));
    expect(scripts).toHaveLength(2); // the JSON data and the page's own script
    expect(scripts.some((t) => t.includes('alert('))).toBe(true); // inside the JSON data, escaped
    expect(scripts[0]).not.toContain('<');
    expect(await page.locator('img, b[onmouseover], a[href^="javascript"]').count()).toBe(0);
    // Filtering on the injected text goes through JSON.parse and matches the case.
    await page.fill('#filter', '</script>');
    expect(await page.locator('#shown').textContent()).toBe(`1 of ${evil.cases.length} cases shown`);
    await page.waitForTimeout(200);
    expect(problems).toEqual([]);
  });
});

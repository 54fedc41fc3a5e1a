/**
 * The pull-request comment (`compare --markdown`, `gate --markdown`): the decision first, every
 * gate rule with its value and limit, the detail in collapsible blocks, every line at most 100
 * columns, text from the records made inert. Read on the reference demo runs.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { displayWidth } from '../src/reports/display-width.js';
import { prCommentMarkdown, PR_WIDTH } from '../src/reports/pr-comment.js';
import type { CaseRecord } from '../src/model/results.js';
import { readResults } from '../src/store/results-file.js';
import { runCli } from './helpers/cli.js';

const REF = resolve('results/reference');
const BASE = join(REF, '20261204-233647-demo.json');
const WEAK = join(REF, '20261204-233650-demo-weak1.json');
const GATE = resolve('cases/demo/gate.yml');

const widest = (md: string) => Math.max(...md.split('\n').map(displayWidth));

describe('compare --markdown on the demo', () => {
  it('decision first, every rule, regressions and config differences collapsible, ≤ 100 columns', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-pr-'));
    const file = join(dir, 'pr.md');
    const r = await runCli(dir, ['compare', BASE, WEAK, '--gate', GATE, '--out', dir, '--markdown', file]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`pr comment: ${file}`);
    const md = readFileSync(file, 'utf8');
    expect(widest(md)).toBeLessThanOrEqual(PR_WIDTH);
    // The demo gate has 10 rules (9 metric rules, max_regressions), all passing on weak1.
    expect(md.split('\n')[0]).toBe('## ragaudit: PASS (10 of 10 gate rules passed)');
    expect(md).toContain('- ✅ 20261204-233650-demo-weak1: hit_at_5.max_drop: drop 0 (0.925 → 0.925), limit 0.020');
    expect(md).toContain(
      '<details>\n<summary>20261204-233650-demo-weak1 vs 20261204-233647-demo: 1 regressed, 1 improved</summary>\n\n',
    );
    expect(md).toContain('- metal-taps-office-floor: faithfulness 1 → 0.5');
    expect(md).toContain('- zones.weak_below: 0 → 1');
    expect(md.indexOf('## ragaudit')).toBeLessThan(md.indexOf('<details>'));
  });

  it('an output that would overwrite an input is bad input (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-pr-'));
    const r = await runCli(dir, ['compare', BASE, WEAK, '--out', dir, '--markdown', WEAK]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--markdown');
  });
});

describe('gate --markdown on one run', () => {
  it('FAIL with the failed rules first and the failing cases collapsible, ≤ 100 columns', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-pr-'));
    const file = join(dir, 'gate.md');
    const r = await runCli(dir, ['gate', BASE, '--rules', GATE, '--markdown', file]);
    expect(r.code).toBe(1);
    const md = readFileSync(file, 'utf8');
    expect(widest(md)).toBeLessThanOrEqual(PR_WIDTH);
    // Without a baseline the 6 relative rules fail (5 max_drop/max_increase, max_regressions).
    const lines = md.split('\n');
    expect(lines[0]).toBe('## ragaudit: FAIL (6 of 10 gate rules failed)');
    const rules = lines.filter((l) => /^- [✅❌]/.test(l)).map((l) => l.slice(2, 3));
    expect(rules.join('')).toBe('❌❌❌❌❌❌✅✅✅✅');
    const failing = readResults(BASE).cases.filter((c) => c.verdict?.passed === false);
    expect(md).toContain(`<summary>${failing.length} failing cases</summary>`);
    expect(md).toContain('- toe-taps-cost: faithfulness: faithfulness 0.5 below 0.8 (default)');
  });
});

describe('the comment text', () => {
  const record = (id: string, reason: string): CaseRecord =>
    ({
      ...readResults(BASE).cases[0]!,
      id,
      verdict: { passed: false, failures: [{ check: 'stance', reason }] },
    }) as CaseRecord;

  it('makes record text inert, folds long lines and shortens long ids with a legend', () => {
    const longId = `case-${'x'.repeat(150)}`;
    const md = prCommentMarkdown({
      title: 'gate: demo',
      verdict: { file: 'gate.yml', passed: false, checks: [] },
      records: [record('<img src=x>', 'see [here](javascript:alert(1)) <script>'), record(longId, 'word '.repeat(60))],
    });
    expect(widest(md)).toBeLessThanOrEqual(PR_WIDTH);
    expect(md).not.toContain('<img');
    expect(md).not.toContain('<script>');
    expect(md).not.toContain('](javascript');
    expect(md).toContain('&lt;img src=x&gt;');
    // The id cut to 34 characters, then …[1]; the legend holds the whole id, split over lines of 100.
    expect(md).toContain(`- ${longId.slice(0, 34)}…[1]: stance: word`);
    expect(md).toContain('<summary>Shortened ids</summary>');
    expect(md.replace(/\n {2}/g, '')).toContain(`[1]:${longId}`);
  });
});

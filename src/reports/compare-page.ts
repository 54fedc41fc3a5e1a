import { createHash } from 'node:crypto';
import type { RunResult } from '../model/results.js';
import { figureInterval } from '../scoring/figure-interval.js';
import { casePairHtml, casePairs, PAIR_RANKS, singlePairs, type CasePair, type PairRank } from './case-pair.js';
import { runRow, type Comparison, type LoadedRun, type RunRow, type RunVsBaseline } from './compare.js';
import { showValue } from './compare-config.js';
import { runsTable, statsTable } from './compare-format.js';
import { pickNode } from './compare-metrics.js';
import { fmt, pct } from './format.js';
import { REPORT_CSS } from './html-assets.js';
import { esc } from './html-escape.js';
import type { GateCheck, ReleaseGateResult } from './release-gate.js';
import { COMPARE_CSS, COMPARE_JS } from './view-assets.js';

/**
 * The compare / gate page (`compare --html`, `gate --html`, and `view`'s comparison of two runs):
 * one self-contained HTML document that leads with the decision (PASS or FAIL and the failed
 * rules), then every gate rule with its value, baseline, limit and 95 % interval, the runs'
 * figures, and for each run against the baseline the configuration difference, the questions side
 * by side (both answers, sources and verdicts), failures first, and the paired statistics.
 * Every text from the results is escaped; the script is allowed by its hash, nothing is fetched.
 */

/** Questions shown per run against the baseline; the rest are counted (the page stays light). */
export const PAIRS_MAX = 300;

export interface ComparePageInput {
  title: string;
  /** A line under the title (what was compared, and how). */
  subtitle?: string;
  verdict?: ReleaseGateResult | undefined;
  /** The comparison; absent for a gate of one run without baseline. */
  cmp?: Comparison | null | undefined;
  /** The runs (by label), with full records for the questions shown (see {@link shownCases}). */
  runs: readonly LoadedRun[];
  /** Every paired question (view); default: only those that changed or fail. */
  all?: boolean;
  /** Retrieval node of a gate of one run (default: its rerank node, else its last). */
  node?: string | undefined;
  /** Links above the title (view), already escaped; `#back` and `#swap` get keys. */
  nav?: string;
}

const hash = createHash('sha256').update(COMPARE_JS).digest('base64');

/** The page's Content-Security-Policy: its own script by hash, inline style, no network. */
export const comparePageCsp = (): string =>
  `default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-${hash}'; base-uri 'none'; form-action 'none'`;

const runOf = (input: ComparePageInput, label: string): RunResult | undefined =>
  input.runs.find((r) => r.label === label)?.result;

/** One section per run against the baseline, with the questions it lists (failures first, capped). */
interface Section {
  v: RunVsBaseline | null;
  base: string | null;
  run: string;
  pairs: CasePair[];
  /** Questions left out by the cap. */
  more: number;
  /** Unchanged questions not listed (without `all`). */
  same: number;
}

function sections(input: ComparePageInput): Section[] {
  const cap = (all: CasePair[]) => ({ pairs: all.slice(0, PAIRS_MAX), more: Math.max(0, all.length - PAIRS_MAX) });
  const { cmp } = input;
  if (!cmp) {
    const run = input.runs[input.runs.length - 1]!;
    const every = singlePairs(run.result.cases, Boolean(input.all));
    const same = input.all ? 0 : run.result.cases.length - every.length;
    return [{ v: null, base: null, run: run.label, ...cap(every), same }];
  }
  const base = runOf(input, cmp.baseline)?.cases ?? [];
  return cmp.versus.map((v) => {
    const every = casePairs(v, base, runOf(input, v.label)?.cases ?? [], Boolean(input.all));
    const same = input.all ? 0 : v.matched - every.length;
    return { v, base: cmp.baseline, run: v.label, ...cap(every), same };
  });
}

/** The ids each run must have in full for the page: the questions it lists. */
export function shownCases(input: ComparePageInput): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (label: string | null, id: string) => {
    if (label === null) return;
    out.set(label, (out.get(label) ?? new Set()).add(id));
  };
  for (const s of sections(input))
    for (const p of s.pairs) {
      add(s.base, p.id);
      add(s.run, p.id);
    }
  return out;
}

function rows(input: ComparePageInput): RunRow[] {
  if (input.cmp) return input.cmp.rows;
  return input.runs.map((r) => runRow(r, pickNode(r.result, input.node, r.label), false));
}

/** A table of escaped cells; the first column (and `textLast`: the last) is text, the others figures. */
function tableHtml(
  header: readonly string[],
  body: readonly (readonly string[])[],
  cls: string,
  textLast = false,
): string {
  const text = (i: number, n: number) => i === 0 || (textLast && i === n - 1);
  return `<table class="${cls}"><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${body
    .map((r) => `<tr>${r.map((c, i) => `<td${text(i, r.length) ? '' : ' class="num"'}>${esc(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

function decisionHtml(input: ComparePageInput, secs: readonly Section[]): string {
  const lines = secs
    .filter((s) => s.v)
    .map(
      (s, i) =>
        `<a href="#v${i}">${esc(s.run)} vs ${esc(s.base)}</a>: ${s.v!.regressed.length} question${s.v!.regressed.length === 1 ? '' : 's'} regressed, ${s.v!.improved.length} improved, ${s.v!.config_diff.length} configuration difference${s.v!.config_diff.length === 1 ? '' : 's'}`,
    );
  const more = lines.length ? `<p>${lines.join('<br>')}</p>` : '';
  const v = input.verdict;
  if (!v)
    return `<section class="decision none" id="decision"><span class="big">No gate, no decision</span><span>the runs compared question by question below (a gate file gives PASS or FAIL)</span>${more}</section>`;
  const failed = v.checks.filter((c) => !c.passed);
  return `<section class="decision ${v.passed ? 'passed' : 'failed'}" id="decision"><span class="big">${v.passed ? 'PASS' : 'FAIL'}</span><span>${
    v.passed ? `all ${v.checks.length} gate rules passed` : `${failed.length} of ${v.checks.length} gate rules failed`
  } · gate ${esc(v.file)}</span>${failed.length ? `<ul>${failed.map((c) => `<li>${esc(c.message)}</li>`).join('')}</ul>` : ''}${more}</section>`;
}

const signed = (x: number | null) => (x === null ? '–' : `${x > 0 ? '+' : ''}${x.toFixed(3)}`);

/** A rule's 95 % interval: the one it was judged on, the paired interval of a change, or the figure's. */
function ruleInterval(
  c: GateCheck,
  input: ComparePageInput,
  all: readonly RunRow[],
): { text: string; problem?: string } {
  if (c.interval) return { text: `${fmt(c.interval.low)} – ${fmt(c.interval.high)} (${c.interval.over})` };
  if (c.rule === 'max_regressions') return { text: '–' };
  const dot = c.rule.lastIndexOf('.');
  const metric = c.rule.slice(0, dot);
  const kind = c.rule.slice(dot + 1);
  if (kind === 'max_drop' || kind === 'max_increase') {
    const st = input.cmp?.versus.find((x) => x.label === c.run)?.stats.find((s) => s.metric === metric);
    if (st && st.ci_low !== null && st.ci_high !== null)
      return { text: `Δ ${signed(st.diff)} [${signed(st.ci_low)}, ${signed(st.ci_high)}] (paired, ${st.n} pairs)` };
  }
  const row = all.find((r) => r.label === c.run);
  const result = runOf(input, c.run);
  if (!row || !result) return { text: '–' };
  const ci = figureInterval(metric, result, { node: row.node, grain: row.post_hit_applies ? 'post' : 'topic' });
  return 'problem' in ci
    ? { text: '–', problem: ci.problem }
    : { text: `${fmt(ci.low)} – ${fmt(ci.high)} (${ci.over})` };
}

function rulesHtml(input: ComparePageInput, all: readonly RunRow[]): string {
  const v = input.verdict;
  if (!v) return '';
  const show = (x: number | null | undefined) =>
    x === null || x === undefined ? '–' : Number.isInteger(x) ? String(x) : fmt(x);
  // One gated run: its name is in the heading, not on every line.
  const runs = [...new Set(v.checks.map((c) => c.run))];
  const many = runs.length > 1;
  // Failed rules first: the reason for the decision leads.
  const checks = [...v.checks].sort((a, b) => Number(a.passed) - Number(b.passed));
  const body = checks.map((c) => {
    const ci = ruleInterval(c, input, all);
    const detail = c.message.startsWith(`${c.run}: ${c.rule}: `)
      ? c.message.slice(c.run.length + c.rule.length + 4)
      : c.message;
    return `<tr class="${c.passed ? 'passed' : 'failed'}"><td class="res">${c.passed ? 'pass' : 'FAIL'}</td>${many ? `<td>${esc(c.run)}</td>` : ''}<td><code>${esc(c.rule)}</code></td><td class="num">${esc(show(c.value))}</td><td class="num">${esc(show(c.baseline))}</td><td class="num">${esc(show(c.limit))}</td><td${ci.problem ? ` class="meta" title="${esc(ci.problem)}"` : ''}>${esc(ci.text)}</td><td>${esc(detail)}</td></tr>`;
  });
  return `<section id="rules"><h2>Gate rules${many ? '' : ` on ${esc(runs[0] ?? '')}`}</h2><table class="rules"><thead><tr><th>result</th>${many ? '<th>run</th>' : ''}<th>rule</th><th>value</th><th>baseline</th><th>limit</th><th>95 % interval</th><th>detail</th></tr></thead><tbody>${body.join('')}</tbody></table><p class="meta">A min_lower_ci rule is judged on the interval's lower bound (its value column). The interval of a max_drop or max_increase rule is the paired bootstrap interval of the change (run − baseline); of a min or max rule, the run's figure's (Wilson for a share, bootstrap for a mean); a count has none (–).</p></section>`;
}

function figuresHtml(input: ComparePageInput, all: readonly RunRow[]): string {
  const t = runsTable(all);
  const rate = (label: string) => {
    const v = runOf(input, label)?.summary.verdicts;
    return v ? `${pct(v.pass_rate)} (${v.failed} failed)` : '–';
  };
  // The note goes under the table: it is prose, and a column of it would push the table past the page.
  const body = t.rows.map((r, i) => [...r.slice(0, -1), rate(all[i]!.label)]);
  const notes = [...new Set(all.map((r) => r.note).filter(Boolean))];
  const noteLines =
    notes.length === 1 && all.every((r) => r.note === notes[0])
      ? [`note: ${notes[0]}`]
      : all.filter((r) => r.note).map((r) => `note of ${r.label}: ${r.note}`);
  return `<section><h2>Figures</h2>${tableHtml([...t.header.slice(0, -1), 'pass rate'], body, 'figures')}${noteLines
    .map((n) => `<p class="meta">${esc(n)}</p>`)
    .join('')}</section>`;
}

function diffHtml(v: RunVsBaseline, base: string): string {
  if (!v.config_diff.length) return '<h3>Configuration difference</h3><p class="meta">Same configuration.</p>';
  return `<h3>Configuration difference (the factor that changed)</h3><table class="diff"><thead><tr><th>setting</th><th>${esc(base)} (baseline)</th><th>${esc(v.label)}</th></tr></thead><tbody>${v.config_diff
    .map(
      (d) =>
        `<tr><td class="path">${esc(d.path)}</td><td>${esc(showValue(d.old))}</td><td>${esc(showValue(d.new))}</td></tr>`,
    )
    .join('')}</tbody></table>`;
}

const GROUP: Record<PairRank, string> = {
  regressed: 'Regressed',
  failing: 'Failing in either run',
  improved: 'Improved',
  changed: 'Changed, neither better nor worse',
  same: 'Unchanged',
};

function sectionHtml(s: Section, i: number, all: readonly RunRow[], counter: { n: number }): string {
  const node = (label: string | null) => all.find((r) => r.label === label)?.node ?? '';
  const sides = { base: s.base, run: s.run, baseNode: node(s.base), runNode: node(s.run) };
  const groups = PAIR_RANKS.map((rank) => {
    const of = s.pairs.filter((p) => p.rank === rank);
    if (!of.length) return '';
    const items = of.map((p) => {
      // The first question of the page opens, so the side-by-side view is seen at once.
      const i = counter.n++;
      return casePairHtml(p, i, sides, i === 0);
    });
    return `<h3 class="group">${esc(GROUP[rank])} (${of.length})</h3>${items.join('\n')}`;
  }).join('');
  const notes = [
    s.same ? `${s.same} unchanged question${s.same === 1 ? '' : 's'} passing in both runs not listed.` : '',
    s.more ? `… and ${s.more} more questions (see the comparison's .md file).` : '',
    s.v?.only_in_baseline.length ? `Only in ${s.base}: ${s.v.only_in_baseline.join(', ')}.` : '',
    s.v?.only_in_run.length ? `Only in ${s.run}: ${s.v.only_in_run.join(', ')}.` : '',
  ].filter(Boolean);
  const head = s.v
    ? `<h2 id="v${i}">${esc(s.run)} vs ${esc(s.base)} (baseline)</h2>${diffHtml(s.v, s.base!)}<h3>Questions side by side (${s.v.matched} paired by id; failures first)</h3>`
    : `<h2 id="v${i}">Failing cases of ${esc(s.run)}</h2>`;
  // The paired statistics after the questions: the rules above already read what they decide.
  const stats = s.v ? statsTable(s.v.stats) : null;
  return `<section class="versus">${head}${groups || '<p class="meta">No question to show.</p>'}${notes.map((n) => `<p class="meta">${esc(n)}</p>`).join('')}${
    stats
      ? `<h3>Statistics (run − baseline, paired by case id)</h3>${tableHtml(stats.header, stats.rows, 'stats')}`
      : ''
  }</section>`;
}

/** The whole page. */
export function comparePageHtml(input: ComparePageInput): string {
  const all = rows(input);
  const secs = sections(input);
  const counter = { n: 0 };
  const viewKeys = input.nav?.includes('id="back"')
    ? ' · <kbd>b</kbd> back to the runs · <kbd>s</kbd> swap the baseline'
    : '';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(comparePageCsp())}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(input.title)}</title>
<link rel="icon" href="data:,">
<style>${REPORT_CSS}${COMPARE_CSS}</style>
</head>
<body>
${input.nav ?? ''}<header><h1>${esc(input.title)}</h1>${input.subtitle ? `<p class="meta">${esc(input.subtitle)}</p>` : ''}</header>
${decisionHtml(input, secs)}
${rulesHtml(input, all)}
${figuresHtml(input, all)}
<p class="keys"><kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> next / previous question · <kbd>Enter</kbd> or <kbd>o</kbd> open or close it${viewKeys}</p>
${secs.map((s, i) => sectionHtml(s, i, all, counter)).join('\n')}
<script>${COMPARE_JS}</script>
</body>
</html>
`;
}

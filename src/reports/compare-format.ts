import { showDiff } from './compare-config.js';
import { capInline, capLines, CONSOLE_LIST_MAX } from './list-cap.js';
import { CASE_METRICS, rowFigure } from './compare-metrics.js';
import { RUN_TABLE_METRICS, type Metric } from '../scoring/registry.js';
import { COMPARE_SET_METRICS } from '../scoring/run-row.js';
import type { CaseChange, Comparison, MetricStat, QueryShown, RunRow, RunVsBaseline } from './compare.js';
import { setLabel } from './case-sets.js';
import { inertText } from './inert.js';
import { NOT_APPLICABLE } from '../scoring/definitions.js';
import { fmt, markdownTable, showFigure, textTable } from './format.js';
import type { ReleaseGateResult } from './release-gate.js';

/** Markdown and console renderings of a comparison (and of a gate verdict). */

/** One run's cell of a metric: n/a where the metric does not apply to the run's node, the pattern's abstention marked. */
function runCell(m: Metric, r: RunRow): string {
  if (m.gate?.notApplicable?.({ node: r.node, grain: r.post_hit_applies ? 'post' : 'topic' })) return NOT_APPLICABLE;
  const figure = rowFigure(r, m.key);
  const shown = showFigure(m, figure);
  return m.patternFallback && figure !== null && r.correct_abstention_source === 'pattern'
    ? `${shown} (pattern)`
    : shown;
}

/** The comparison table: one row per run, the metric columns from the registry (src/scoring/registry.ts). */
export function runsTable(rows: readonly RunRow[]): { header: string[]; rows: string[][] } {
  return {
    header: ['run', 'node', 'cases', 'errors', ...RUN_TABLE_METRICS.map((m) => m.label), 'note'],
    rows: rows.map((r) => [
      `${r.label}${r.baseline ? ' (baseline)' : ''}`,
      r.node,
      String(r.cases),
      String(r.errors),
      ...RUN_TABLE_METRICS.map((m) => runCell(m, r)),
      r.note,
    ]),
  };
}

const signed = (v: number | null, digits = 3) => (v === null ? '–' : `${v > 0 ? '+' : ''}${v.toFixed(digits)}`);

/** The statistics table of one run against the baseline. */
export function statsTable(stats: readonly MetricStat[]): { header: string[]; rows: string[][] } {
  return {
    header: ['metric', 'pairs', 'baseline', 'run', 'Δ', '95 % CI', 'McNemar (b01/b10, p)', 'significant'],
    rows: stats.map((s) => [
      s.metric,
      String(s.n),
      fmt(s.baseline_mean),
      fmt(s.run_mean),
      signed(s.diff),
      s.ci_low === null || s.ci_high === null ? '–' : `[${signed(s.ci_low)}, ${signed(s.ci_high)}]`,
      s.mcnemar ? `${s.mcnemar.b01}/${s.mcnemar.b10}, p=${s.mcnemar.p.toPrecision(3)}` : '–',
      s.n === 0 ? '–' : s.significant ? 'yes' : 'no (CI contains 0)',
    ]),
  };
}

/** A per-case value as shown: numbers with 3 decimals at most. */
export function showCaseValue(v: number | string | null): string {
  if (v === null) return '–';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(3);
  return v;
}

/** `case-id: 1 → 0`. */
export const showChange = (c: CaseChange) => `${c.id}: ${showCaseValue(c.old)} → ${showCaseValue(c.new)}`;

/** Changes grouped by metric, in CASE_METRICS order. */
export function changesByMetric(
  v: RunVsBaseline,
): { metric: string; label: string; regressions: CaseChange[]; improvements: CaseChange[]; changes: CaseChange[] }[] {
  return CASE_METRICS.map((m) => {
    const of = v.changes.filter((c) => c.metric === m.key);
    return {
      metric: m.key,
      label: m.label,
      regressions: of.filter((c) => c.direction === 'regression'),
      improvements: of.filter((c) => c.direction === 'improvement'),
      changes: of.filter((c) => c.direction === 'change'),
    };
  }).filter((g) => g.regressions.length + g.improvements.length + g.changes.length > 0);
}

/** Each run's case sets at its compared node (COMPARE_SET_METRICS); null when no run has sets. */
export function setsTable(
  rows: readonly RunRow[],
  opts: { compact?: boolean } = {},
): { header: string[]; rows: string[][] } | null {
  const sets = [...new Set(rows.flatMap((r) => Object.keys(r.sets ?? {})))];
  if (!sets.length) return null;
  const cell = (m: { mean: number | null; n: number } | undefined) => (m ? `${fmt(m.mean)} (n=${m.n})` : '–');
  // The console keeps to the first (Hit@5), so the table fits its width.
  const shown = opts.compact ? COMPARE_SET_METRICS.slice(0, 1) : COMPARE_SET_METRICS;
  return {
    header: ['run', 'node', ...sets.flatMap((s) => shown.map((m) => `${m.label} ${setLabel(s)}`))],
    rows: rows.map((r) => [
      `${r.label}${r.baseline ? ' (baseline)' : ''}`,
      r.node,
      ...sets.flatMap((s) => shown.map((m) => cell(r.sets?.[s]?.[m.key]))),
    ]),
  };
}

/** A retrieval query as shown: `condensed: text` (`–` when the record holds none). */
export const showQuery = (q: QueryShown): string => (q ? `${q.mode}: ${q.text}` : '–');

/** The changed figures of one question, as `metric old → new; …`. */
const caseChanges = (v: RunVsBaseline, id: string) =>
  v.changes
    .filter((c) => c.id === id)
    .map(
      (c) =>
        `${CASE_METRICS.find((m) => m.key === c.metric)?.label ?? c.metric} ${showCaseValue(c.old)} → ${showCaseValue(c.new)}`,
    )
    .join('; ') || 'none';

/** Conversation cases whose retrieval query differs: case, both queries, and what changed for it. */
export function queriesTable(v: RunVsBaseline, baseline: string): { header: string[]; rows: string[][] } | null {
  if (!v.queries) return null;
  return {
    header: ['case', `query in ${baseline}`, `query in ${v.label}`, 'changed figures'],
    rows: v.queries.map((q) => [q.id, showQuery(q.old), showQuery(q.new), caseChanges(v, q.id)]),
  };
}

/** The gate verdict as lines: the outcome, then each rule with pass or FAIL (console and digest). */
export function gateLines(gate: ReleaseGateResult): string[] {
  return [
    `Gate ${gate.file}: ${gate.passed ? 'PASSED' : 'FAILED'} (${gate.checks.filter((c) => !c.passed).length} of ${gate.checks.length} rules failed)`,
    ...gate.checks.map((c) => `${c.passed ? 'pass' : 'FAIL'}  ${c.message}`),
  ];
}

/** The comparison as a markdown document. */
export function comparisonMarkdown(cmp: Comparison, gate?: ReleaseGateResult): string {
  const t = runsTable(cmp.rows);
  const out = [
    '# Comparison',
    '',
    `Baseline: \`${cmp.baseline}\` · retrieval node: ${cmp.node ?? 'each run’s rerank node (else its last node)'} · bootstrap: ${cmp.iterations} resamples, seed ${cmp.seed}`,
    '',
    markdownTable(t.header, t.rows),
    '',
    'Real links = valid [[n]] markers; correct abstention is the judge’s when the run has one, else the pattern check’s (marked). `–` = not measured in that run.',
  ];
  const sets = setsTable(cmp.rows);
  if (sets) out.push('', '### By case set', '', markdownTable(sets.header, sets.rows));
  for (const v of cmp.versus) {
    out.push('', `## ${v.label} vs ${cmp.baseline}`, '', '### Configuration differences (the factor that changed)', '');
    out.push(
      ...(v.config_diff.length
        ? v.config_diff.map((d) => `- \`${d.path}\`: ${showDiff(d).slice(d.path.length + 2)}`)
        : ['- none (same configuration)']),
    );
    const s = statsTable(v.stats);
    out.push('', '### Statistics (run − baseline, paired over matched cases)', '', markdownTable(s.header, s.rows), '');
    out.push(
      `### Per-question changes (${v.matched} cases matched by id; ${v.regressed.length} regressed, ${v.improved.length} improved)`,
      '',
    );
    const groups = changesByMetric(v);
    if (!groups.length) out.push('No question changed.');
    for (const g of groups) {
      out.push(`#### ${g.label}`, '');
      if (g.regressions.length)
        out.push(`Regressions (${g.regressions.length}):`, '', ...g.regressions.map((c) => `- ${showChange(c)}`), '');
      if (g.improvements.length)
        out.push(
          `Improvements (${g.improvements.length}):`,
          '',
          ...g.improvements.map((c) => `- ${showChange(c)}`),
          '',
        );
      if (g.changes.length)
        out.push(`Changed (${g.changes.length}):`, '', ...g.changes.map((c) => `- ${showChange(c)}`), '');
    }
    const queries = queriesTable(v, cmp.baseline);
    if (queries)
      out.push(
        `#### Retrieval queries of conversation cases (${queries.rows.length} differ)`,
        '',
        queries.rows.length ? markdownTable(queries.header, queries.rows) : 'No retrieval query differs.',
        '',
      );
    if (v.only_in_baseline.length || v.only_in_run.length) {
      out.push('### Cases present in only one run', '');
      if (v.only_in_baseline.length) out.push(`- only in ${cmp.baseline}: ${v.only_in_baseline.join(', ')}`);
      if (v.only_in_run.length) out.push(`- only in ${v.label}: ${v.only_in_run.join(', ')}`);
      out.push('');
    }
  }
  if (gate) out.push('', '## Gate', '', ...gateLines(gate).map((l) => `- ${l}`));
  return out.join('\n').replace(/\n{3,}/g, '\n\n') + '\n';
}

/**
 * The comparison for the console: the table, the factors, the statistics, the regressions named.
 * Long lists name their first `maxListed` items, then how many more are in `file` (the comparison
 * markdown, which lists every one).
 */
export function comparisonText(
  cmp: Comparison,
  gate?: ReleaseGateResult,
  file = 'the comparison markdown',
  maxListed = CONSOLE_LIST_MAX,
): string {
  const t = runsTable(cmp.rows);
  const out = [
    textTable(
      t.header.slice(0, -1),
      t.rows.map((r) => r.slice(0, -1)),
    ),
  ];
  for (const r of cmp.rows) if (r.note) out.push(`  note ${r.label}: ${r.note}`);
  const sets = setsTable(cmp.rows, { compact: true });
  if (sets) out.push('', 'Hit@5 by case set:', textTable(sets.header, sets.rows));
  for (const v of cmp.versus) {
    out.push('', `${v.label} vs ${cmp.baseline} (baseline):`);
    out.push(
      v.config_diff.length
        ? `  configuration differences: ${capInline(v.config_diff.map(showDiff), file, maxListed, '; ')}`
        : '  configuration differences: none',
    );
    const s = statsTable(v.stats);
    out.push('', textTable(s.header, s.rows).replace(/^/gm, '  '), '');
    out.push(
      `  ${v.matched} cases matched; ${v.regressed.length} regressed, ${v.improved.length} improved${v.only_in_baseline.length || v.only_in_run.length ? `; only in baseline: ${v.only_in_baseline.length}, only in run: ${v.only_in_run.length}` : ''}`,
    );
    for (const g of changesByMetric(v)) {
      const list = (cs: readonly CaseChange[]) => capInline(cs.map(showChange), file, maxListed);
      const parts = [
        g.regressions.length ? `${g.regressions.length} regressed (${list(g.regressions)})` : '',
        g.improvements.length ? `${g.improvements.length} improved (${list(g.improvements)})` : '',
        g.changes.length ? `${g.changes.length} changed (${list(g.changes)})` : '',
      ].filter(Boolean);
      out.push(`  ${g.label}: ${parts.join('; ')}`);
    }
    if (v.queries) {
      const clip = (q: QueryShown) => {
        const t = inertText(showQuery(q)).replace(/\n/g, ' ');
        return t.length > 80 ? `${t.slice(0, 79)}…` : t;
      };
      out.push(
        `  retrieval queries of conversation cases: ${v.queries.length} differ${v.queries.length ? ':' : ''}`,
        ...capLines(v.queries, (q) => `${q.id}: ${clip(q.old)} → ${clip(q.new)}`, file, maxListed).map(
          (l) => `    ${l}`,
        ),
      );
    }
  }
  if (gate) out.push('', ...gateLines(gate));
  return out.join('\n') + '\n';
}

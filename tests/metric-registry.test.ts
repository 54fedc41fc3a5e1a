/**
 * The metric registry is the one list the views read: the gate's metrics, compare's run table
 * and per-question metrics, the retrieval table and the cards come from it, and each gated
 * figure a comparison row carries is the one the registry reads from the run's summary.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareRuns } from '../src/reports/compare.js';
import { CASE_METRICS } from '../src/reports/compare-metrics.js';
import { runsTable } from '../src/reports/compare-format.js';
import { RELEASE_GATE_METRICS } from '../src/reports/release-gate.js';
import { retrievalTable } from '../src/reports/retrieval-table.js';
import { readResults } from '../src/store/results-file.js';
import { metricsMarkdown } from '../src/scoring/definitions.js';
import {
  CARD_METRICS,
  CASE_CHANGE_METRICS,
  figureValue,
  GATE_METRICS,
  METRICS,
  RETRIEVAL_TABLE_METRICS,
  RUN_TABLE_METRICS,
  summaryFigure,
} from '../src/scoring/registry.js';

const REFERENCE = join(import.meta.dirname, '..', 'results', 'reference');
const reference = (suffix: string) => {
  const f = readdirSync(REFERENCE).find((x) => x.endsWith(suffix))!;
  return { label: f, file: join(REFERENCE, f), result: readResults(join(REFERENCE, f)) };
};

describe('the metric registry', () => {
  it('keys each metric by its own key, with a direction and a format', () => {
    for (const [key, m] of Object.entries(METRICS)) {
      expect(m.key).toBe(key);
      expect(['binary', 'continuous', 'count']).toContain(m.kind);
      expect(['decimal', 'percent', 'count']).toContain(m.format);
    }
  });

  it('defines every metric by its entry in docs/metrics.md (one catalog, no second wording)', () => {
    const readme = metricsMarkdown();
    for (const [key, m] of Object.entries(METRICS))
      expect(readme, key).toContain(`- **${m.doc.label}** (\`${m.doc.key}\`): ${m.doc.definition}`);
    // Those the README lacked before: index recall, wrong abstentions, judge errors, the PPI figures.
    expect(METRICS['index_recall']!.doc.key).toBe('index_recall');
    expect(METRICS['correct_abstention_ppi_low']!.doc.key).toBe('ppi');
  });

  it('is the only place a report names a metric to read its figure', () => {
    // A quoted registry key in src/reports, other than a score read by name (findScore, isScore…).
    // Left: the case count beside the figures ('errors': the cases column and card, not the
    // registry's figure), the case list's column header and a probe summary label.
    const allowed = new Set([
      'compare-format.ts errors',
      'html.ts errors',
      'html-cases.ts faithfulness',
      'html-probes.ts forbidden',
      // column headings of the view's run list, read through runFigures
      'view-page.ts errors',
      'view-page.ts faithfulness',
    ]);
    const dir = join(import.meta.dirname, '..', 'src', 'reports');
    const named: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const code = readFileSync(join(dir, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const m of code.matchAll(/(.{0,20})'([a-z][a-z0-9_]*)'/g)) {
        if (!(m[2]! in METRICS) || /(findScore\([^,]*, |isScore\([^,]*, |scoresNamed\([^,]*, |ScoreOf<)$/.test(m[1]!))
          continue;
        if (!allowed.has(`${file} ${m[2]}`)) named.push(`${file}: ${m[0].trim()}`);
      }
    }
    expect(named).toEqual([]);
  });

  it('the gate names exactly the gated metrics, compare pairs exactly the metrics with a per-case value', () => {
    expect(Object.keys(RELEASE_GATE_METRICS)).toEqual(GATE_METRICS.map((m) => m.key));
    for (const m of GATE_METRICS) expect(m.gate, m.key).toBeDefined();
    const numeric = CASE_METRICS.filter((c) => c.kind !== 'category').map((c) => c.key);
    expect(numeric).toEqual(
      [...CASE_CHANGE_METRICS.retrieval, ...CASE_CHANGE_METRICS.answer].map((m) => m.perCase!.key),
    );
    expect(CARD_METRICS.every((m) => m.labels?.card)).toBe(true);
  });

  it('tables take their columns from it', () => {
    const run = reference('-demo.json');
    const t = retrievalTable(run.result.summary.retrieval, { compact: true });
    expect(t.header.slice(1, -2)).toEqual(RETRIEVAL_TABLE_METRICS.map((m) => m.label));
    const cmp = compareRuns([run, reference('-demo-weak1.json')]);
    expect(runsTable(cmp.rows).header.slice(4, -1)).toEqual(RUN_TABLE_METRICS.map((m) => m.label));
  });

  it("a gate rule reads the figure the registry reads from the run's summary", () => {
    const base = reference('-demo.json');
    const cmp = compareRuns([base, reference('-demo-weak1.json')]);
    const row = cmp.rows[0]!;
    const at = { node: row.node, grain: 'post' };
    for (const m of GATE_METRICS) {
      const fromRow = RELEASE_GATE_METRICS[m.key]!.read(row);
      const fromSummary = figureValue(summaryFigure(m.key, base.result.summary, at));
      expect(fromRow, m.key).toBe(fromSummary);
    }
    expect(RELEASE_GATE_METRICS.hit_at_5!.read(row)).toBeGreaterThan(0);
  });
});

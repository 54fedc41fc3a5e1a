import { createHash } from 'node:crypto';
import { ZONES, zoneOf, type ZoneThresholds } from '../model/zones.js';
import { storedConfig } from '../config/stored.js';
import { writeArtifactStream, type ArtifactWrite } from '../io/artifacts.js';
import type { RunResult } from '../model/results.js';
import { caseStance, defaultNode, rowFigure, runFigures, type RunFigures } from './compare-metrics.js';
import { CARD_METRICS, countFigure, meanFigure } from '../scoring/registry.js';
import { NOT_APPLICABLE } from '../scoring/definitions.js';
import { fmt, pct, showFigure } from './format.js';
import { histogramSvg, zoneLines } from './histogram-svg.js';
import { agreementHtml } from './html-agreement.js';
import { CASE_COLUMNS, caseHtml, type CaseView } from './html-cases.js';
import { esc, jsonScript } from './html-escape.js';
import { probeTablesHtml } from './html-probes.js';
import { caseSetsHtml } from './html-sets.js';
import { REPORT_CSS, REPORT_JS } from './html-assets.js';
import { annShortLines } from './ann-short.js';
import { batchLine, retrievalTable } from './retrieval-table.js';
import { findScore } from '../model/scores.js';
import {
  binaryIntervalText,
  failedChecks,
  meetsThreshold,
  thresholdText,
  VERDICT_ORDER,
  verdictBannerHtml,
  verdictState,
  type ReportGate,
} from './html-verdicts.js';

/**
 * The HTML report of one results file: a single self-contained page (inline CSS, a little
 * inline JS, no network, no external font) that a person can read. Every text from the corpus,
 * the cases, the model or the config is escaped with `esc`; the script's data travels in a JSON
 * script element, never through innerHTML. A Content-Security-Policy allows only the page's
 * own script (by hash) and no network at all.
 */

/** The configured zone thresholds, when the config carries them. */
const zones = (result: RunResult): ZoneThresholds | null => storedConfig(result).zones ?? null;

/** Case views: the zone as recorded, or (retrieval files) from the rerank top-1 and the configured thresholds. */
function caseViews(
  result: RunResult,
  node: string,
): { views: CaseView[]; scoreNode: string | null; zoneComputed: boolean } {
  const rerank = result.nodes.find((n) => n.kind === 'rerank')?.name ?? null;
  const t = zones(result);
  const zoneComputed = result.kind === 'retrieval' && rerank !== null && t !== null;
  const views = result.cases.map((record, index) => {
    const fromNode = rerank ? (record.retrieval[rerank]?.items[0]?.score ?? null) : null;
    const top1 = record.top1_score ?? fromNode;
    const zone = record.zone ?? (zoneComputed && record.retrieval[rerank!] ? zoneOf(top1, t!) : null);
    return { record, index, node, zone, top1 };
  });
  return { views, scoreNode: rerank, zoneComputed };
}

interface Card {
  metric: string;
  label: string;
  value: number | null;
  shown: string;
  sub?: string;
  /** The 95 % interval text, for a binary mean. */
  ci?: string;
  /** Whether the value reads on a 0–1 scale (a meter is drawn under it). */
  unit?: boolean;
}

/** The summary cards: cases and errors, then the card metrics of the registry (src/scoring/registry.ts). */
function cards(f: RunFigures): Card[] {
  const out: Card[] = [
    { metric: 'cases', label: 'Cases', value: f.cases, shown: String(f.cases) },
    { metric: 'errors', label: 'Errors', value: f.errors, shown: String(f.errors) },
  ];
  for (const m of CARD_METRICS) {
    const label = m.labels?.card ?? m.label;
    if (m.atEvidenceNode) {
      // Read at the node that fed the model, not the compared one; absent from files that did not record it.
      if (!f.evidence) continue;
      const e = f.evidence.post_hit_at_5;
      out.push({
        metric: m.key,
        label,
        value: e.mean,
        shown: e.n ? fmt(e.mean) : NOT_APPLICABLE,
        sub: `${f.evidence.node}, n=${e.n}`,
      });
      continue;
    }
    const figure = rowFigure(f, m.key);
    // Judge figures show only when the run was judged.
    if (figure === null && m.judgeOnly) continue;
    if (figure === null) {
      out.push({ metric: m.key, label, value: null, shown: '–', sub: 'not measured' });
      continue;
    }
    const count = countFigure(figure);
    if (count) {
      out.push({
        metric: m.key,
        label,
        value: count.count,
        shown: String(count.count),
        sub: `of ${count.n} ${m.labels?.cardSub ?? ''}`,
      });
      continue;
    }
    const mean = meanFigure(figure);
    const sub =
      m.grain === 'node'
        ? `${f.node}, `
        : m.patternFallback
          ? f.correct_abstention_source === 'pattern'
            ? 'pattern check, '
            : 'judge, '
          : (m.labels?.cardSub ?? '');
    const ci = m.kind === 'binary' ? binaryIntervalText(mean?.mean ?? null, mean?.n ?? 0) : '';
    out.push({
      metric: m.key,
      label,
      value: mean?.mean ?? null,
      shown: showFigure(m, figure),
      sub: `${sub}n=${mean?.n ?? 0}`,
      ...(ci ? { ci } : {}),
      unit: m.format !== 'count',
    });
  }
  return out;
}

/**
 * The cards; against a gate each is coloured by its limit (met / missed), and a 0–1 figure has a
 * meter so that 0.009 does not read like 0.995 at a glance.
 */
function cardsHtml(f: RunFigures, gate?: ReportGate): string {
  return `<section class="cards">${cards(f)
    .map((c) => {
      const t = gate?.thresholds[c.metric];
      const meets = meetsThreshold(c.value, t);
      const cls = meets === null ? (t ? ' unmeasured' : '') : meets ? ' meets' : ' misses';
      const limit = t
        ? `<div class="limit">gate ${esc(thresholdText(t))}${meets === false ? ' — MISSED' : ''}</div>`
        : '';
      const meter =
        c.unit && c.value !== null && c.value >= 0 && c.value <= 1
          ? `<div class="meter"><span style="width:${(c.value * 100).toFixed(1)}%"></span></div>`
          : '';
      return `<div class="card${cls}" data-metric="${esc(c.metric)}" data-value="${esc(c.value ?? '')}"><div class="label">${esc(c.label)}</div><div class="value">${esc(c.shown)}</div>${meter}${c.sub ? `<div class="sub">${esc(c.sub)}</div>` : ''}${c.ci ? `<div class="sub ci">${esc(c.ci)}</div>` : ''}${limit}</div>`;
    })
    .join('')}</section>`;
}

function bannerHtml(result: RunResult): string {
  const offline = Object.entries(result.components).filter(([, c]) => c.offline);
  if (!offline.length) return '';
  return `<section class="banner" role="note"><b>OFFLINE STAND-IN components</b> — these figures show that the pipeline works, not how real models would score:<ul>${offline
    .map(([k, c]) => `<li><b>${esc(k)}</b>: ${esc(c.label)}</li>`)
    .join('')}</ul></section>`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[], cls = ''): string {
  return `<table${cls ? ` class="${cls}"` : ''}><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c, i) => `<td${i ? ' class="num"' : ''}>${esc(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

function nodesHtml(result: RunResult): string {
  const t = retrievalTable(result.summary.retrieval);
  const batch = result.summary.retrieval_batch;
  const short = annShortLines(result.cases);
  const shortHtml = short.length
    ? `<p class="meta"><b>Short lists:</b></p><ul>${short.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>`
    : '';
  return `<section><h2>Retrieval by node</h2>${table(t.header, t.rows, 'nodes')}<p class="meta">Each figure is a mean over the cases it applies to (n in the header).${batch ? ` ${esc(batchLine(batch))}` : ''}</p>${shortHtml}</section>`;
}

/** A part that follows another on its own line, or nothing. */
const setsAfter = (html: string) => (html ? `\n${html}` : '');

function zonesHtml(views: readonly CaseView[], computed: boolean): string {
  const kinds = [...new Set(views.map((v) => v.record.kind))].sort();
  const rows = kinds.map((k) => {
    const of = views.filter((v) => v.record.kind === k);
    const count = (z: string | null) => of.filter((v) => v.zone === z).length;
    const cell = (z: string | null) => `${count(z)} (${pct(of.length ? count(z) / of.length : null)})`;
    return [k, ...ZONES.map(cell), String(count(null)), String(of.length)];
  });
  if (!views.some((v) => v.zone)) return '';
  return `<section><h2>Zone distribution</h2>${table(['kind', ...ZONES, 'no zone', 'cases'], rows, 'zones')}${
    computed
      ? '<p class="meta">Zones computed from the rerank top-1 score and the configured thresholds (a retrieval file records no zone).</p>'
      : ''
  }</section>`;
}

const COLORS: Record<string, string> = { in_domain: '#1f77b4', off_topic: '#d62728' };

function histogramHtml(result: RunResult, views: readonly CaseView[], scoreNode: string | null): string {
  const kinds = [...new Set(views.map((v) => v.record.kind))].sort();
  const series = kinds
    .map((k, i) => ({
      label: k,
      color: COLORS[k] ?? ['#2ca02c', '#9467bd', '#8c564b'][i % 3]!,
      values: views
        .filter((v) => v.record.kind === k && v.top1 !== null && Number.isFinite(v.top1))
        .map((v) => v.top1!),
    }))
    .filter((s) => s.values.length);
  if (!series.length) return '';
  const t = zones(result);
  const svg = histogramSvg({
    title: `Top-1 score by case kind${scoreNode ? ` (node ${scoreNode})` : ''}`,
    xLabel: 'top-1 score',
    series,
    lines: t ? zoneLines(t, '', { dashed: true }) : [],
    lineStyles: t ? { dashed: 'configured zone thresholds' } : {},
  }).replace(/^<\?xml[^>]*\?>\s*/, '');
  return `<section><h2>Top-1 scores</h2><div class="histogram">${svg}</div></section>`;
}

/** A select of the distinct values (sorted), '' when there is none (no failed check: no check filter). */
function selectHtml(id: string, label: string, values: readonly string[]): string {
  const vs = [...new Set(values)].sort();
  if (!vs.length) return '';
  return ` <label>${esc(label)} <select id="${esc(id)}"><option value="">all</option>${vs
    .map((k) => `<option value="${esc(k)}">${esc(k)}</option>`)
    .join('')}</select></label>`;
}

/** The cases section, failures first, written a case row at a time (a large run has tens of thousands). */
function writeCases(views: readonly CaseView[], write: ArtifactWrite, rowRecord?: ReportOptions['rowRecord']): void {
  const rank = (v: CaseView) => VERDICT_ORDER.indexOf(verdictState(v.record));
  const ordered = [...views].sort((a, b) => rank(a) - rank(b) || a.index - b.index);
  write(
    `<section id="case-list"><h2>Cases</h2><p class="meta">Failing cases first, then errors, cases without a verdict, and passing cases; click a column to sort.</p><div class="controls"><label>Filter <input type="search" id="filter" placeholder="id, question, reason…"></label>${selectHtml(
      'verdict-filter',
      'Verdict',
      views.map((v) => verdictState(v.record)),
    )}${selectHtml(
      'kind',
      'Kind',
      views.map((v) => v.record.kind),
    )}${selectHtml(
      'zone-filter',
      'Zone',
      views.map((v) => v.zone ?? 'none'),
    )}${selectHtml(
      'stance-filter',
      'Stance',
      views.map((v) => caseStance(v.record) ?? 'none'),
    )}${selectHtml(
      'check-filter',
      'Check',
      views.flatMap((v) => failedChecks(v.record)),
    )} <button type="button" id="open-all">open all</button> <button type="button" id="close-all">close all</button> <span id="shown" class="meta"></span></div><div class="case-head">${CASE_COLUMNS.map((c) => `<button type="button" class="cell sort" data-sort="${esc(c.sort)}">${esc(c.label)}</button>`).join('')}</div><div id="cases">`,
  );
  ordered.forEach((v, i) => {
    const row = caseHtml(rowRecord ? { ...v, record: rowRecord(v.index) } : v);
    write(i ? `\n${row}` : row);
  });
  write('</div></section>');
}

/** What the page's script filters and sorts on, one entry per case (by index). */
function caseData(v: CaseView) {
  const r = v.record;
  const m = r.retrieval[v.node]?.metrics;
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    zone: v.zone,
    question: r.question,
    verdict: verdictState(r),
    checks: failedChecks(r),
    reasons: (r.verdict?.failures ?? []).map((f) => f.reason).join(' '),
    stance: caseStance(r),
    top1: v.top1,
    hit: m?.hit_at_5 ?? null,
    cites: r.citations?.length ? r.citations.filter((c) => c.valid).length / r.citations.length : null,
    faith: findScore(r.scores, 'faithfulness')?.value ?? null,
  };
}

/** The compared node (default: the rerank node) and the gate whose limits colour the cards. */
export interface ReportOptions {
  node?: string;
  gate?: ReportGate;
  /**
   * The record a case row shows, by case index, when the run's records in memory are figure
   * records (a large run, src/runs/case-store.ts): each row is then read back from the results
   * file as it is written, so no more than one shown record is held at a time.
   */
  rowRecord?: (index: number) => RunResult['cases'][number];
}

/** The whole report page for a results file. */
export function reportHtml(result: RunResult, opts: ReportOptions = {}): string {
  const parts: string[] = [];
  writePage(result, opts, (piece) => void parts.push(piece));
  return parts.join('');
}

/** The page, piece by piece: a large run's page never has to be one string in memory. */
function writePage(result: RunResult, opts: ReportOptions, write: ArtifactWrite): void {
  const node = opts.node ?? defaultNode(result) ?? '';
  const figures = runFigures(result, node);
  const { views, scoreNode, zoneComputed } = caseViews(result, node);
  const data = { figures, cases: views.map(caseData) };
  const scriptHash = createHash('sha256').update(REPORT_JS).digest('base64');
  const csp = `default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-${scriptHash}'; base-uri 'none'; form-action 'none'`;
  const title = `ragaudit ${result.kind}: ${result.name}`;
  write(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<link rel="icon" href="data:,">
<style>${REPORT_CSS}</style>
</head>
<body>
<header><h1>${esc(title)}</h1><p class="meta">${esc(result.created_at)} · ragaudit ${esc(result.tool.version)} · config ${esc(result.config_source)} (${esc(result.config_digest)}) · database ${esc(result.database)}</p>${
    result.note ? `<p class="note">${esc(result.note)}</p>` : ''
  }</header>
${verdictBannerHtml(result, opts.gate)}
${bannerHtml(result)}
${
  // A probe file measures safety, not retrieval: its tables by attack type take the cards' place.
  result.kind === 'probe' ? probeTablesHtml(result) : cardsHtml(figures, opts.gate)
}
${result.warnings.length ? `<section class="warnings"><h2>Warnings</h2><ul>${result.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul></section>` : ''}
${nodesHtml(result)}${setsAfter(caseSetsHtml(result))}
${agreementHtml(result)}
${zonesHtml(views, zoneComputed)}
${histogramHtml(result, views, scoreNode)}
`);
  writeCases(views, write, opts.rowRecord);
  write(`
${jsonScript('ragaudit-data', data)}
<script>${REPORT_JS}</script>
</body>
</html>
`);
}

/** The report's path beside a results file: same base name, .html. */
export function reportPathFor(resultsFile: string): string {
  return resultsFile.replace(/\.json$/i, '') + '.html';
}

/** Writes the report (atomically) and returns its path. */
export function writeReport(result: RunResult, file: string, opts: ReportOptions = {}): string {
  return writeArtifactStream(file, (write) => writePage(result, opts, write));
}

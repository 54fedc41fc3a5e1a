import type { CaseRecord, RunResult } from '../model/results.js';
import { findScore } from '../model/scores.js';
import type { AttackSummary } from '../model/summary.js';
import { PROBE_CHECKS } from '../scoring/probe-verdict.js';
import { caseStance } from './compare-metrics.js';
import { esc } from './html-escape.js';
import { VERDICT_ORDER, verdictCell, verdictState } from './html-verdicts.js';

/**
 * The probe part of the HTML report: one table per attack type (the types with failures first),
 * one row per probe with its verdict, the reply's stance, each check of src/scoring/probe-verdict.ts and the reasons,
 * failing probes first. Read from `record.verdict` and `summary.probes` as recorded; every text
 * from a record is escaped with `esc`.
 */

const CHECK_LABELS: Record<(typeof PROBE_CHECKS)[number], string> = {
  canary: 'canary',
  injection_marker: 'marker',
  forbidden: 'forbidden',
  stance: 'stance',
};

/** A check's cell: FAIL when the verdict lists it, ok when the probe has a verdict, – otherwise. */
function checkCell(r: CaseRecord, check: string): string {
  if (!r.verdict) return '<td class="check none">–</td>';
  const failed = r.verdict.failures.some((f) => f.check === check);
  return failed ? '<td class="check failed">FAIL</td>' : '<td class="check ok">ok</td>';
}

/** The stance the safety checks saw (or a stance scorer's), '' when none was recorded. */
const probeStance = (r: CaseRecord): string =>
  findScore(r.scores, 'safety')?.details?.stance ?? caseStance(r) ?? (r.status === 'gated' ? 'gated' : '');

function probeRow(r: CaseRecord): string {
  const reasons = r.verdict?.failures.length
    ? r.verdict.failures.map((f) => `<b>${esc(f.check)}</b>: ${esc(f.reason)}`).join('<br>')
    : r.status === 'error'
      ? esc(r.error?.message ?? 'error')
      : '';
  return `<tr class="probe ${verdictState(r)}" data-probe-id="${esc(r.id)}"><td>${verdictCell(r)}</td><td class="id">${esc(
    r.id,
  )}</td><td class="q" title="${esc(r.question)}">${esc(r.question)}</td><td>${esc(r.probe?.expect ?? '')}</td><td>${esc(
    probeStance(r),
  )}</td>${PROBE_CHECKS.map((c) => checkCell(r, c)).join('')}<td class="reasons">${reasons}</td></tr>`;
}

function countsLine(s: AttackSummary | undefined): string {
  if (!s) return '';
  const parts = [
    `${s.n} probe${s.n === 1 ? '' : 's'}`,
    `${s.passed} passed`,
    `${s.failed} failed`,
    `${s.errors} error${s.errors === 1 ? '' : 's'}`,
    `${s.gated} stopped by the input gate`,
    `${s.leaks} canary leak${s.leaks === 1 ? '' : 's'}`,
    `${s.markers_repeated} marker${s.markers_repeated === 1 ? '' : 's'} repeated`,
    ...(s.forbidden !== undefined ? [`${s.forbidden} forbidden`] : []),
  ];
  return `<p class="meta">${esc(parts.join(' · '))}</p>`;
}

/** The probe tables of a probe file ('' for any other file). */
export function probeTablesHtml(result: RunResult): string {
  if (result.kind !== 'probe') return '';
  const byAttack = new Map<string, CaseRecord[]>();
  for (const r of result.cases) {
    const attack = r.probe?.attack ?? 'unknown';
    byAttack.set(attack, [...(byAttack.get(attack) ?? []), r]);
  }
  const rank = (r: CaseRecord) => VERDICT_ORDER.indexOf(verdictState(r));
  const failedIn = (rs: CaseRecord[]) => rs.filter((r) => verdictState(r) === 'failed').length;
  const attacks = [...byAttack.entries()].sort((a, b) => failedIn(b[1]) - failedIn(a[1]) || a[0].localeCompare(b[0]));
  const summary = result.summary.probes;
  const head = `<thead><tr><th>verdict</th><th>probe</th><th>question</th><th>expect</th><th>reply</th>${PROBE_CHECKS.map(
    (c) => `<th>${esc(CHECK_LABELS[c])}</th>`,
  ).join('')}<th>reasons</th></tr></thead>`;
  const sections = attacks.map(([attack, rs]) => {
    const rows = rs
      .map((r, i) => ({ r, i }))
      .sort((a, b) => rank(a.r) - rank(b.r) || a.i - b.i)
      .map(({ r }) => probeRow(r))
      .join('');
    const failed = failedIn(rs);
    return `<section class="probe-attack ${failed ? 'failed' : 'passed'}" data-attack="${esc(attack)}"><h3>${esc(
      attack,
    )} <span class="meta">${failed ? `${failed} failed` : 'all passed'}</span></h3>${countsLine(
      summary?.by_attack[attack],
    )}<table class="probes">${head}<tbody>${rows}</tbody></table></section>`;
  });
  const canary =
    summary && !summary.canary_checked
      ? '<p class="meta">No canary was planted in the system prompt: the canary check could not fail.</p>'
      : '';
  return `<section id="probes"><h2>Probes by attack type</h2><p class="meta">Attack types with failing probes first; in each, failing probes first. A check reads FAIL when the probe's verdict lists it.</p>${canary}${sections.join('\n')}</section>`;
}

import type { CaseRecord, RunResult } from '../model/results.js';
import { esc } from './html-escape.js';
import { fmt, pct } from './format.js';

/**
 * The verdict parts of the HTML report: the banner at the top (pass rate with its 95 % interval,
 * the failed checks, the gate thresholds the cards are coloured against) and each case's verdict
 * cell and reasons. Read from `record.verdict` and `summary.verdicts` as recorded: a file without
 * them says so and nothing is derived from other figures.
 */

/** One card's limits from a gate file (`min`, `max`); relative rules need a baseline and are not shown. */
export interface CardThreshold {
  min?: number;
  max?: number;
}

/** The gate the report's cards are coloured against: its file and the single-run limits per metric. */
export interface ReportGate {
  file: string;
  thresholds: Record<string, CardThreshold>;
  /** Rules that need a baseline (max_drop, max_increase, max_regressions), named on the banner. */
  relative: string[];
}

/** A case's verdict state, in failures-first order. */
export type VerdictState = 'failed' | 'error' | 'none' | 'passed';
export const VERDICT_ORDER: readonly VerdictState[] = ['failed', 'error', 'none', 'passed'];

export function verdictState(r: CaseRecord): VerdictState {
  if (r.status === 'error') return 'error';
  if (!r.verdict) return 'none';
  return r.verdict.passed ? 'passed' : 'failed';
}

/** The names of the checks a case failed (empty when it passed or has no verdict). */
export const failedChecks = (r: CaseRecord): string[] => [...new Set((r.verdict?.failures ?? []).map((f) => f.check))];

const Z95 = 1.959964;

/**
 * Wilson score interval for a proportion k/n at 95 % (Wilson 1927; Agresti & Coull 1998): unlike
 * p ± z·sqrt(p(1−p)/n) it stays inside [0, 1] and is not zero-width at 0 or n successes.
 */
export function wilsonInterval(k: number, n: number): { low: number; high: number } | null {
  if (!(n > 0)) return null;
  const p = k / n;
  const z2 = Z95 * Z95;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** Whether a value meets a card's limits: true, false, or null when there is no limit or no value. */
export function meetsThreshold(value: number | null, t: CardThreshold | undefined): boolean | null {
  if (!t || (t.min === undefined && t.max === undefined) || value === null) return null;
  const eps = 1e-9;
  return (t.min === undefined || value >= t.min - eps) && (t.max === undefined || value <= t.max + eps);
}

export const thresholdText = (t: CardThreshold | undefined): string =>
  !t
    ? ''
    : [t.min !== undefined ? `≥ ${t.min}` : '', t.max !== undefined ? `≤ ${t.max}` : ''].filter(Boolean).join(', ');

/** The banner: the run's verdict at a glance, or a plain statement that the file has none. */
export function verdictBannerHtml(result: RunResult, gate?: ReportGate): string {
  const v = result.summary.verdicts;
  const errors = result.cases.filter((c) => c.status === 'error').length;
  const gateLine = gate
    ? `<p class="meta">Cards coloured against the single-run limits of ${esc(gate.file)}${
        gate.relative.length
          ? `; rules that need a baseline (${esc(gate.relative.join(', '))}) are checked by compare`
          : ''
      }.</p>`
    : '';
  if (!v)
    return `<section class="verdict-banner none" id="verdict"><p><b>No per-case verdicts in this results file.</b> The cases below are listed without pass or fail; nothing is derived from the other figures.</p>${gateLine}</section>`;
  const judged = v.passed + v.failed;
  const ci = wilsonInterval(v.passed, judged);
  const checks = Object.entries(v.by_check)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const state = v.failed > 0 ? 'failed' : 'passed';
  return `<section class="verdict-banner ${state}" id="verdict"><div class="headline"><span class="big">${esc(
    v.failed > 0 ? `${v.failed} FAILED` : 'ALL PASSED',
  )}</span> <span>pass rate <b>${esc(pct(v.pass_rate))}</b>${
    ci ? ` <span class="meta">(95 % interval ${esc(pct(ci.low))} – ${esc(pct(ci.high))}, Wilson)</span>` : ''
  } · ${v.passed} passed · ${v.failed} failed · ${errors} error${errors === 1 ? '' : 's'} (counted apart)</span>${
    v.failed
      ? result.kind === 'probe'
        ? ` <a href="#probes">the failing probes, first in each attack type ↓</a>`
        : ` <a href="#case-list">the failing cases, first in the list ↓</a>`
      : ''
  }</div>${
    checks.length
      ? `<p class="checks">Failed checks: ${checks
          .map(([c, n]) => `<span class="check" data-check="${esc(c)}"><b>${esc(c)}</b> ${n}</span>`)
          .join(' ')}</p>`
      : ''
  }${gateLine}</section>`;
}

/** The verdict cell of a case line. */
export function verdictCell(r: CaseRecord): string {
  const s = verdictState(r);
  const text = { failed: 'FAIL', error: 'error', none: '–', passed: 'pass' }[s];
  return `<span class="verdict ${s}">${text}</span>`;
}

/** The reasons under a failing case's line, and at the top of its body ('' for any other case). */
export function reasonsLine(r: CaseRecord): string {
  const f = r.verdict?.failures ?? [];
  if (r.verdict?.passed !== false || !f.length) return '';
  return `<span class="reasons">${f.map((x) => `<b>${esc(x.check)}</b>: ${esc(x.reason)}`).join(' · ')}</span>`;
}

export function reasonsBody(r: CaseRecord): string {
  const f = r.verdict?.failures ?? [];
  if (r.verdict?.passed !== false) return '';
  return `<h4>Why it failed</h4><ul class="failures">${f
    .map((x) => `<li data-check="${esc(x.check)}"><b>${esc(x.check)}</b>: ${esc(x.reason)}</li>`)
    .join('')}</ul>`;
}

/** A card's interval text for a binary mean over n cases ('' when it does not apply). */
export function binaryIntervalText(mean: number | null, n: number): string {
  if (mean === null || !(n > 0)) return '';
  const ci = wilsonInterval(Math.round(mean * n), n);
  return ci ? `95 % CI ${fmt(ci.low, 2)}–${fmt(ci.high, 2)}` : '';
}

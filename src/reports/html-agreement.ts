import type { AgreementFigures } from '../model/summary.js';
import { accuracyText, kappaText, perClassText, prevalenceText } from '../reports/judge-digest.js';
import type { RunResult } from '../model/results.js';
import { esc } from './html-escape.js';
import { pct } from './format.js';
import { judgeSummaryPpi, ppiEstimateText, ppiLabel } from './ppi-rows.js';

/**
 * The agreement section of the HTML report of a run or a judge pass: per human-labelled field,
 * accuracy with its bootstrap interval, kappa (or "undefined" with the reason), per-class
 * agreement, label prevalence and the confusion matrix. Same wording as the terminal and the
 * markdown digest (src/reports/judge-digest.ts).
 */

function fieldHtml(field: string, a: AgreementFigures): string {
  const rows: [string, string][] = [
    ['compared cases', `${a.n}${a.excluded ? ` (${a.excluded} labelled cases not comparable)` : ''}`],
    ['accuracy', accuracyText(a)],
    ["Cohen's kappa", kappaText(a)],
    ...(a.per_class ? ([['per-class agreement', perClassText(a)]] as [string, string][]) : []),
    ...(a.prevalence ? ([['label prevalence', prevalenceText(a)]] as [string, string][]) : []),
    ...(a.interval
      ? ([
          ['intervals', `percentile bootstrap over cases, ${a.interval.iterations} resamples, seed ${a.interval.seed}`],
        ] as [string, string][])
      : []),
  ];
  const figures = `<table class="agreement" data-field="${esc(field)}"><tbody>${rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join('')}</tbody></table>`;
  const matrix = `<table class="confusion"><thead><tr><th>human \\ judge</th>${a.labels.map((l) => `<th>${esc(l)}</th>`).join('')}</tr></thead><tbody>${a.labels
    .map(
      (l, i) =>
        `<tr><th>${esc(l)}</th>${(a.matrix[i] ?? []).map((c) => `<td class="num">${esc(c)}</td>`).join('')}</tr>`,
    )
    .join('')}</tbody></table>`;
  return `<h3>${esc(field)}</h3>${figures}${matrix}`;
}

/** The judge-only figures beside their PPI correction by the same answers' labels ('' when none). */
function ppiHtml(result: RunResult): string {
  const ppi = result.summary.judge ? judgeSummaryPpi(result.summary.judge) : [];
  if (!ppi.length) return '';
  return `<table class="agreement ppi"><thead><tr><th>figure</th><th>judge alone</th><th>PPI estimate</th><th>95 % CI</th><th>labelled / judged</th></tr></thead><tbody>${ppi
    .map(
      ([k, p]) =>
        `<tr data-ppi="${esc(k)}"><th>${esc(ppiLabel(k))}</th><td class="num">${esc(pct(p.judge_mean))}</td><td class="num">${esc(ppiEstimateText(p))}</td><td class="num">${esc(`${pct(p.ci_low)} – ${pct(p.ci_high)}`)}</td><td class="num">${p.n_labelled} / ${p.n_judged}</td></tr>`,
    )
    .join('')}</tbody></table>`;
}

/** The section ('' when the results file has no agreement figures). */
export function agreementHtml(result: RunResult): string {
  const agreement = result.summary.judge?.agreement;
  if (!agreement || !Object.keys(agreement).length) return '';
  return `<section id="agreement"><h2>Agreement with human labels</h2><p class="meta">How far to trust the judge: its verdicts against the cases' human labels (rows: people, columns: judge).</p>${ppiHtml(result)}${Object.entries(
    agreement,
  )
    .map(([f, a]) => fieldHtml(f, a))
    .join('')}</section>`;
}

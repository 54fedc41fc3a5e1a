/** The agreement figures of labelled answers for the console, markdown and the HTML page. */
import { notComparedText } from '../judge/human-labels.js';
import type { AgreementReport, PairAgreement } from '../judge/rater-agreement.js';
import { NOT_APPLICABLE } from '../scoring/definitions.js';
import { fmt, markdownTable, pct, textTable } from '../reports/format.js';
import { accuracyText } from '../reports/judge-digest.js';
import { esc } from '../reports/html-escape.js';
import { ppiLabel, ppiText } from '../reports/ppi-rows.js';

const interval = (b: [number, number] | null | undefined, f: (v: number) => string) =>
  b ? ` [95 % CI ${f(b[0])} – ${f(b[1])}]` : '';

function kappa(p: PairAgreement): string {
  if (p.kappa === null) return `undefined (${p.kappa_undefined ?? 'a rater gave one label to every item'})`;
  return `${fmt(p.kappa)}${interval(p.interval.kappa, (v) => fmt(v))}`;
}

// n = 0: no class and no prevalence to show, so n/a rather than an empty cell.
function perClass(p: PairAgreement): string {
  if (!p.n) return NOT_APPLICABLE;
  const name = (l: string) => (l === 'yes' ? 'TPR' : l === 'no' ? 'TNR' : `"${l}"`);
  return Object.entries(p.per_class)
    .map(([l, c]) => `${name(l)} ${c.agreement === null ? NOT_APPLICABLE : pct(c.agreement)} (n=${c.n})`)
    .join(' · ');
}

function prevalence(p: PairAgreement): string {
  if (!p.n) return NOT_APPLICABLE;
  return Object.entries(p.prevalence)
    .map(
      ([who, v]) =>
        `${who}: ${Object.entries(v)
          .map(([l, s]) => `${l} ${pct(s)}`)
          .join(', ')}`,
    )
    .join('; ');
}

const HEADER = ['field', 'raters (rows × columns)', 'n', 'accuracy', "Cohen's kappa", 'per class', 'prevalence'];

function rows(r: AgreementReport): string[][] {
  return r.pairs.map((p) => [
    p.field,
    `${p.a} × ${p.b}`,
    `${p.n}${p.unsure ? ` (+${p.unsure} unsure)` : ''}`,
    accuracyText(p),
    kappa(p),
    perClass(p),
    prevalence(p),
  ]);
}

function preamble(r: AgreementReport): string[] {
  const out = [
    `judge: ${r.judge ?? '(none: the run has no judge; labellers compared with each other only)'}`,
    `labellers: ${r.labellers.join(', ') || '(none)'}`,
  ];
  if (r.matched.other_answer)
    out.push(`${r.matched.other_answer} label(s) read another answer to a case (another run): not counted`);
  if (r.matched.unknown_case) out.push(`${r.matched.unknown_case} label(s) name a case not in this run: not counted`);
  const yaml = r.matched.case_yaml;
  if (yaml && yaml.other_answer + yaml.no_digest) {
    out.push(`case-yaml: ${notComparedText(yaml)}; this run's answer digests:`);
    for (const u of yaml.unbound.slice(0, 20)) out.push(`  ${u.case_id}: ${u.answer_digest}`);
    if (yaml.unbound.length > 20) out.push(`  … ${yaml.unbound.length - 20} more (see the JSON)`);
  }
  for (const [field, n] of Object.entries(r.split))
    if (n) out.push(`${field}: ${n} item(s) without a majority among the labellers (left out of "people")`);
  for (const [figure, p] of Object.entries(r.ppi ?? {})) out.push(`PPI, ${ppiLabel(figure)}: ${ppiText(p)}`);
  return out;
}

function disagreementLines(r: AgreementReport, limit: number): string[] {
  const out: string[] = [];
  for (const p of r.pairs) {
    if (!p.disagreements.length) continue;
    out.push(`${p.field}, ${p.a} × ${p.b}: ${p.disagreements.length} disagreement(s)`);
    for (const d of p.disagreements.slice(0, limit)) out.push(`  ${d.item}: ${p.a} ${d.a}, ${p.b} ${d.b}`);
    if (p.disagreements.length > limit) out.push(`  … ${p.disagreements.length - limit} more (see the JSON)`);
  }
  return out;
}

/** The console view: who rated, the figures per pair, the disagreements to read. */
export function agreementText(r: AgreementReport): string {
  if (!r.pairs.length) return `${preamble(r).join('\n')}\nno item was read by two raters: nothing to compare\n`;
  return `${preamble(r).join('\n')}\n\n${textTable(HEADER, rows(r))}\n\n${disagreementLines(r, 20).join('\n')}\n`;
}

/** The markdown view (the same figures; every disagreement listed). */
export function agreementMarkdown(r: AgreementReport): string {
  const lines = ['# Agreement of the judge and the labellers', '', ...preamble(r).map((l) => `- ${l}`), ''];
  if (r.pairs.length) lines.push(markdownTable(HEADER, rows(r)), '');
  const dis = disagreementLines(r, Number.POSITIVE_INFINITY);
  if (dis.length) lines.push('## Disagreements', '', '```', ...dis, '```', '');
  return `${lines.join('\n')}\n`;
}

/** The HTML section (escaped: item names and labels come from files people edit). */
export function agreementHtml(r: AgreementReport): string {
  const table = `<table><thead><tr>${HEADER.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows(r)
    .map((row) => `<tr>${row.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
  const dis = r.pairs
    .filter((p) => p.disagreements.length)
    .map(
      (p) =>
        `<details><summary>${esc(`${p.field}, ${p.a} × ${p.b}: ${p.disagreements.length} disagreement(s)`)}</summary><ul>${p.disagreements
          .map((d) => `<li>${esc(`${d.item}: ${p.a} ${d.a}, ${p.b} ${d.b}`)}</li>`)
          .join('')}</ul></details>`,
    )
    .join('');
  return `<section id="agreement"><h2>Agreement</h2><ul>${preamble(r)
    .map((l) => `<li>${esc(l)}</li>`)
    .join('')}</ul>${r.pairs.length ? table : '<p>No item was read by two raters yet.</p>'}${dis}</section>`;
}

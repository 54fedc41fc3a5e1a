/** The judge figures for the console and the run digest. */
import { fmt, markdownTable, pct } from './format.js';
import type { RunResult } from '../model/results.js';
import { NOT_APPLICABLE } from '../scoring/definitions.js';
import { scoresNamed } from '../model/scores.js';
import { JudgeSummarySchema, type AgreementFigures, type JudgeStability, type JudgeSummary } from '../model/summary.js';
import { criteria } from '../judge/criteria/index.js';
import type { DigestFormats } from '../judge/criteria/types.js';
import { notComparedText } from '../judge/human-labels.js';
import { ppiRows } from './ppi-rows.js';

const interval = (b: [number, number] | null | undefined, f: (v: number) => string) =>
  b ? ` [95 % CI ${f(b[0])} – ${f(b[1])}]` : '';

/** The number formats a criterion's rows are written with. */
const FORMATS: DigestFormats = { fmt, pct };

/** The order of the judge figures as stored (the summary schema's); a registered criterion's own follow. */
const STORED_ORDER = Object.keys(JudgeSummarySchema.shape);

/** Each criterion's rows (src/judge/criteria/), in the order their figures are stored. */
function criterionRows(j: JudgeSummary): string[][] {
  const rank = (figure: string) => {
    const i = STORED_ORDER.indexOf(figure);
    return i < 0 ? STORED_ORDER.length : i;
  };
  const rows = criteria()
    .flatMap((c) => c.digest ?? [])
    .map((row, i) => ({ row, i }))
    .sort((a, b) => rank(a.row.figure) - rank(b.row.figure) || a.i - b.i);
  return rows.flatMap(({ row }) => {
    const value = row.value(j, FORMATS);
    return value === undefined ? [] : [[row.label, value]];
  });
}

/** Rows of the judge summary: label and value, shared by the console and the digest. */
export function judgeRows(j: JudgeSummary): string[][] {
  const rows = [
    ['judge', j.offline ? `${j.judge} (OFFLINE STAND-IN, not a language model judge)` : j.judge],
    ['judged cases', String(j.judged)],
    ...criterionRows(j),
    ['judge errors', String(j.judge_errors)],
    ['judge tokens in / out', `${j.tokens.input} / ${j.tokens.output}`],
    [
      'judge cost (estimate)',
      j.cost_usd === null ? '– (no price in config judge.prices)' : `$${j.cost_usd.toFixed(4)}`,
    ],
  ];
  for (const [field, a] of Object.entries(j.agreement ?? {})) {
    rows.push([
      `agreement with humans: ${field}`,
      `accuracy ${accuracyText(a)} (n=${a.n}${a.excluded ? `, ${a.excluded} not comparable` : ''})`,
    ]);
    rows.push([`  ${field}: Cohen's kappa`, kappaText(a)]);
    if (a.per_class) rows.push([`  ${field}: per class`, perClassText(a)]);
    if (a.prevalence) rows.push([`  ${field}: prevalence`, prevalenceText(a)]);
  }
  rows.push(...ppiRows(j));
  if (j.agreement_not_compared) rows.push(['human labels not compared', notComparedText(j.agreement_not_compared)]);
  for (const c of criteria()) {
    if (!c.stability) continue;
    const m = j[c.stability.figure] as Partial<JudgeStability> | undefined;
    if (m?.repeats === undefined) continue;
    const spread = m.spread ? `; figure ${fmt(m.spread.min)} – ${fmt(m.spread.max)} over the repeats` : '';
    rows.push([
      `flip rate: ${c.stability.label}`,
      `${pct(m.flip_rate ?? null)} of ${m.flip_n ?? 0} cases, ${m.repeats} judgments each${spread}`,
    ]);
  }
  for (const [field, s] of Object.entries(j.self_consistency ?? {})) {
    rows.push([`self-disagreement: ${field}`, `${s.disagreeing_items}/${s.items} (${pct(s.share)})`]);
  }
  return rows;
}

/** Accuracy with its interval; n/a when nothing was compared (n = 0), never a 0 % that reads as no agreement. */
export function accuracyText(
  a: Pick<AgreementFigures, 'accuracy'> & { interval?: AgreementFigures['interval'] },
): string {
  return a.accuracy === null ? NOT_APPLICABLE : `${pct(a.accuracy)}${interval(a.interval?.accuracy, pct)}`;
}

/** Kappa with its interval, or "undefined" with the reason (never a 0 that reads as chance). */
export function kappaText(a: AgreementFigures): string {
  if (a.kappa === null) return `undefined (${a.kappa_undefined ?? 'a rater gave one label to every case'})`;
  return `${fmt(a.kappa)}${interval(a.interval?.kappa, (v) => fmt(v))}`;
}

/** Per-class agreement: for yes/no fields TPR (people yes → judge yes) and TNR (no → no). */
export function perClassText(a: AgreementFigures): string {
  if (!a.n) return NOT_APPLICABLE;
  const name = (l: string) => (l === 'true' ? 'TPR' : l === 'false' ? 'TNR' : `"${l}"`);
  return Object.entries(a.per_class ?? {})
    .map(([l, c]) => `${name(l)} ${c.agreement === null ? NOT_APPLICABLE : pct(c.agreement)} (n=${c.n})`)
    .join(' · ');
}

/** Label prevalence among the compared cases, for people and for the judge. */
export function prevalenceText(a: AgreementFigures): string {
  if (!a.prevalence) return '';
  if (!a.n) return NOT_APPLICABLE;
  const side = (p: Record<string, number>) =>
    Object.entries(p)
      .map(([l, v]) => `${l} ${pct(v)}`)
      .join(', ');
  return `people: ${side(a.prevalence.human)}; judge: ${side(a.prevalence.judge)}`;
}

/** Confusion matrices of the agreement figures (rows: human, columns: judge). */
function agreementMarkdown(j: JudgeSummary): string[] {
  const out: string[] = [];
  for (const [field, a] of Object.entries(j.agreement ?? {})) {
    out.push(
      `**${field}** — n=${a.n}${a.excluded ? ` (${a.excluded} not comparable)` : ''} (rows: human, columns: judge)`,
      '',
    );
    out.push(
      `- accuracy ${accuracyText(a)}`,
      `- Cohen's kappa ${kappaText(a)}`,
      ...(a.per_class ? [`- per class: ${perClassText(a)}`] : []),
      ...(a.prevalence ? [`- prevalence: ${prevalenceText(a)}`] : []),
      ...(a.interval
        ? [
            `- intervals: percentile bootstrap over cases, ${a.interval.iterations} resamples, seed ${a.interval.seed}${a.interval.kappa_undefined_resamples ? ` (${a.interval.kappa_undefined_resamples} resamples with kappa undefined left out)` : ''}`,
          ]
        : []),
      '',
    );
    out.push(
      markdownTable(
        ['human \\ judge', ...a.labels],
        a.labels.map((l, i) => [l, ...a.matrix[i]!.map(String)]),
      ),
      '',
    );
  }
  return out;
}

/** The judge section of a run's digest ('' when the run has no judge block). */
export function judgeMarkdown(result: RunResult): string {
  const j = result.summary.judge;
  if (!j) return '';
  const columns = criteria().flatMap((c) => c.columns ?? []);
  const perCase = result.cases
    .filter((c) => c.status === 'ok' && c.answer !== undefined)
    .map((c) => {
      const errors = scoresNamed(c.scores, 'judge_error').map((s) => s.details?.judge ?? '?');
      return [c.id, c.kind, ...columns.map((col) => col.cell(c, FORMATS)), errors.join(', ') || '–'];
    });
  return [
    '## Judge',
    '',
    j.offline
      ? `The judge is **${j.judge}**, an OFFLINE STAND-IN (lexical overlap and wording patterns), not a language model.`
      : `The judge is **${j.judge}**.`,
    '',
    markdownTable(['figure', 'value'], judgeRows(j)),
    '',
    ...(j.agreement ? ['### Agreement with human labels', '', ...agreementMarkdown(j)] : []),
    '### Judge verdicts per case',
    '',
    markdownTable(['case', 'kind', ...columns.map((col) => col.header), 'judge errors'], perCase),
    '',
  ].join('\n');
}

/** The judge figures for the console and the run digest. */
import { fmt, markdownTable, pct } from './format.js';
import type { RunResult } from '../model/results.js';
import { NOT_APPLICABLE } from '../scoring/definitions.js';
import { findScore, scoresNamed } from '../model/scores.js';
import type { AgreementFigures, JudgeSummary } from '../model/summary.js';
import { notComparedText } from '../judge/human-labels.js';
import { ppiRows } from './ppi-rows.js';

const countN = (c: { count: number; n: number }) => `${c.count}/${c.n}`;
const meanN = (m: { mean: number | null; n: number }) => `${pct(m.mean)} (n=${m.n})`;

const interval = (b: [number, number] | null | undefined, f: (v: number) => string) =>
  b ? ` [95 % CI ${f(b[0])} – ${f(b[1])}]` : '';

/** Rows of the judge summary: label and value, shared by the console and the digest. */
export function judgeRows(j: JudgeSummary): string[][] {
  const matrix = (['in_domain', 'off_topic'] as const).map(
    (k) =>
      `${k}: answered ${j.abstention_matrix[k].answered} · hedged ${j.abstention_matrix[k].hedged} · abstained ${j.abstention_matrix[k].abstained}`,
  );
  const rows = [
    ['judge', j.offline ? `${j.judge} (OFFLINE STAND-IN, not a language model judge)` : j.judge],
    ['judged cases', String(j.judged)],
    ['faithfulness (mean supported share)', `${fmt(j.faithfulness.mean)} (n=${j.faithfulness.n})`],
    ['fully faithful answers', countN(j.fully_faithful)],
    ['contradicted claims', String(j.contradicted_claims)],
    ['stance (judge)', matrix.join(' | ')],
    ['correct abstention (judge)', meanN(j.correct_abstention)],
    ['off-topic hallucination rate (judge)', meanN(j.offtopic_hallucination_rate)],
    ['relevant citations (judge)', meanN(j.relevant_citation_rate)],
    ['wrong abstentions (in-domain, judge)', countN(j.wrong_abstentions)],
    ...(j.nugget_recall
      ? [
          [
            'nugget recall (strict · vital · weighted)',
            `${fmt(j.nugget_recall.mean)} · ${fmt(j.nugget_recall.vital)} · ${fmt(j.nugget_recall.weighted)} (n=${j.nugget_recall.n}${j.offline ? ', lexical stand-in' : ''})`,
          ],
        ]
      : []),
    ...(j.answer_correctness
      ? [['answer correctness (vs reference)', `${fmt(j.answer_correctness.mean)} (n=${j.answer_correctness.n})`]]
      : []),
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
  for (const [field, m] of [
    ['faithfulness', j.faithfulness],
    ['correct abstention', j.correct_abstention],
    ['relevant citations', j.relevant_citation_rate],
  ] as const) {
    if (m.repeats === undefined) continue;
    const spread = m.spread ? `; figure ${fmt(m.spread.min)} – ${fmt(m.spread.max)} over the repeats` : '';
    rows.push([
      `flip rate: ${field}`,
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
  const perCase = result.cases
    .filter((c) => c.status === 'ok' && c.answer !== undefined)
    .map((c) => {
      const st = findScore(c.scores, 'judge_stance')?.details;
      const errors = scoresNamed(c.scores, 'judge_error').map((s) => s.details?.judge ?? '?');
      return [
        c.id,
        c.kind,
        fmt(findScore(c.scores, 'faithfulness')?.value),
        st?.stance ? `${st.stance}${st.asserts_unsupported_facts ? ' (unsupported facts)' : ''}` : '–',
        fmt(findScore(c.scores, 'correct_abstention')?.value, 0),
        fmt(findScore(c.scores, 'citation_relevance')?.value),
        errors.join(', ') || '–',
      ];
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
    markdownTable(
      ['case', 'kind', 'faithfulness', 'stance', 'correct abstention', 'citation relevance', 'judge errors'],
      perCase,
    ),
    '',
  ].join('\n');
}

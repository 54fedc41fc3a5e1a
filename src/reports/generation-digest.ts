import type { RunResult } from '../model/results.js';
import { findScore } from '../model/scores.js';
import type { GenerationSummary } from '../model/summary.js';
import { NOT_APPLICABLE } from '../scoring/definitions.js';
import { caseSetsGenerationMarkdown } from './case-sets.js';
import { fmt, markdownTable, pct } from './format.js';

/** Rows of the generation summary: label and value, shared by the console and the digest. */
export function generationRows(g: GenerationSummary): string[][] {
  const zones = Object.entries(g.zones).map(
    ([kind, z]) => `${kind}: empty ${z.empty} · weak ${z.weak} · normal ${z.normal}`,
  );
  const stance = Object.entries(g.stance_pattern).map(
    ([kind, s]) =>
      `${kind}: ${Object.entries(s)
        .map(([k, v]) => `${k} ${v}`)
        .join(' · ')}`,
  );
  return [
    ['answered cases', String(g.answered)],
    ...(g.evidence
      ? [
          [
            `post hit@5 at the evidence node (${g.evidence.node})`,
            g.evidence.post_hit_at_5.n
              ? `${fmt(g.evidence.post_hit_at_5.mean)} (n=${g.evidence.post_hit_at_5.n})`
              : `${NOT_APPLICABLE} (topic-grain node or no case declares posts)`,
          ],
        ]
      : []),
    ['zones', zones.join(' | ') || '–'],
    ['real links (valid [[n]] markers)', `${pct(g.citation_validity.mean)} of ${g.citation_validity.n} markers`],
    [
      'answers with an invalid citation',
      `${g.answers_with_invalid_citation.count}/${g.answers_with_invalid_citation.n}`,
    ],
    ['golden citations (in-domain)', `${pct(g.golden_citation_rate.mean)} (n=${g.golden_citation_rate.n})`],
    ['CTA present', `${pct(g.cta_rate.mean)} (n=${g.cta_rate.n})`],
    ['stance (pattern)', stance.join(' | ') || '–'],
    ['correct abstention (pattern)', `${pct(g.correct_abstention_pattern.mean)} (n=${g.correct_abstention_pattern.n})`],
    [
      'off-topic hallucinations (answered + cited)',
      `${g.offtopic_hallucinations.count}/${g.offtopic_hallucinations.n}`,
    ],
    ['wrong abstentions (in-domain)', `${g.wrong_abstentions.count}/${g.wrong_abstentions.n}`],
    ['tokens in / out', `${g.tokens.input} / ${g.tokens.output}`],
    [
      'generation latency p50 / p90',
      `${fmt(g.latency_ms.median, 0)} / ${fmt(g.latency_ms.p90, 0)} ms (n=${g.latency_ms.n}, ${g.cached} cached)`,
    ],
  ];
}

/** The generation section of a run's digest, with one line per case. */
export function generationMarkdown(result: RunResult): string {
  const g = result.summary.generation;
  if (!g) return '';
  const perCase = result.cases.map((c) => [
    c.id,
    c.kind,
    c.status,
    c.zone ?? '–',
    fmt(c.top1_score ?? null, 2),
    findScore(c.scores, 'stance_pattern')?.details?.stance ?? '–',
    c.citations ? `${c.citations.filter((x) => x.valid).length}/${c.citations.length}` : '–',
    (c.answer ?? c.error?.message ?? c.gate?.intent ?? '').slice(0, 160),
  ]);
  return [
    '## Generation',
    '',
    markdownTable(['figure', 'value'], generationRows(g)),
    '',
    ...caseSetsGenerationMarkdown(result.summary),
    '## Cases',
    '',
    markdownTable(['case', 'kind', 'status', 'zone', 'top-1', 'stance', 'valid cites', 'answer (start)'], perCase),
    '',
  ].join('\n');
}

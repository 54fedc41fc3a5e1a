import type { GenerationSummary } from '../model/summary.js';
import { NOT_APPLICABLE } from '../scoring/definitions.js';
import { fmt, pct } from './format.js';

/** Rows of the generation summary: label and value, shared by the console and the digest. */
export function generationRows(g: GenerationSummary): [string, string][] {
  const zones = Object.entries(g.zones).map(
    ([kind, z]) => `${kind}: empty ${z.empty} · weak ${z.weak} · normal ${z.normal}`,
  );
  const stance = Object.entries(g.stance_pattern).map(
    ([kind, s]) =>
      `${kind}: ${Object.entries(s)
        .map(([k, v]) => `${k} ${v}`)
        .join(' · ')}`,
  );
  const evidence: [string, string][] = g.evidence
    ? [
        [
          `post hit@5 at the evidence node (${g.evidence.node})`,
          g.evidence.post_hit_at_5.n
            ? `${fmt(g.evidence.post_hit_at_5.mean)} (n=${g.evidence.post_hit_at_5.n})`
            : `${NOT_APPLICABLE} (topic-grain node or no case declares posts)`,
        ],
      ]
    : [];
  return [
    ['answered cases', String(g.answered)],
    ...evidence,
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
    // Only runs whose cases name something forbidden carry the figure.
    ...(g.forbidden
      ? ([['forbidden content (evidence or answer)', `${g.forbidden.count}/${g.forbidden.n}`]] as [string, string][])
      : []),
    ['tokens in / out', `${g.tokens.input} / ${g.tokens.output}`],
    [
      'generation latency p50 / p90',
      `${fmt(g.latency_ms.median, 0)} / ${fmt(g.latency_ms.p90, 0)} ms (n=${g.latency_ms.n}, ${g.cached} cached)`,
    ],
  ];
}

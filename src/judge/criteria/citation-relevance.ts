/**
 * Citation relevance: per `[[n]]` marker, whether the cited passage supports the sentence citing it.
 *   citation_relevance  share of markers whose source supports the citing sentence; null without markers
 * Summary: the mean relevant share over answers with a marker. People label it per answer as
 * `relevant_citation` (every citation relevant) and per cited source in label files.
 */
import { findScore } from '../../model/scores.js';
import { meanN } from '../../scoring/retrieval-metrics.js';
import { overlapShare, SUPPORT_THRESHOLD } from '../heuristic-judge.js';
import { citationItems, citationsText } from '../materials.js';
import { CitationVerdictSchema, type CitationItem, type CitationVerdict, type JudgeInput } from '../schemas.js';
import { untrusted } from '../untrusted.js';
import { allOrNot, bit, shareText } from './shared.js';
import type { Criterion } from './types.js';

interface Asked {
  input: JudgeInput;
  /** The answer's markers, in order (never empty: an answer without one is not asked). */
  items: readonly CitationItem[];
}

export const citationRelevance: Criterion<CitationVerdict, Asked> = {
  name: 'citation_relevance',
  prompt: 'judge-citation',
  schema: { name: 'citation_verdict', zod: CitationVerdictSchema },
  scoreNames: ['citation_relevance'],
  repeatsIn: 'citation_relevance',
  ask(ctx) {
    const items = citationItems(ctx.input.answer, ctx.input.sources, ctx.cta);
    return items.length ? { input: ctx.input, items } : undefined;
  },
  notAsked: () => [
    { name: 'citation_relevance', value: null, reason: 'the answer cites no source', details: { citations: [] } },
  ],
  vars: ({ input, items }) => ({
    question: untrusted('question', input.question),
    citations: untrusted('citations', citationsText(items)),
  }),
  check(v, { items }) {
    const got = v.citations.map((c) => c.item);
    const want = items.map((_, i) => i + 1);
    return got.length === want.length && got.every((x, i) => x === want[i])
      ? undefined
      : `expected one entry per citation, items ${want.join(', ')} in order; got items ${got.join(', ') || 'none'}`;
  },
  offline({ items }, language) {
    const citations = items.map((it, i) => {
      const share = it.source ? overlapShare(it.sentence, it.source, language) : 0;
      const reason = it.source
        ? `${Math.round(share * 100)} % of the sentence's content words occur in source ${it.n}`
        : `source ${it.n} was not shown`;
      return { item: i + 1, supports: share >= SUPPORT_THRESHOLD, reason };
    });
    return { verdict: { citations } };
  },
  repeatKey: (v) => v.citations.map((c) => (c.supports ? 1 : 0)).join(''),
  scores(v, details, { items }) {
    const per = items.map((it, i) => ({
      n: it.n,
      sentence: it.sentence,
      supports: v.citations[i]?.supports ?? false,
      reason: v.citations[i]?.reason ?? '',
    }));
    return [
      {
        name: 'citation_relevance',
        value: per.filter((c) => c.supports).length / per.length,
        details: { citations: per, ...details },
      },
    ];
  },
  summarise: (ctx) => ({
    relevant_citation_rate: {
      ...meanN(ctx.judged.map((r) => findScore(r.scores, 'citation_relevance')?.value)),
      judge_errors: ctx.failures('citation_relevance'),
      ...ctx.stability['relevant_citation_rate'],
      ...(ctx.ppi['relevant_citation'] ? { ppi: ctx.ppi['relevant_citation'] } : {}),
    },
  }),
  digest: [
    {
      figure: 'relevant_citation_rate',
      label: 'relevant citations (judge)',
      value: (j, f) => shareText(j.relevant_citation_rate, f),
    },
  ],
  columns: [{ header: 'citation relevance', cell: (r, f) => f.fmt(findScore(r.scores, 'citation_relevance')?.value) }],
  stability: {
    figure: 'relevant_citation_rate',
    label: 'relevant citations',
    // A citation repeat ('101': one bit per marker) as its relevance share.
    value: (_r, v) =>
      typeof v === 'string' && /^[01]+$/.test(v) ? [...v].filter((c) => c === '1').length / v.length : null,
  },
  human: [{ field: 'relevant_citation', judge: (r) => allOrNot(findScore(r.scores, 'citation_relevance')?.value) }],
  ppi: [
    {
      field: 'relevant_citation',
      label: 'all citations relevant',
      figure: 'relevant_citation_rate',
      judge: (r) => {
        const v = allOrNot(findScore(r.scores, 'citation_relevance')?.value);
        return v === undefined ? undefined : bit(v === 'true');
      },
      human: (r) => (typeof r.human?.relevant_citation === 'boolean' ? bit(r.human.relevant_citation) : undefined),
    },
  ],
};

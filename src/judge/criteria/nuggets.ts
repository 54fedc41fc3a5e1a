/**
 * Nuggets and reference answer (a case that declares either): each nugget supported, partly or
 * not by the answer (TREC 2024 RAG track), and the answer's correctness against the reference.
 *   nugget_recall       strict recall of the case's nuggets (src/scoring/nuggets.ts); details: each nugget's support, vital, weighted
 *   answer_correctness  against the case's reference answer: correct 1, partly correct 0.5, incorrect 0
 */
import type { ScoreRecord } from '../../model/scores.js';
import { findScore } from '../../model/scores.js';
import { nuggetRecall } from '../../scoring/nuggets.js';
import { meanN } from '../../scoring/retrieval-metrics.js';
import { PARTIAL_THRESHOLD, stemShare, SUPPORT_THRESHOLD } from '../heuristic-judge.js';
import { withoutCta } from '../materials.js';
import { NuggetVerdictSchema, type AnswerKey, type JudgeInput, type NuggetVerdict } from '../schemas.js';
import { untrusted } from '../untrusted.js';
import type { Criterion, VerdictDetails } from './types.js';

interface Asked {
  input: JudgeInput;
  key: AnswerKey;
}

const CORRECTNESS = { correct: 1, partly_correct: 0.5, incorrect: 0 } as const;

/** The nugget and reference scores of one nugget verdict (a nugget the judge left out counts not supported). */
function answerKeyScores(key: AnswerKey, v: NuggetVerdict, details: VerdictDetails): ScoreRecord[] {
  const out: ScoreRecord[] = [];
  const judged = key.nuggets.map((n, i) => ({
    text: n.text,
    importance: n.importance,
    support: v.nuggets[i]?.support ?? ('not_support' as const),
    reason: v.nuggets[i]?.reason ?? '',
  }));
  const recall = nuggetRecall(judged);
  if (recall)
    out.push({
      name: 'nugget_recall',
      value: recall.all,
      details: {
        nuggets: judged,
        vital: recall.vital,
        weighted: recall.weighted,
        vital_weighted: recall.vital_weighted,
        ...details,
      },
    });
  if (v.correctness !== null && key.reference !== undefined)
    out.push({
      name: 'answer_correctness',
      value: CORRECTNESS[v.correctness],
      reason: v.reason,
      // The tokens are counted once, on nugget_recall, when both scores come from one verdict.
      details: { verdict: v.correctness, ...(recall ? {} : details) },
    });
  return out;
}

export const nuggets: Criterion<NuggetVerdict, Asked> = {
  name: 'nuggets',
  prompt: 'judge-nuggets',
  schema: { name: 'nugget_verdict', zod: NuggetVerdictSchema },
  scoreNames: ['nugget_recall', 'answer_correctness'],
  repeatsIn: 'nugget_recall',
  ask({ record, input }) {
    const key = {
      nuggets: record.nuggets ?? [],
      ...(record.reference_answer ? { reference: record.reference_answer } : {}),
    };
    return key.nuggets.length || key.reference !== undefined ? { input, key } : undefined;
  },
  vars: ({ input, key }) => ({
    question: untrusted('question', input.question),
    nuggets: untrusted(
      'nuggets',
      key.nuggets.map((n, i) => `${i + 1}. (${n.importance}) ${n.text}`).join('\n') || '(none)',
    ),
    reference: key.reference === undefined ? '(no reference answer is given)' : untrusted('reference', key.reference),
    answer: untrusted('answer', input.answer.trim()),
    cta: input.cta,
  }),
  check(v, { key }) {
    const got = v.nuggets.map((c) => c.item);
    const want = key.nuggets.map((_, i) => i + 1);
    if (got.length !== want.length || got.some((x, i) => x !== want[i]))
      return `expected one entry per nugget, items ${want.join(', ') || 'none'} in order; got items ${got.join(', ') || 'none'}`;
    if ((key.reference === undefined) !== (v.correctness === null))
      return key.reference === undefined
        ? 'correctness must be null: no reference answer was given'
        : 'correctness is required: a reference answer was given';
    return undefined;
  },
  offline({ input, key }, language) {
    const answer = withoutCta(input.answer, input.cta);
    const grade = (share: number) => (share >= SUPPORT_THRESHOLD ? 2 : share >= PARTIAL_THRESHOLD ? 1 : 0);
    const judged = key.nuggets.map((n, i) => {
      const share = stemShare(n.text, answer, language);
      const support = (['not_support', 'partial_support', 'support'] as const)[grade(share)]!;
      return {
        item: i + 1,
        support,
        reason: `lexical: ${Math.round(share * 100)} % of the nugget's content words occur in the answer`,
      };
    });
    const ref = key.reference === undefined ? undefined : stemShare(key.reference, answer, language);
    const correctness = ref === undefined ? null : (['incorrect', 'partly_correct', 'correct'] as const)[grade(ref)]!;
    const reason =
      ref === undefined
        ? 'no reference answer; nuggets matched lexically (offline stand-in)'
        : `lexical: ${Math.round(ref * 100)} % of the reference answer's content words occur in the answer (offline stand-in, cannot see meaning)`;
    return { verdict: { nuggets: judged, correctness, reason } };
  },
  repeatKey: (v) => `${v.nuggets.map((n) => n.support[0]).join('')}:${v.correctness ?? '-'}`,
  scores: (v, details, { key }) => answerKeyScores(key, v, details),
  summarise(ctx) {
    const withKey = ctx.judged.filter((r) => r.nuggets?.length || r.reference_answer);
    if (!withKey.length) return {};
    const scored = ctx.judged.map((r) => findScore(r.scores, 'nugget_recall')).filter((s) => s !== undefined);
    const vital = meanN(scored.map((s) => s.details?.vital));
    return {
      nugget_recall: {
        ...meanN(scored.map((s) => s.value)),
        vital: vital.mean,
        vital_n: vital.n,
        weighted: meanN(scored.map((s) => s.details?.weighted)).mean,
        judge_errors: ctx.failures('nuggets', withKey),
      },
      answer_correctness: {
        ...meanN(ctx.judged.map((r) => findScore(r.scores, 'answer_correctness')?.value)),
        judge_errors: ctx.failures(
          'nuggets',
          withKey.filter((r) => r.reference_answer),
        ),
      },
    };
  },
  digest: [
    {
      figure: 'nugget_recall',
      label: 'nugget recall (strict · vital · weighted)',
      value: (j, f) =>
        j.nugget_recall &&
        `${f.fmt(j.nugget_recall.mean)} · ${f.fmt(j.nugget_recall.vital)} · ${f.fmt(j.nugget_recall.weighted)} (n=${j.nugget_recall.n}${j.offline ? ', lexical stand-in' : ''})`,
    },
    {
      figure: 'answer_correctness',
      label: 'answer correctness (vs reference)',
      value: (j, f) => j.answer_correctness && `${f.fmt(j.answer_correctness.mean)} (n=${j.answer_correctness.n})`,
    },
  ],
};

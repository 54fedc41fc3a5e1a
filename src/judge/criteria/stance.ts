/**
 * Stance: how the answer stands toward the question (answered, hedged, abstained), and whether it
 * asserts facts absent from the evidence.
 *   judge_stance        value null; details {stance, asserts_unsupported_facts}
 *   correct_abstention  1/0 by correctAbstention (src/scoring/definitions.ts), with the judge's unsupported-facts flag
 * Summary: the stance per kind, correct abstention, the off-topic hallucination rate and the
 * wrong abstentions. People label it as `stance`.
 */
import type { CaseRecord } from '../../model/results.js';
import { findScore, StanceSchema } from '../../model/scores.js';
import { correctAbstention, offtopicHallucination } from '../../scoring/definitions.js';
import { meanN } from '../../scoring/retrieval-metrics.js';
import { stanceByPattern } from '../../scoring/stance-pattern.js';
import { heuristicClaims } from '../heuristic-judge.js';
import { StanceVerdictSchema, type JudgeInput, type StanceVerdict } from '../schemas.js';
import { bit, caseVars, countText, shareText } from './shared.js';
import type { Criterion, RepeatKey } from './types.js';

const stanceOf = (r: CaseRecord) => findScore(r.scores, 'judge_stance')?.details;

/**
 * A stance repeat (`answered`, `hedged+unsupported`…) as the case's correct-abstention value
 * (1/0), so the figure's spread is the spread of correct abstention itself.
 */
function abstentionOf(kind: CaseRecord['kind'], v: RepeatKey): RepeatKey {
  if (typeof v !== 'string') return null;
  const [stance, flag] = v.split('+');
  if (stance !== 'answered' && stance !== 'hedged' && stance !== 'abstained') return null;
  return correctAbstention(kind, stance, flag === 'unsupported') ? 1 : 0;
}

export const stance: Criterion<StanceVerdict, JudgeInput> = {
  name: 'stance',
  prompt: 'judge-stance',
  schema: { name: 'stance_verdict', zod: StanceVerdictSchema },
  scoreNames: ['judge_stance', 'correct_abstention'],
  repeatsIn: 'judge_stance',
  ask: (ctx) => ctx.input,
  vars: caseVars,
  offline(input, language) {
    const stance = stanceByPattern(input.answer, input.cta, language);
    const unsupported = heuristicClaims(input, language).claims.filter((c) => c.label !== 'supported').length;
    return {
      verdict: {
        stance,
        asserts_unsupported_facts: unsupported > 0,
        reason: `wording reads as ${stance}; ${unsupported} claim(s) without lexical support in a cited source`,
      },
    };
  },
  repeatKey: (v) => `${v.stance}${v.asserts_unsupported_facts ? '+unsupported' : ''}`,
  scores: (v, details, _input, record) => [
    {
      name: 'judge_stance',
      value: null,
      reason: v.reason,
      details: { stance: v.stance, asserts_unsupported_facts: v.asserts_unsupported_facts, ...details },
    },
    {
      name: 'correct_abstention',
      value: correctAbstention(record.kind, v.stance, v.asserts_unsupported_facts) ? 1 : 0,
      details: { kind: record.kind, stance: v.stance },
    },
  ],
  summarise(ctx) {
    const inDomainJudged = ctx.judged.filter((r) => r.kind !== 'off_topic');
    const offTopicJudged = ctx.judged.filter((r) => r.kind === 'off_topic');
    const errors = {
      in_domain: ctx.failures('stance', inDomainJudged),
      off_topic: ctx.failures('stance', offTopicJudged),
    };
    const matrix = {
      in_domain: { answered: 0, hedged: 0, abstained: 0, judge_errors: errors.in_domain },
      off_topic: { answered: 0, hedged: 0, abstained: 0, judge_errors: errors.off_topic },
    };
    for (const r of ctx.judged) {
      const s = stanceOf(r)?.stance;
      if (s) matrix[r.kind === 'off_topic' ? 'off_topic' : 'in_domain'][s]++;
    }
    const withStance = ctx.judged.filter((r) => stanceOf(r)?.stance);
    const offTopic = withStance.filter((r) => r.kind === 'off_topic');
    const inDomain = withStance.filter((r) => r.kind !== 'off_topic');
    const hallucinated = (r: CaseRecord) =>
      offtopicHallucination(r.kind, stanceOf(r)!.stance, r.citations?.length ?? 0) === 1;
    return {
      abstention_matrix: matrix,
      correct_abstention: {
        ...meanN(ctx.judged.map((r) => findScore(r.scores, 'correct_abstention')?.value)),
        judge_errors: errors.in_domain + errors.off_topic,
        ...ctx.stability['correct_abstention'],
        ...(ctx.ppi['correct_abstention'] ? { ppi: ctx.ppi['correct_abstention'] } : {}),
      },
      offtopic_hallucination_rate: {
        ...meanN(offTopic.map((r) => (hallucinated(r) ? 1 : 0))),
        judge_errors: errors.off_topic,
      },
      wrong_abstentions: {
        // A wrong abstention is an in-domain case failing correct abstention (the one rule).
        count: inDomain.filter((r) => !correctAbstention(r.kind, stanceOf(r)!.stance)).length,
        n: inDomain.length,
        judge_errors: errors.in_domain,
      },
    };
  },
  digest: [
    {
      figure: 'abstention_matrix',
      label: 'stance (judge)',
      value: (j) =>
        (['in_domain', 'off_topic'] as const)
          .map(
            (k) =>
              `${k}: answered ${j.abstention_matrix[k].answered} · hedged ${j.abstention_matrix[k].hedged} · abstained ${j.abstention_matrix[k].abstained}`,
          )
          .join(' | '),
    },
    {
      figure: 'correct_abstention',
      label: 'correct abstention (judge)',
      value: (j, f) => shareText(j.correct_abstention, f),
    },
    {
      figure: 'offtopic_hallucination_rate',
      label: 'off-topic hallucination rate (judge)',
      value: (j, f) => shareText(j.offtopic_hallucination_rate, f),
    },
    {
      figure: 'wrong_abstentions',
      label: 'wrong abstentions (in-domain, judge)',
      value: (j) => countText(j.wrong_abstentions),
    },
  ],
  columns: [
    {
      header: 'stance',
      cell: (r) => {
        const st = stanceOf(r);
        return st?.stance ? `${st.stance}${st.asserts_unsupported_facts ? ' (unsupported facts)' : ''}` : '–';
      },
    },
    { header: 'correct abstention', cell: (r, f) => f.fmt(findScore(r.scores, 'correct_abstention')?.value, 0) },
  ],
  stability: {
    figure: 'correct_abstention',
    label: 'correct abstention',
    value: (r, v) => (v === null ? null : abstentionOf(r.kind, v)),
  },
  human: [{ field: 'stance', judge: (r) => stanceOf(r)?.stance }],
  ppi: [
    {
      field: 'correct_abstention',
      label: 'correct abstention',
      figure: 'correct_abstention',
      judge: (r) => {
        const c = findScore(r.scores, 'correct_abstention')?.value;
        return typeof c === 'number' ? c : undefined;
      },
      human: (r) => {
        const s = StanceSchema.safeParse(r.human?.stance);
        return s.success ? bit(correctAbstention(r.kind, s.data)) : undefined;
      },
    },
  ],
};

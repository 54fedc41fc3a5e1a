/**
 * Faithfulness: the answer's atomic claims, each labelled against the evidence block.
 *   faithfulness  supported / claims; null when the answer makes no claim (never 1.0)
 * Summary: the mean supported share, fully faithful answers (every claim supported), contradicted
 * claims. People label it as `faithful` (every claim supported, yes or no).
 */
import type { CaseRecord } from '../../model/results.js';
import { findScore } from '../../model/scores.js';
import { meanN } from '../../scoring/retrieval-metrics.js';
import { heuristicClaims } from '../heuristic-judge.js';
import { FaithfulnessVerdictSchema, type FaithfulnessVerdict, type JudgeInput } from '../schemas.js';
import { instructionFlags } from '../untrusted.js';
import { allOrNot, bit, caseVars, countText } from './shared.js';
import type { Criterion } from './types.js';

const supportedShare = (v: FaithfulnessVerdict) =>
  v.claims.length ? v.claims.filter((c) => c.label === 'supported').length / v.claims.length : null;

/** The judge's `faithful` label: every claim supported; an answer with no claim has none. */
const judgedFaithful = (r: CaseRecord) => allOrNot(findScore(r.scores, 'faithfulness')?.value);

export const faithfulness: Criterion<FaithfulnessVerdict, JudgeInput> = {
  name: 'faithfulness',
  prompt: 'judge-faithfulness',
  schema: { name: 'faithfulness_verdict', zod: FaithfulnessVerdictSchema },
  scoreNames: ['faithfulness'],
  repeatsIn: 'faithfulness',
  ask: (ctx) => ctx.input,
  vars: caseVars,
  check(v, input) {
    const shown = new Set(input.sources.map((s) => s.n));
    const bad = v.claims.find((c) => c.label === 'supported' && c.source !== null && !shown.has(c.source));
    return bad
      ? `claim "${bad.claim}" names source ${bad.source}, which was not shown (sources: ${[...shown].join(', ') || 'none'})`
      : undefined;
  },
  offline(input, language) {
    const flags = instructionFlags(input.sources);
    return { verdict: heuristicClaims(input, language), ...(flags.length ? { flags } : {}) };
  },
  repeatKey(v) {
    const share = supportedShare(v);
    return share === null ? 'no_claims' : Number(share.toFixed(4));
  },
  scores(v, details) {
    const value = supportedShare(v);
    return [
      {
        name: 'faithfulness',
        value,
        ...(value === null ? { reason: 'the answer makes no claim' } : {}),
        details: { claims: v.claims, ...details },
      },
    ];
  },
  summarise(ctx) {
    const faith = ctx.judged
      .map((r) => findScore(r.scores, 'faithfulness')?.value)
      .filter((v): v is number => typeof v === 'number');
    const contradicted = ctx.judged.reduce(
      (a, r) =>
        a +
        (findScore(r.scores, 'faithfulness')?.details?.claims ?? []).filter((c) => c.label === 'contradicted').length,
      0,
    );
    const errors = ctx.failures('faithfulness');
    return {
      faithfulness: { ...meanN(faith), judge_errors: errors, ...ctx.stability['faithfulness'] },
      fully_faithful: {
        count: faith.filter((v) => v === 1).length,
        n: faith.length,
        judge_errors: errors,
        ...(ctx.ppi['faithful'] ? { ppi: ctx.ppi['faithful'] } : {}),
      },
      contradicted_claims: contradicted,
    };
  },
  digest: [
    {
      figure: 'faithfulness',
      label: 'faithfulness (mean supported share)',
      value: (j, f) => `${f.fmt(j.faithfulness.mean)} (n=${j.faithfulness.n})`,
    },
    { figure: 'fully_faithful', label: 'fully faithful answers', value: (j) => countText(j.fully_faithful) },
    { figure: 'contradicted_claims', label: 'contradicted claims', value: (j) => String(j.contradicted_claims) },
  ],
  columns: [{ header: 'faithfulness', cell: (r, f) => f.fmt(findScore(r.scores, 'faithfulness')?.value) }],
  // A faithfulness repeat is its value, or 'no_claims': comparable for flips, no figure.
  stability: { figure: 'faithfulness', label: 'faithfulness', value: (_r, v) => v },
  human: [{ field: 'faithful', judge: judgedFaithful }],
  ppi: [
    {
      field: 'faithful',
      label: 'fully faithful',
      figure: 'fully_faithful',
      judge: (r) => {
        const f = judgedFaithful(r);
        return f === undefined ? undefined : bit(f === 'true');
      },
      human: (r) => (typeof r.human?.faithful === 'boolean' ? bit(r.human.faithful) : undefined),
    },
  ],
};

/**
 * The `summary.judge` block of a run (names are a contract): aggregates of the per-case judge
 * scores over the records that finished (status ok) and were judged. Error records are never
 * averaged in; a verdict the judge could not give is a `judge_error`, counted on its own.
 */
import type { CaseRecord } from '../model/results.js';
import { findScore, scoresNamed, type ScoreName, type VerdictName } from '../model/scores.js';
import type { JudgeSummary } from '../model/summary.js';
import { correctAbstention, offtopicHallucination } from '../scoring/definitions.js';
import { meanN } from '../scoring/retrieval-metrics.js';
import { humanAgreement, selfConsistency } from '../judge/judge-agreement.js';
import { humanLabelsNotCompared } from '../judge/human-labels.js';
import { summaryPpi } from '../judge/ppi-figures.js';
import { judgeStability } from '../judge/stability.js';

/** USD per million tokens (config judge.prices). */
export interface Price {
  input: number;
  output: number;
}

export interface JudgeSummaryOptions {
  judge: { id: string; offline: boolean; promptVersions: Record<string, string> };
  /** config judge.prices; looked up by model name, then by the judge id. */
  prices?: Record<string, Price>;
  /** The judge's model name as configured (config judge.model). */
  model?: string;
}

const JUDGE_TOKENS = new Set<ScoreName>([
  'faithfulness',
  'judge_stance',
  'citation_relevance',
  'judge_error',
  'judge_safety',
  'nugget_recall',
  'answer_correctness',
]);

/** Cost of `tokens` at `price` (USD per million tokens). */
export function estimateCost(tokens: { input: number; output: number }, price: Price | undefined): number | null {
  return price ? (tokens.input * price.input + tokens.output * price.output) / 1e6 : null;
}

export function summariseJudge(records: readonly CaseRecord[], opts: JudgeSummaryOptions): JudgeSummary {
  const judged = records.filter((r) => r.status === 'ok' && r.scores.some((s) => JUDGE_TOKENS.has(s.name)));
  const stanceOf = (r: CaseRecord) => findScore(r.scores, 'judge_stance')?.details;
  // Failed verdicts per verdict name (judge_error details.judge) and, for the stance, per kind.
  const failedVerdict = (r: CaseRecord, verdict: VerdictName) =>
    scoresNamed(r.scores, 'judge_error').some((s) => s.details?.judge === verdict);
  const failures = (verdict: VerdictName, rs: readonly CaseRecord[] = judged) =>
    rs.filter((r) => failedVerdict(r, verdict)).length;
  const inDomainJudged = judged.filter((r) => r.kind !== 'off_topic');
  const offTopicJudged = judged.filter((r) => r.kind === 'off_topic');
  const stanceErrors = { in_domain: failures('stance', inDomainJudged), off_topic: failures('stance', offTopicJudged) };
  const matrix = {
    in_domain: { answered: 0, hedged: 0, abstained: 0, judge_errors: stanceErrors.in_domain },
    off_topic: { answered: 0, hedged: 0, abstained: 0, judge_errors: stanceErrors.off_topic },
  };
  for (const r of judged) {
    const s = stanceOf(r)?.stance;
    if (s) matrix[r.kind === 'off_topic' ? 'off_topic' : 'in_domain'][s]++;
  }
  const faith = judged
    .map((r) => findScore(r.scores, 'faithfulness')?.value)
    .filter((v): v is number => typeof v === 'number');
  const contradicted = judged.reduce(
    (a, r) =>
      a + (findScore(r.scores, 'faithfulness')?.details?.claims ?? []).filter((c) => c.label === 'contradicted').length,
    0,
  );
  const withStance = judged.filter((r) => stanceOf(r)?.stance);
  const offTopic = withStance.filter((r) => r.kind === 'off_topic');
  const inDomain = withStance.filter((r) => r.kind !== 'off_topic');
  const hallucinated = (r: CaseRecord) =>
    offtopicHallucination(r.kind, stanceOf(r)!.stance, r.citations?.length ?? 0) === 1;
  const tokens = { input: 0, output: 0 };
  let errors = 0;
  for (const r of judged) {
    for (const s of r.scores) {
      if (!JUDGE_TOKENS.has(s.name)) continue;
      if (s.name === 'judge_error') errors++;
      const t = 'details' in s && s.details && 'tokens' in s.details ? s.details.tokens : undefined;
      tokens.input += t?.input ?? 0;
      tokens.output += t?.output ?? 0;
    }
  }
  const price = (opts.model !== undefined ? opts.prices?.[opts.model] : undefined) ?? opts.prices?.[opts.judge.id];
  // Agreement reads every record: a human-labelled case the judge could not score counts as excluded.
  const agreement = humanAgreement(records);
  const notCompared = humanLabelsNotCompared(records);
  const consistency = selfConsistency(judged);
  const stable = judgeStability(judged);
  const nuggets = judged.map((r) => findScore(r.scores, 'nugget_recall')).filter((s) => s !== undefined);
  const withKey = judged.filter((r) => r.nuggets?.length || r.reference_answer);
  const vital = meanN(nuggets.map((s) => s.details?.vital));
  const ppi = summaryPpi(records);
  return {
    judge: opts.judge.id,
    offline: opts.judge.offline,
    prompt_versions: opts.judge.promptVersions,
    judged: judged.length,
    faithfulness: { ...meanN(faith), judge_errors: failures('faithfulness'), ...stable.faithfulness },
    fully_faithful: {
      count: faith.filter((v) => v === 1).length,
      n: faith.length,
      judge_errors: failures('faithfulness'),
      ...(ppi.faithful ? { ppi: ppi.faithful } : {}),
    },
    contradicted_claims: contradicted,
    abstention_matrix: matrix,
    correct_abstention: {
      ...meanN(judged.map((r) => findScore(r.scores, 'correct_abstention')?.value)),
      judge_errors: stanceErrors.in_domain + stanceErrors.off_topic,
      ...stable.correct_abstention,
      ...(ppi.correct_abstention ? { ppi: ppi.correct_abstention } : {}),
    },
    offtopic_hallucination_rate: {
      ...meanN(offTopic.map((r) => (hallucinated(r) ? 1 : 0))),
      judge_errors: stanceErrors.off_topic,
    },
    relevant_citation_rate: {
      ...meanN(judged.map((r) => findScore(r.scores, 'citation_relevance')?.value)),
      judge_errors: failures('citation_relevance'),
      ...stable.relevant_citation_rate,
      ...(ppi.relevant_citation ? { ppi: ppi.relevant_citation } : {}),
    },
    wrong_abstentions: {
      // A wrong abstention is an in-domain case failing correct abstention (the one rule).
      count: inDomain.filter((r) => !correctAbstention(r.kind, stanceOf(r)!.stance)).length,
      n: inDomain.length,
      judge_errors: stanceErrors.in_domain,
    },
    judge_errors: errors,
    tokens,
    cost_usd: estimateCost(tokens, price),
    ...(agreement ? { agreement } : {}),
    ...(notCompared ? { agreement_not_compared: notCompared } : {}),
    ...(withKey.length
      ? {
          nugget_recall: {
            ...meanN(nuggets.map((s) => s.value)),
            vital: vital.mean,
            vital_n: vital.n,
            weighted: meanN(nuggets.map((s) => s.details?.weighted)).mean,
            judge_errors: failures('nuggets', withKey),
          },
          answer_correctness: {
            ...meanN(judged.map((r) => findScore(r.scores, 'answer_correctness')?.value)),
            judge_errors: failures(
              'nuggets',
              withKey.filter((r) => r.reference_answer),
            ),
          },
        }
      : {}),
    ...(consistency ? { self_consistency: consistency } : {}),
  };
}

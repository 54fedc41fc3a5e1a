/**
 * The `summary.judge` block of a run (names are a contract): aggregates of the per-case judge
 * scores over the records that finished (status ok) and were judged. Error records are never
 * averaged in; a verdict the judge could not give is a `judge_error`, counted on its own.
 */
import type { CountN } from '../scoring/retrieval-metrics.js';
import type { CaseRecord } from '../model/results.js';
import { offtopicHallucination } from '../scoring/definitions.js';
import { meanN, type MeanN } from '../scoring/retrieval-metrics.js';
import { humanAgreement, selfConsistency, type AgreementFigures, type ConsistencyFigures } from './agreement.js';

type StanceCounts = { answered: number; hedged: number; abstained: number };

/**
 * A judged figure with the verdicts behind it that the judge could not give: a share over the
 * verdicts given means little without the count of those that failed (docs/design.md#caserecord:
 * an error is never averaged in, and never hidden either).
 */
type WithErrors<T> = T & { judge_errors: number };

/** USD per million tokens (config judge.prices). */
export interface Price {
  input: number;
  output: number;
}

export interface JudgeSummary {
  /** The judge's id, e.g. `openai:gpt-4o-mini` or `offline:heuristic`. */
  judge: string;
  /** True for the offline heuristic stand-in (not a language model). */
  offline: boolean;
  /** Judge prompt name → version. */
  prompt_versions: Record<string, string>;
  /** Answered cases the judge scored (status ok). */
  judged: number;
  /** Mean of per-case faithfulness over answers with at least one claim. */
  faithfulness: WithErrors<MeanN>;
  /** Answers whose every claim is supported, out of those with at least one claim. */
  fully_faithful: WithErrors<CountN>;
  /** Claims labelled contradicted, over all answers. */
  contradicted_claims: number;
  /** kind → judge stance → cases. */
  abstention_matrix: { in_domain: WithErrors<StanceCounts>; off_topic: WithErrors<StanceCounts> };
  correct_abstention: WithErrors<MeanN>;
  /** Off-topic answers the judge reads as answered that carry a citation (src/scoring/definitions.ts). */
  offtopic_hallucination_rate: WithErrors<MeanN>;
  /** Mean of per-case citation relevance over answers with at least one citation. */
  relevant_citation_rate: WithErrors<MeanN>;
  /** In-domain answers the judge reads as abstentions. */
  wrong_abstentions: WithErrors<CountN>;
  /** Verdicts the judge could not give after one retry (`judge_error` scores), all verdicts together. */
  judge_errors: number;
  /** Judge tokens over every call that returned (cache hits and repeats included). */
  tokens: { input: number; output: number };
  /** tokens × price per million; null when the config has no price for the judge's model. */
  cost_usd: number | null;
  agreement?: Record<string, AgreementFigures>;
  self_consistency?: Record<string, ConsistencyFigures>;
}

export interface JudgeSummaryOptions {
  judge: { id: string; offline: boolean; promptVersions: Record<string, string> };
  /** config judge.prices; looked up by model name, then by the judge id. */
  prices?: Record<string, Price>;
  /** The judge's model name as configured (config judge.model). */
  model?: string;
}

const scoreOf = (r: CaseRecord, name: string) => r.scores.find((s) => s.name === name);
const JUDGE_TOKENS = new Set(['faithfulness', 'judge_stance', 'citation_relevance', 'judge_error', 'judge_safety']);

/** Cost of `tokens` at `price` (USD per million tokens). */
export function estimateCost(tokens: { input: number; output: number }, price: Price | undefined): number | null {
  return price ? (tokens.input * price.input + tokens.output * price.output) / 1e6 : null;
}

export function summariseJudge(records: readonly CaseRecord[], opts: JudgeSummaryOptions): JudgeSummary {
  const judged = records.filter((r) => r.status === 'ok' && r.scores.some((s) => JUDGE_TOKENS.has(s.name)));
  const stanceOf = (r: CaseRecord) =>
    (scoreOf(r, 'judge_stance')?.details as
      { stance?: keyof StanceCounts; asserts_unsupported_facts?: boolean } | undefined) ?? undefined;
  // Failed verdicts per verdict name (judge_error details.judge) and, for the stance, per kind.
  const failedVerdict = (r: CaseRecord, verdict: string) =>
    r.scores.some((s) => s.name === 'judge_error' && (s.details as { judge?: string } | undefined)?.judge === verdict);
  const failures = (verdict: string, rs: readonly CaseRecord[] = judged) =>
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
  const faith = judged.map((r) => scoreOf(r, 'faithfulness')?.value).filter((v): v is number => typeof v === 'number');
  const contradicted = judged.reduce(
    (a, r) =>
      a +
      ((scoreOf(r, 'faithfulness')?.details as { claims?: { label: string }[] } | undefined)?.claims ?? []).filter(
        (c) => c.label === 'contradicted',
      ).length,
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
      const t = (s.details as { tokens?: { input: number; output: number } } | undefined)?.tokens;
      tokens.input += t?.input ?? 0;
      tokens.output += t?.output ?? 0;
    }
  }
  const price = (opts.model !== undefined ? opts.prices?.[opts.model] : undefined) ?? opts.prices?.[opts.judge.id];
  // Agreement reads every record: a human-labelled case the judge could not score counts as excluded.
  const agreement = humanAgreement(records);
  const consistency = selfConsistency(judged);
  return {
    judge: opts.judge.id,
    offline: opts.judge.offline,
    prompt_versions: opts.judge.promptVersions,
    judged: judged.length,
    faithfulness: { ...meanN(faith), judge_errors: failures('faithfulness') },
    fully_faithful: {
      count: faith.filter((v) => v === 1).length,
      n: faith.length,
      judge_errors: failures('faithfulness'),
    },
    contradicted_claims: contradicted,
    abstention_matrix: matrix,
    correct_abstention: {
      ...meanN(judged.map((r) => scoreOf(r, 'correct_abstention')?.value)),
      judge_errors: stanceErrors.in_domain + stanceErrors.off_topic,
    },
    offtopic_hallucination_rate: {
      ...meanN(offTopic.map((r) => (hallucinated(r) ? 1 : 0))),
      judge_errors: stanceErrors.off_topic,
    },
    relevant_citation_rate: {
      ...meanN(judged.map((r) => scoreOf(r, 'citation_relevance')?.value)),
      judge_errors: failures('citation_relevance'),
    },
    wrong_abstentions: {
      count: inDomain.filter((r) => stanceOf(r)!.stance === 'abstained').length,
      n: inDomain.length,
      judge_errors: stanceErrors.in_domain,
    },
    judge_errors: errors,
    tokens,
    cost_usd: estimateCost(tokens, price),
    ...(agreement ? { agreement } : {}),
    ...(consistency ? { self_consistency: consistency } : {}),
  };
}

/**
 * The `summary.judge` block of a run (names are a contract): aggregates of the per-case judge
 * scores over the records that finished (status ok) and were judged. Error records are never
 * averaged in; a verdict the judge could not give is a `judge_error`, counted on its own.
 */
import type { CaseRecord } from '../model/results.js';
import { scoresNamed } from '../model/scores.js';
import { JudgeSummarySchema, type JudgeSummary } from '../model/summary.js';
import { humanAgreement, selfConsistency } from '../judge/judge-agreement.js';
import { criteria, judgeScoreNames } from '../judge/criteria/index.js';
import type { SummaryContext } from '../judge/criteria/types.js';
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

/** Cost of `tokens` at `price` (USD per million tokens). */
export function estimateCost(tokens: { input: number; output: number }, price: Price | undefined): number | null {
  return price ? (tokens.input * price.input + tokens.output * price.output) / 1e6 : null;
}

/** The judge block: the judge, its tokens and cost, agreement and consistency, and each criterion's figures. */
export function summariseJudge(records: readonly CaseRecord[], opts: JudgeSummaryOptions): JudgeSummary {
  const judgeScores = new Set(judgeScoreNames());
  const judged = records.filter((r) => r.status === 'ok' && r.scores.some((s) => judgeScores.has(s.name)));
  // Failed verdicts per verdict name (judge_error details.judge).
  const failedVerdict = (r: CaseRecord, verdict: string) =>
    scoresNamed(r.scores, 'judge_error').some((s) => s.details?.judge === verdict);
  const ctx: SummaryContext = {
    records,
    judged,
    failures: (verdict, among = judged) => among.filter((r) => failedVerdict(r, verdict)).length,
    stability: judgeStability(judged),
    ppi: summaryPpi(records),
  };
  const tokens = { input: 0, output: 0 };
  let errors = 0;
  for (const r of judged) {
    for (const s of r.scores) {
      if (!judgeScores.has(s.name)) continue;
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
  // Parsed, so the block is stored in the schema's order whichever criterion gave a figure.
  return JudgeSummarySchema.parse({
    judge: opts.judge.id,
    offline: opts.judge.offline,
    prompt_versions: opts.judge.promptVersions,
    judged: judged.length,
    ...Object.assign({}, ...criteria().map((c) => c.summarise?.(ctx) ?? {})),
    judge_errors: errors,
    tokens,
    cost_usd: estimateCost(tokens, price),
    ...(agreement ? { agreement } : {}),
    ...(notCompared ? { agreement_not_compared: notCompared } : {}),
    ...(consistency ? { self_consistency: consistency } : {}),
  });
}

/**
 * Per-case judge scores: each criterion of the registry (src/judge/criteria/) asked of an answered
 * record, in registry order; what each writes is in its module. Beside them:
 *   judge_error  value null; one per verdict the judge could not give (details.judge names it)
 * Every judge score's details carry `tokens` {input, output} of the calls behind it and, with
 * --repeat K, `repeats`: the K comparable verdicts (the first is the one scored; null = failed);
 * `flags`: what the judge noticed beside the verdict (a passage addressed to the judge).
 */
import type { CaseRecord } from '../model/results.js';
import type { ScoreRecord } from '../model/scores.js';
import type { Usage } from '../llm/types.js';
import { criteria, judgeScoreNames } from './criteria/index.js';
import type { AskContext, Criterion } from './criteria/types.js';
import type { Judge, JudgeInput } from './schemas.js';

/** Every score name the judge writes (a re-judge removes these before judging again). */
export { judgeScoreNames };

export interface CaseJudgeOptions {
  /** judges[0] gives the scored verdicts; judges[1..K-1] are the repeats (--repeat K). */
  judges: readonly Judge[];
  /** The CTA footer (the judges ignore it). */
  cta: string;
  /** Probes: what must not appear in the reply (default: nothing specific). */
  mustNotLeak?: (record: CaseRecord) => string;
}

const tokensOf = (usages: readonly Usage[]) => ({
  input: usages.reduce((a, u) => a + u.inputTokens, 0),
  output: usages.reduce((a, u) => a + u.outputTokens, 0),
});

/** Asks one criterion of every judge (the first scored, the others repeats) and builds its scores. */
async function verdict<V, Q>(
  judges: readonly Judge[],
  c: Criterion<V, Q>,
  asked: Q,
  record: CaseRecord,
): Promise<ScoreRecord[]> {
  const first = await judges[0]!.verdict(c, asked);
  const usages = [first.usage];
  if (!first.ok)
    return [
      { name: 'judge_error', value: null, reason: first.reason, details: { judge: c.name, tokens: tokensOf(usages) } },
    ];
  const repeats: (string | number | null)[] = [c.repeatKey(first.verdict)];
  for (const j of judges.slice(1)) {
    const again = await j.verdict(c, asked);
    usages.push(again.usage);
    repeats.push(again.ok ? c.repeatKey(again.verdict) : null);
  }
  const details = {
    tokens: tokensOf(usages),
    ...(judges.length > 1 ? { repeats } : {}),
    ...(first.flags?.length ? { flags: first.flags } : {}),
  };
  return c.scores(first.verdict, details, asked, record);
}

/** The judge scores of one answered record (none when there is no answer). */
export async function judgeRecord(record: CaseRecord, opts: CaseJudgeOptions): Promise<ScoreRecord[]> {
  if (record.answer === undefined) return [];
  if (opts.judges.length === 0) throw new Error('internal: judgeRecord needs at least one judge');
  const input: JudgeInput = {
    question: record.question,
    answer: record.answer,
    sources: record.sources ?? [],
    cta: opts.cta,
  };
  const ctx: AskContext = { record, input, cta: opts.cta, mustNotLeak: opts.mustNotLeak };
  const out: ScoreRecord[] = [];
  for (const c of criteria()) {
    const asked = c.ask(ctx);
    if (asked === undefined) out.push(...(c.notAsked?.(ctx) ?? []));
    else out.push(...(await verdict(opts.judges, c, asked, record)));
  }
  return out;
}

/** Scores a finished answer with a judge; returns its scores (the judge module decides how). */
export type CaseJudge = (record: CaseRecord, system: string) => Promise<ScoreRecord[]>;

/** The `CaseJudge` hook of the runner (the judge re-renders its evidence from the record's sources). */
export function makeCaseJudge(opts: CaseJudgeOptions): CaseJudge {
  return (record) => judgeRecord(record, opts);
}

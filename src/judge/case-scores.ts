/**
 * Per-case judge scores (names are a contract other modules read):
 *   faithfulness        supported / claims; null when the answer makes no claim (never 1.0)
 *   judge_stance        value null; details {stance, asserts_unsupported_facts}
 *   correct_abstention  1/0 by correctAbstention (src/scoring/definitions.ts), with the judge's unsupported-facts flag
 *   citation_relevance  share of [[n]] markers whose source supports the citing sentence; null without markers
 *   judge_error         value null; one per verdict the judge could not give (details.judge names it)
 *   judge_safety        probes only: value null; details {verdict: refused | complied | leaked}
 *   nugget_recall       strict recall of the case's nuggets (src/scoring/nuggets.ts); details: each nugget's support, vital, weighted
 *   answer_correctness  against the case's reference answer: correct 1, partly correct 0.5, incorrect 0
 * Every judge score's details carry `tokens` {input, output} of the calls behind it and, with
 * --repeat K, `repeats`: the K comparable verdicts (the first is the one scored; null = failed);
 * `flags`: what the judge noticed beside the verdict (a passage addressed to the judge).
 */
import type { CaseRecord } from '../model/results.js';
import type { ScoreRecord, VerdictName } from '../model/scores.js';
import type { Usage } from '../llm/types.js';
import { citationItems } from './materials.js';
import { correctAbstention } from '../scoring/definitions.js';
import { nuggetRecall } from '../scoring/nuggets.js';
import type {
  AnswerKey,
  CitationVerdict,
  FaithfulnessVerdict,
  Judge,
  JudgeInput,
  JudgeOutcome,
  NuggetVerdict,
  SafetyVerdict,
  StanceVerdict,
} from './schemas.js';

/**
 * Each verdict reduced to what is compared between two judgments of the same answer (the
 * repeats of --repeat K, the drift canary's stored verdicts): the supported share (or
 * `no_claims`), the stance and its unsupported-facts flag, one bit per citation, each nugget's
 * support initial and the correctness, the safety outcome.
 */
export const VERDICT_KEYS = {
  faithfulness: (v: Pick<FaithfulnessVerdict, 'claims'>): string | number =>
    v.claims.length
      ? Number((v.claims.filter((c) => c.label === 'supported').length / v.claims.length).toFixed(4))
      : 'no_claims',
  stance: (v: Pick<StanceVerdict, 'stance' | 'asserts_unsupported_facts'>): string =>
    `${v.stance}${v.asserts_unsupported_facts ? '+unsupported' : ''}`,
  citation_relevance: (v: { citations: readonly Pick<CitationVerdict['citations'][number], 'supports'>[] }): string =>
    v.citations.map((c) => (c.supports ? 1 : 0)).join(''),
  nuggets: (v: {
    nuggets: readonly Pick<NuggetVerdict['nuggets'][number], 'support'>[];
    correctness: NuggetVerdict['correctness'];
  }): string => `${v.nuggets.map((n) => n.support[0]).join('')}:${v.correctness ?? '-'}`,
  safety: (v: Pick<SafetyVerdict, 'outcome'>): string => v.outcome,
} as const;

/** Every score name the judge writes (a re-judge removes these before judging again). */
export const JUDGE_SCORE_NAMES = [
  'faithfulness',
  'judge_stance',
  'correct_abstention',
  'citation_relevance',
  'judge_error',
  'judge_safety',
  'nugget_recall',
  'answer_correctness',
] as const;

export interface CaseJudgeOptions {
  /** judges[0] gives the scored verdicts; judges[1..K-1] are the repeats (--repeat K). */
  judges: readonly Judge[];
  /** The CTA footer (the judges ignore it). */
  cta: string;
  /** Probes: what must not appear in the reply (default: nothing specific). */
  mustNotLeak?: (record: CaseRecord) => string;
}

/** What every verdict's scores carry in their details: the tokens and, with --repeat K, the K verdicts. */
interface VerdictDetails {
  tokens: { input: number; output: number };
  repeats?: (string | number | null)[];
  flags?: string[];
}

const tokensOf = (usages: readonly Usage[]) => ({
  input: usages.reduce((a, u) => a + u.inputTokens, 0),
  output: usages.reduce((a, u) => a + u.outputTokens, 0),
});

/**
 * Runs one verdict on every judge (first scored, the others repeats) and builds its scores.
 * `compare` reduces a verdict to what self-consistency compares.
 */
async function verdict<T>(
  judges: readonly Judge[],
  name: VerdictName,
  call: (j: Judge) => Promise<JudgeOutcome<T>>,
  compare: (v: T) => string | number | null,
  scores: (v: T, details: VerdictDetails) => ScoreRecord[],
): Promise<ScoreRecord[]> {
  const first = await call(judges[0]!);
  const usages = [first.usage];
  if (!first.ok)
    return [
      { name: 'judge_error', value: null, reason: first.reason, details: { judge: name, tokens: tokensOf(usages) } },
    ];
  const repeats: (string | number | null)[] = [compare(first.verdict)];
  for (const j of judges.slice(1)) {
    const again = await call(j);
    usages.push(again.usage);
    repeats.push(again.ok ? compare(again.verdict) : null);
  }
  return scores(first.verdict, {
    tokens: tokensOf(usages),
    ...(judges.length > 1 ? { repeats } : {}),
    ...(first.flags?.length ? { flags: first.flags } : {}),
  });
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
  const out: ScoreRecord[] = [];

  out.push(
    ...(await verdict(
      opts.judges,
      'faithfulness',
      (j) => j.faithfulness(input),
      VERDICT_KEYS.faithfulness,
      (v, details) => {
        const supported = v.claims.filter((c) => c.label === 'supported').length;
        const value = v.claims.length ? supported / v.claims.length : null;
        return [
          {
            name: 'faithfulness',
            value,
            ...(value === null ? { reason: 'the answer makes no claim' } : {}),
            details: { claims: v.claims, ...details },
          },
        ];
      },
    )),
  );

  out.push(
    ...(await verdict(
      opts.judges,
      'stance',
      (j) => j.stance(input),
      VERDICT_KEYS.stance,
      (v, details) => [
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
    )),
  );

  const items = citationItems(record.answer, input.sources, opts.cta);
  if (items.length === 0) {
    out.push({
      name: 'citation_relevance',
      value: null,
      reason: 'the answer cites no source',
      details: { citations: [] },
    });
  } else {
    out.push(
      ...(await verdict(
        opts.judges,
        'citation_relevance',
        (j) => j.citations(input, items),
        VERDICT_KEYS.citation_relevance,
        (v, details) => {
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
      )),
    );
  }

  const judges = opts.judges;
  const key = {
    nuggets: record.nuggets ?? [],
    ...(record.reference_answer ? { reference: record.reference_answer } : {}),
  };
  if ((key.nuggets.length || key.reference !== undefined) && judges.every((j) => j.nuggets)) {
    out.push(
      ...(await verdict(
        judges,
        'nuggets',
        (j) => j.nuggets!(input, key),
        VERDICT_KEYS.nuggets,
        (v, details) => answerKeyScores(key, v, details),
      )),
    );
  }

  if (record.probe) {
    const safety = { attack: record.question, answer: record.answer, mustNotLeak: opts.mustNotLeak?.(record) ?? '' };
    out.push(
      ...(await verdict(
        opts.judges,
        'safety',
        (j) => j.safety(safety),
        VERDICT_KEYS.safety,
        (v, details) => [
          {
            name: 'judge_safety',
            value: null,
            reason: v.reason,
            details: { verdict: v.outcome, expect: record.probe!.expect, ...details },
          },
        ],
      )),
    );
  }
  return out;
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

/** Scores a finished answer with a judge; returns its scores (the judge module decides how). */
export type CaseJudge = (record: CaseRecord, system: string) => Promise<ScoreRecord[]>;

/** The `CaseJudge` hook of the runner (the judge re-renders its evidence from the record's sources). */
export function makeCaseJudge(opts: CaseJudgeOptions): CaseJudge {
  return (record) => judgeRecord(record, opts);
}

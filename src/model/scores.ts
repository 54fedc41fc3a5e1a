/**
 * The scores a case record carries: one union discriminated on `name`, each member with the
 * details its scorer writes, so a reader gets typed details by narrowing on the name (no cast).
 * Part of the model: imports only zod. Key order in each details object is the order the scorers
 * write it (a stored file read and written again keeps its bytes).
 */
import { z } from 'zod';

const num = z.number().nullable();

/** How an answer stands toward the question (correct_abstention in src/scoring/definitions.ts). */
export const StanceSchema = z.enum(['answered', 'hedged', 'abstained']);
export type Stance = z.infer<typeof StanceSchema>;

export const ClaimLabelSchema = z.enum(['supported', 'unsupported', 'contradicted']);
export type ClaimLabel = z.infer<typeof ClaimLabelSchema>;

/** One atomic claim of an answer, labelled against the evidence block. */
export const ClaimSchema = z
  .object({
    claim: z.string(),
    label: ClaimLabelSchema,
    /** Number n of the supporting source [[n]]; null when not supported. */
    source: z.number().nullable(),
  })
  .strict();

/** How far an answer states a nugget (TREC 2024 RAG track). */
export const NuggetSupportSchema = z.enum(['support', 'partial_support', 'not_support']);
/** How an answer compares with the case's reference answer. */
export const CorrectnessSchema = z.enum(['correct', 'partly_correct', 'incorrect']);

/** What a safety judge says the reply did with the attack. */
export const SafetyOutcomeSchema = z.enum(['refused', 'complied', 'leaked']);

/**
 * A verdict of the judge, as named in `judge_error` details and self-consistency figures: a
 * criterion's name (src/judge/criteria/: faithfulness, stance, citation_relevance, safety,
 * nuggets, and any criterion registered beside them).
 */
export const VerdictNameSchema = z.string().regex(/^[a-z][a-z0-9_]*$/, 'a verdict name is snake_case');
export type VerdictName = z.infer<typeof VerdictNameSchema>;

/** Judge tokens {input, output} of the calls behind a judge score. */
export const JudgeTokensSchema = z.object({ input: z.number(), output: z.number() }).strict();
/** With --repeat K: the K comparable verdicts (the first is the one scored; null = failed). */
export const RepeatsSchema = z.array(z.union([z.string(), z.number(), z.null()]));

/** What the deterministic safety checks saw in one probe's answer. */
export const SafetyCheckSchema = z
  .object({
    /** The canary planted in the system prompt appears in the answer. */
    leaked: z.boolean(),
    /** An indirect probe's planted marker appears in the answer (the injection was followed). */
    marker_repeated: z.boolean(),
    /** The input gate stopped the prompt before retrieval. */
    gated: z.boolean(),
    stance: StanceSchema,
    pass: z.boolean(),
    reason: z.string(),
  })
  .strict();
export type SafetyCheck = z.infer<typeof SafetyCheckSchema>;

/** One cited id with the sentence citing it and whether its passage supports it. */
export const CitationJudgementSchema = z
  .object({ n: z.number(), sentence: z.string(), supports: z.boolean(), reason: z.string() })
  .strict();

/** A score whose scorer writes `details` (optional on read: a record made by hand may leave them out). */
const score = <N extends string, D extends z.ZodType>(name: N, details: D) =>
  z.object({ name: z.literal(name), value: num, reason: z.string().optional(), details: details.optional() }).strict();
const bare = <N extends string>(name: N) =>
  z.object({ name: z.literal(name), value: num, reason: z.string().optional() }).strict();

/** Details shared by every judge verdict score. */
const judged = {
  tokens: JudgeTokensSchema.optional(),
  repeats: RepeatsSchema.optional(),
  /** What the judge noticed beside its verdict, e.g. a passage addressed to the judge. */
  flags: z.array(z.string()).optional(),
};

/** The scores with typed details (the names are a contract other modules and stored files read). */
export const KnownScoreSchema = z.discriminatedUnion('name', [
  // Deterministic scorers (src/scoring/).
  score('citation_validity', z.object({ markers: z.number(), invalid: z.number() }).strict()),
  bare('golden_citation'),
  bare('cta'),
  score('stance_pattern', z.object({ stance: StanceSchema }).strict()),
  bare('correct_abstention_pattern'),
  score('offtopic_hallucination', z.object({ cites: z.number() }).strict()),
  score('safety', SafetyCheckSchema),
  // Judge scores (src/judge/case-scores.ts).
  score('faithfulness', z.object({ claims: z.array(ClaimSchema), ...judged }).strict()),
  score('judge_stance', z.object({ stance: StanceSchema, asserts_unsupported_facts: z.boolean(), ...judged }).strict()),
  score('correct_abstention', z.object({ kind: z.string(), stance: StanceSchema }).strict()),
  score('citation_relevance', z.object({ citations: z.array(CitationJudgementSchema), ...judged }).strict()),
  score('judge_error', z.object({ judge: VerdictNameSchema, tokens: JudgeTokensSchema.optional() }).strict()),
  score(
    'nugget_recall',
    z
      .object({
        nuggets: z.array(
          z
            .object({
              text: z.string(),
              importance: z.enum(['vital', 'okay']),
              support: NuggetSupportSchema,
              reason: z.string(),
            })
            .strict(),
        ),
        vital: num,
        weighted: z.number(),
        vital_weighted: num,
        ...judged,
      })
      .strict(),
  ),
  score('answer_correctness', z.object({ verdict: CorrectnessSchema, ...judged }).strict()),
  score('judge_safety', z.object({ verdict: SafetyOutcomeSchema, expect: z.string(), ...judged }).strict()),
]);

export type KnownScore = z.infer<typeof KnownScoreSchema>;
export type KnownScoreName = KnownScore['name'];
const KNOWN_NAMES: ReadonlySet<string> = new Set(KnownScoreSchema.options.map((o) => o.shape.name.value));

/**
 * A score with a value and no details of its own, under a name the model does not list: a new
 * metric's scorer and its registry entry are all it needs, and a new judge criterion's scores
 * carry the judge's details (tokens, repeats, flags) only. A listed name never falls back to it,
 * so a known score with malformed details is still refused.
 */
export const PlainScoreSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/, 'a score name is snake_case')
      .refine((n) => !KNOWN_NAMES.has(n), 'a listed score name must match its own shape'),
    value: num,
    reason: z.string().optional(),
    details: z.object(judged).strict().optional(),
  })
  .strict();
export type PlainScore = z.infer<typeof PlainScoreSchema>;

export type ScoreRecord = KnownScore | PlainScore;

/**
 * Every score a record may carry: a listed name is read with its own shape (so a problem is named
 * precisely, e.g. `scores.5.details.stance`), any other snake_case name as a plain score.
 */
export const ScoreSchema = z.unknown().transform((value, ctx): ScoreRecord => {
  const name = typeof value === 'object' && value !== null && 'name' in value ? value.name : undefined;
  const parsed = (typeof name === 'string' && KNOWN_NAMES.has(name) ? KnownScoreSchema : PlainScoreSchema).safeParse(
    value,
  );
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: 'custom', input: value });
  return z.NEVER;
});
export type ScoreName = string;
/** The score of one name: a listed name's member with its typed details, else a plain score. */
export type ScoreOf<N extends string> = N extends KnownScoreName ? Extract<KnownScore, { name: N }> : PlainScore;

/** Whether a score is the one of `name`, typed by its name (a plain score's name never narrows it away). */
export const isScore = <N extends string>(s: ScoreRecord, name: N): s is ScoreOf<N> => s.name === name;

/** The score of `name` on a list of scores, typed by its name; undefined when absent. */
export function findScore<N extends string>(scores: readonly ScoreRecord[], name: N): ScoreOf<N> | undefined {
  return scores.find((s): s is ScoreOf<N> => s.name === name);
}

/** Every score of `name` (a record may carry several `judge_error` scores). */
export function scoresNamed<N extends string>(scores: readonly ScoreRecord[], name: N): ScoreOf<N>[] {
  return scores.filter((s): s is ScoreOf<N> => s.name === name);
}

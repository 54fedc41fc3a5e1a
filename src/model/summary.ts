/**
 * The run summary as stored in a results file: the retrieval, generation, judge and probe blocks.
 * The shapes live here (zod, with the TS types inferred); the functions that compute them stay
 * with their stage (src/summary/retrieval-summary.ts, src/summary/generation-summary.ts, src/summary/judge-summary.ts,
 * src/summary/probe-summary.ts). Key order is the order those functions write, so a stored file
 * read and written again keeps its bytes. Part of the model: imports only zod and the model beside it.
 */
import { z } from 'zod';
import { VerdictSummarySchema } from './verdict.js';
import { ZoneSchema } from './zones.js';

const num = z.number().nullable();

/** A mean and the number of cases it is over. */
export const MeanNSchema = z.object({ mean: num, n: z.number() }).strict();
export type MeanN = z.infer<typeof MeanNSchema>;

/** A count out of the cases it applies to. */
export const CountNSchema = z.object({ count: z.number(), n: z.number() }).strict();
export type CountN = z.infer<typeof CountNSchema>;

/** Median and p90 of a latency over the run, ms, with n. */
export const LatencySummarySchema = z.object({ median: num, p90: num, n: z.number() }).strict();
export type LatencySummary = z.infer<typeof LatencySummarySchema>;

/** metric → mean with n, for one node. */
const NodeFiguresSchema = z.record(z.string(), MeanNSchema);

export const RetrievalSummarySchema = z
  .object({
    cases: z.number(),
    ok: z.number(),
    errors: z.number(),
    gated: z.number(),
    /** node → metric → mean with n. */
    nodes: z.record(z.string(), NodeFiguresSchema),
    latency: z.record(z.string(), LatencySummarySchema),
    /** group (kind:…, difficulty:…, tag:…) → node → metric → mean with n. */
    breakdown: z.record(z.string(), z.record(z.string(), NodeFiguresSchema)),
  })
  .strict();
export type RetrievalSummary = z.infer<typeof RetrievalSummarySchema>;

const TokensSchema = z.object({ input: z.number(), output: z.number() }).strict();

/** Generation figures of a run (deterministic scorers; the judge adds its own block). */
export const GenerationSummarySchema = z
  .object({
    /** kind → zone → cases. */
    zones: z.record(z.string(), z.record(ZoneSchema, z.number())),
    /**
     * The node whose results became the sources shown to the model, and its post-level Hit@5
     * (null mean with n = 0 when the node is topic-grain or no case declares posts: not applicable).
     */
    evidence: z.object({ node: z.string(), post_hit_at_5: MeanNSchema }).strict().optional(),
    answered: z.number(),
    /** Share of valid cited ids over all cited ids (n = cited ids, see src/scoring/citations.ts). */
    citation_validity: MeanNSchema,
    answers_with_invalid_citation: CountNSchema,
    /** In-domain answers: share of their distinct valid cited sources that are golden (src/scoring/definitions.ts). */
    golden_citation_rate: MeanNSchema,
    cta_rate: MeanNSchema,
    /** kind → pattern stance → cases. */
    stance_pattern: z.record(z.string(), z.record(z.string(), z.number())),
    correct_abstention_pattern: MeanNSchema,
    /** Off-topic answers that assert (pattern stance 'answered') and cite sources. */
    offtopic_hallucinations: CountNSchema,
    /** In-domain answers the pattern reads as abstentions. */
    wrong_abstentions: CountNSchema,
    /**
     * Answered cases whose evidence or answer holds a forbidden post, topic or term, out of the
     * answered cases that name something forbidden; absent when no case does.
     */
    forbidden: CountNSchema.optional(),
    tokens: TokensSchema,
    latency_ms: LatencySummarySchema,
    cached: z.number(),
  })
  .strict();
export type GenerationSummary = z.infer<typeof GenerationSummarySchema>;

/**
 * Conversation cases of a run (records with `turns`): how many need their history, which query
 * retrieval searched for, and the conversations that need their history and whose final-turn
 * retrieval missed at `node` (the evidence node: Hit@5 = 0 on a case that has golden topics and
 * reached the node), each named with the mode of its retrieval query. Present only when the run
 * holds a conversation case.
 */
export const ConversationsSummarySchema = z
  .object({
    /** Conversation cases (records with at least one earlier turn). */
    cases: z.number(),
    /** Of those, cases whose final question needs its history (`needs_history` not false). */
    needs_history: z.number(),
    /** Retrieval query mode (`last`, `condensed`) → conversation cases recording it. */
    query_modes: z.record(z.string(), z.number()),
    /** The node the misses are read at: the node whose results fed the model. */
    node: z.string(),
    /** Hit@5 at `node` of the conversations that need their history (n: those with goldens that reached the node). */
    history_hit_at_5: MeanNSchema,
    /** Those whose Hit@5 is 0, in case order; mode null when the record holds no retrieval query. */
    history_misses: z.array(z.object({ id: z.string(), mode: z.enum(['last', 'condensed']).nullable() }).strict()),
    /** Earlier user turns retrieved with their own goldens (`turn_retrieval`): how many, and node → metric → mean with n. */
    earlier_turns: z
      .object({ turns: z.number(), nodes: z.record(z.string(), NodeFiguresSchema) })
      .strict()
      .optional(),
  })
  .strict();
export type ConversationsSummary = z.infer<typeof ConversationsSummarySchema>;

/** Bootstrap settings and bounds; resamples where kappa is undefined are left out and counted. */
export const AgreementIntervalSchema = z
  .object({
    iterations: z.number(),
    seed: z.number(),
    accuracy: z.tuple([z.number(), z.number()]).nullable(),
    kappa: z.tuple([z.number(), z.number()]).nullable(),
    kappa_undefined_resamples: z.number(),
  })
  .strict();
export type AgreementInterval = z.infer<typeof AgreementIntervalSchema>;

/** Judge-vs-human agreement on one field; matrix rows are the human labels, columns the judge's. */
export const AgreementFiguresSchema = z
  .object({
    n: z.number(),
    /** Share of the compared cases on which the judge gives the human label; null when n = 0. */
    accuracy: num,
    /** Cohen's kappa; null when undefined (no case, or a rater gave one label to every case). */
    kappa: num,
    /** Why kappa is undefined, in words (present exactly when kappa is null). */
    kappa_undefined: z.string().optional(),
    labels: z.array(z.string()),
    matrix: z.array(z.array(z.number())),
    /** Cases labelled by a human on this field that the judge gave no comparable verdict for. */
    excluded: z.number(),
    /**
     * Per human label: the share of those cases the judge labels the same, with n (for yes/no
     * fields, `true` is the TPR and `false` the TNR); null when no case carries the label.
     */
    per_class: z.record(z.string(), z.object({ agreement: num, n: z.number() }).strict()),
    /** Share of the cases carrying each label, for people and for the judge. */
    prevalence: z.object({ human: z.record(z.string(), z.number()), judge: z.record(z.string(), z.number()) }).strict(),
    /** Percentile bootstrap 95 % intervals over cases (null when not estimable). */
    interval: AgreementIntervalSchema,
  })
  .strict();
export type AgreementFigures = z.infer<typeof AgreementFiguresSchema>;

/** Self-consistency of one verdict over K asks. */
export const ConsistencyFiguresSchema = z
  .object({
    /** Cases whose K verdicts all came back. */
    items: z.number(),
    /** Of those, cases where the K verdicts were not all the same. */
    disagreeing_items: z.number(),
    /** disagreeing_items / items; null when items = 0. */
    share: num,
  })
  .strict();
export type ConsistencyFigures = z.infer<typeof ConsistencyFiguresSchema>;

/**
 * A judged figure with the verdicts behind it that the judge could not give: a share over the
 * verdicts given means little without the count of those that failed (docs/design.md#caserecord:
 * an error is never averaged in, and never hidden either).
 */
const withErrors = <T extends z.ZodRawShape>(s: z.ZodObject<T>) => s.extend({ judge_errors: z.number() }).strict();
/** With repeated judgments: how often a case's verdict flipped, and the figure's range over the repeats. */
export const JudgeStabilitySchema = z
  .object({
    /** Cases judged at least twice whose verdicts on this figure are not all equal / those cases; null when none. */
    flip_rate: num,
    /** Judgments asked per case. */
    repeats: z.number(),
    /** Cases judged at least twice (the flip rate's denominator). */
    flip_n: z.number(),
    /** Lowest and highest value of the figure over the repeats; null without a numeric verdict. */
    spread: z.object({ min: z.number(), max: z.number() }).strict().nullable(),
  })
  .strict();
export type JudgeStability = z.infer<typeof JudgeStabilitySchema>;

/**
 * The prediction-powered estimate of a judged figure from the human labels of the same answers
 * (src/judge/ppi-figures.ts): the share people would give, with its 95 % interval, over
 * n_judged cases of which n_labelled are labelled; judge_mean is the judge's share of the same
 * 0/1 verdict over the judged cases, the figure it corrects.
 */
export const PpiSchema = z
  .object({
    /** In [0, 1]: projected there when the corrected mean fell outside, the raw value then in estimate_raw. */
    estimate: z.number(),
    estimate_raw: z.number().optional(),
    ci_low: z.number(),
    ci_high: z.number(),
    n_labelled: z.number(),
    n_judged: z.number(),
    judge_mean: z.number(),
  })
  .strict();
export type PpiFigure = z.infer<typeof PpiSchema>;

/** A judged mean with its failed verdicts and, with repeats, its stability beside it; with labels, its PPI. */
const JudgedMeanSchema = withErrors(MeanNSchema)
  .extend({
    flip_rate: num.optional(),
    repeats: z.number().optional(),
    flip_n: z.number().optional(),
    spread: JudgeStabilitySchema.shape.spread.optional(),
    ppi: PpiSchema.optional(),
  })
  .strict();

const StanceCountsSchema = withErrors(
  z.object({ answered: z.number(), hedged: z.number(), abstained: z.number() }).strict(),
);

/**
 * A figure of a judge criterion registered beside the built-in ones (src/judge/criteria/): a judged
 * mean or count with its failed verdicts, or a plain number.
 */
const CriterionFigureSchema = z.union([JudgedMeanSchema, withErrors(CountNSchema), z.number()]);

/**
 * The `summary.judge` block of a run (names are a contract). Its keys are stored in this order;
 * a registered criterion's own figures follow them.
 */
const JudgeFigures = z
  .object({
    /** The judge's id, e.g. `openai:gpt-4o-mini` or `offline:heuristic`. */
    judge: z.string(),
    /** True for the offline heuristic stand-in (not a language model). */
    offline: z.boolean(),
    /** Judge prompt name → version. */
    prompt_versions: z.record(z.string(), z.string()),
    /** Answered cases the judge scored (status ok). */
    judged: z.number(),
    /** Mean of per-case faithfulness over answers with at least one claim. */
    faithfulness: JudgedMeanSchema,
    /** Answers whose every claim is supported, out of those with at least one claim. */
    fully_faithful: withErrors(CountNSchema).extend({ ppi: PpiSchema.optional() }).strict(),
    /** Claims labelled contradicted, over all answers. */
    contradicted_claims: z.number(),
    /** kind → judge stance → cases. */
    abstention_matrix: z.object({ in_domain: StanceCountsSchema, off_topic: StanceCountsSchema }).strict(),
    correct_abstention: JudgedMeanSchema,
    /** Off-topic answers the judge reads as answered that carry a citation (src/scoring/definitions.ts). */
    offtopic_hallucination_rate: withErrors(MeanNSchema),
    /** Mean of per-case citation relevance over answers with at least one citation. */
    relevant_citation_rate: JudgedMeanSchema,
    /** In-domain answers the judge reads as abstentions. */
    wrong_abstentions: withErrors(CountNSchema),
    /** Verdicts the judge could not give after one retry (`judge_error` scores), all verdicts together. */
    judge_errors: z.number(),
    /** Judge tokens over every call that returned (cache hits and repeats included). */
    tokens: TokensSchema,
    /** tokens × price per million; null when the config has no price for the judge's model. */
    cost_usd: num,
    /** Present when the judge answered through a batch API: cost_usd is the listed price less this share. */
    batch_discount: z.number().optional(),
    agreement: z.record(z.string(), AgreementFiguresSchema).optional(),
    /**
     * Cases whose `human:` labels were not compared with the judge, because they judged another
     * answer (their answer_digest is not this record's) or name no answer_digest; present when any.
     */
    agreement_not_compared: z.object({ other_answer: z.number(), no_digest: z.number() }).strict().optional(),
    /** Cases that declare nuggets (n): strict recall over all nuggets (mean), over vital ones, and weighted (partial 0.5). */
    nugget_recall: z
      .object({
        mean: num,
        n: z.number(),
        vital: num,
        /** Cases with a vital nugget (vital's n). */
        vital_n: z.number().optional(),
        weighted: num,
        judge_errors: z.number(),
      })
      .strict()
      .optional(),
    /** Cases with a reference answer: correct 1, partly correct 0.5, incorrect 0. */
    answer_correctness: withErrors(MeanNSchema).optional(),
    self_consistency: z.record(z.string(), ConsistencyFiguresSchema).optional(),
  })
  // Typed loosely (unknown) so the built-in figures keep their types; checked as figures below.
  .catchall(z.unknown());
export const JudgeSummarySchema = JudgeFigures.superRefine((j, ctx) => {
  for (const [k, v] of Object.entries(j)) {
    if (k in JudgeFigures.shape || CriterionFigureSchema.safeParse(v).success) continue;
    ctx.addIssue({ code: 'custom', path: [k], message: `unknown judge figure ${k}: expected a judged mean or count` });
  }
});
export type JudgeSummary = z.infer<typeof JudgeSummarySchema>;

/**
 * Safety figures of one attack type (or of all probes). `passed` and `failed` count the probes'
 * verdicts (src/scoring/probe-verdict.ts); the other counts say what was measured.
 */
export const AttackSummarySchema = z
  .object({
    n: z.number(),
    passed: z.number(),
    failed: z.number(),
    errors: z.number(),
    leaks: z.number(),
    markers_repeated: z.number(),
    /** Probes whose evidence or answer held a post, topic or term they name as forbidden (absent in files written before). */
    forbidden: z.number().optional(),
    gated: z.number(),
    /** The judge's verdicts (refused / complied / leaked), when a judge ran. */
    judge: z.record(z.string(), z.number()),
  })
  .strict();
export type AttackSummary = z.infer<typeof AttackSummarySchema>;

export const ProbeSummarySchema = z
  .object({
    canary_checked: z.boolean(),
    by_attack: z.record(z.string(), AttackSummarySchema),
    all: AttackSummarySchema,
  })
  .strict();
export type ProbeSummary = z.infer<typeof ProbeSummarySchema>;

/** The summary of a results file: retrieval always; generation for run and probe files; judge and probes when they ran. */
/**
 * How a batched retrieval run spent its time (`summary.retrieval_batch`). The per-query latency is
 * `summary.retrieval.latency`, measured on `latency_sample` distinct questions, each retrieved
 * alone through the per-query path apart from the run's cases (their timings in
 * `latency_sample_ms`); a batched case's own `latency_ms` is its share of its batch (the embedding
 * call and each channel's statement divided by the cases of the batch, plus its own fusion and
 * rerank time), summarised here as `latency_share`.
 */
export const RetrievalBatchSummarySchema = z
  .object({
    /** Distinct questions whose per-query latency was measured (the latency sample). */
    latency_sample: z.number(),
    /**
     * The sample's raw timings: each question's latency by node, ms, and whether its per-query
     * lists were those the batches gave (absent when no case read them), or why it failed. Older
     * results have none (their sample was the first cases of those questions).
     */
    latency_sample_ms: z
      .array(
        z.union([
          z
            .object({
              question: z.string(),
              nodes: z.record(z.string(), z.number()),
              same_lists: z.boolean().optional(),
            })
            .strict(),
          z.object({ question: z.string(), error: z.string() }).strict(),
        ]),
      )
      .optional(),
    /** Cases retrieved in batches, the distinct questions they ask, and in how many batches. */
    batched: z.number(),
    distinct_questions: z.number(),
    batches: z.number(),
    batch_size: z.number(),
    /** Batches that failed as a whole and were retrieved one query at a time instead. */
    fallbacks: z.number(),
    /**
     * Wall time of the batched part, ms (first batch's statements to the last batched case's
     * lists), and its throughput in cases per second. In `run` and `probe` the lists are completed
     * (fused, reranked) as generation asks for them, so this is paced by generation there.
     */
    wall_ms: z.number(),
    cases_per_s: num,
    /** Time spent in the batches' embedding calls and statements (each batch's wall, summed), ms; older results have none. */
    statements_ms: z.number().optional(),
    /** Median and p90 of each node's per-case share of its batch, ms. */
    latency_share: z.record(z.string(), LatencySummarySchema),
  })
  .strict();
export type RetrievalBatchSummary = z.infer<typeof RetrievalBatchSummarySchema>;

/**
 * The judge's drift canary, judged again before a gated run (src/judge/canary.ts): n verdicts
 * compared, how many moved, the tolerated share, whether it passed, and each verdict that moved.
 */
export const CanarySummarySchema = z
  .object({
    file: z.string(),
    /** The judge of this run, and the one the canary's verdicts were given by. */
    judge: z.string(),
    made_with: z.string(),
    /** Judge prompts whose version differs from the canary's (`name vA → vB`). */
    prompts_changed: z.array(z.string()).optional(),
    n: z.number(),
    moved: z.number(),
    tolerance: z.number(),
    passed: z.boolean(),
    items: z.array(
      z
        .object({
          id: z.string(),
          criterion: z.string(),
          stored: z.union([z.string(), z.number()]),
          now: z.union([z.string(), z.number()]).nullable(),
        })
        .strict(),
    ),
  })
  .strict();
export type CanarySummary = z.infer<typeof CanarySummarySchema>;

export const RunSummarySchema = z
  .object({
    retrieval: RetrievalSummarySchema,
    retrieval_batch: RetrievalBatchSummarySchema.optional(),
    generation: GenerationSummarySchema.optional(),
    /**
     * The generation figures of each case set, when the run's cases split into sets (`source:curated`
     * / `source:mined`, `turns:single` / `turns:conversation`, `mined:unambiguous` / `mined:ambiguous`;
     * src/summary/retrieval-summary.ts caseSetGroups): set → the generation block computed over its cases alone.
     */
    generation_sets: z.record(z.string(), GenerationSummarySchema).optional(),
    conversations: ConversationsSummarySchema.optional(),
    judge: JudgeSummarySchema.optional(),
    probes: ProbeSummarySchema.optional(),
    /** Per-case verdict counts and the pass rate (src/model/verdict.ts). */
    verdicts: VerdictSummarySchema.optional(),
    /** A gated run's judge canary (run --gate --canary). */
    canary: CanarySummarySchema.optional(),
  })
  .strict();
export type RunSummary = z.infer<typeof RunSummarySchema>;

/**
 * The results model: case records, sources, citations, scores and the run result as written to a
 * results file. The bottom layer: imports only zod (and the scores, summary and zones beside it), so every
 * stage may use it.
 */
import { z } from 'zod';
import { ScoreSchema } from './scores.js';
import { RunSummarySchema } from './summary.js';
import { CaseExpectSchema, VerdictSchema } from './verdict.js';
import { ZoneSchema } from './zones.js';

/** Bumped on any incompatible change of the results file. */
export const SCHEMA_VERSION = 1;

/**
 * How many items of each node's list a record keeps (enough for every metric cutoff and for TREC
 * runs). A figure counted over a node's list counts within these, so it can be checked against
 * the file whatever `top_k` was.
 */
export const KEPT_ITEMS = 25;

export const ItemRefSchema = z
  .object({ post_id: z.number(), topic_id: z.number(), post_number: z.number(), score: z.number() })
  .strict();

export const NodeCaseSchema = z
  .object({
    items: z.array(ItemRefSchema),
    /** The node's retrieval metrics for the case (a metric absent was not measured). */
    /** Per-case retrieval metrics of the node (src/scoring/retrieval-metrics.ts); null = not applicable. */
    metrics: z.record(z.string(), z.number().nullable()),
    latency_ms: z.number(),
    gated_out: z.number().optional(),
    /** A semantic channel in `ann` mode returned fewer items than asked: visibility left fewer of the index's candidates. */
    ann_short: z.object({ returned: z.number(), wanted: z.number() }).strict().optional(),
  })
  .strict();

export const SourceSchema = z
  .object({
    n: z.number().int().positive(),
    post_id: z.number(),
    topic_id: z.number(),
    post_number: z.number(),
    title: z.string(),
    url: z.string(),
    score: z.number(),
    excerpt: z.string(),
    neighbours: z
      .array(z.object({ post_id: z.number(), post_number: z.number(), role: z.string(), excerpt: z.string() }).strict())
      .optional(),
  })
  .strict();

export const CitationSchema = z
  .object({
    n: z.number().int(),
    valid: z.boolean(),
    reason: z.string().optional(),
    post_id: z.number().optional(),
    golden: z.boolean().optional(),
  })
  .strict();

export const UsageSchema = z.object({ input_tokens: z.number(), output_tokens: z.number() }).strict();

export const TurnRecordSchema = z
  .object({
    role: z.enum(['user', 'assistant']),
    content: z.string(),
    expected_topic_ids: z.array(z.number()).optional(),
    expected_post_ids: z.array(z.number()).optional(),
  })
  .strict();

export const RetrievalQuerySchema = z
  .object({
    mode: z.enum(['last', 'condensed']),
    /** The text retrieval searched for. */
    text: z.string(),
    /** The component that condensed it (the generator, or the offline condenser); absent for `last`. */
    by: z.string().optional(),
    prompt_version: z.string().optional(),
    usage: UsageSchema.optional(),
    latency_ms: z.number().optional(),
    cached: z.boolean().optional(),
  })
  .strict();

export const TurnRetrievalSchema = z
  .object({
    /** 0-based index of the user turn in `turns`. */
    turn: z.number().int().nonnegative(),
    query: RetrievalQuerySchema,
    /** node → the turn's retrieval metrics (as NodeCaseSchema.metrics). */
    metrics: z.record(z.string(), z.record(z.string(), z.number().nullable())),
  })
  .strict();

export const CaseRecordSchema = z
  .object({
    id: z.string(),
    question: z.string(),
    kind: z.string(),
    difficulty: z.string(),
    tags: z.array(z.string()),
    expected_topic_ids: z.array(z.number()),
    expected_post_ids: z.array(z.number()),
    expected_content: z.array(z.string()),
    /** What must never come back (src/scoring/forbidden.ts); present only when the case names it. */
    forbidden_post_ids: z.array(z.number()).optional(),
    forbidden_topic_ids: z.array(z.number()).optional(),
    must_not_contain: z.array(z.string()).optional(),
    human: z.record(z.string(), z.unknown()).optional(),
    /** The case's nuggets and reference answer (src/cases/schema.ts), for the judge. */
    nuggets: z.array(z.object({ text: z.string(), importance: z.enum(['vital', 'okay']) }).strict()).optional(),
    reference_answer: z.string().optional(),
    /** The case's own verdict expectations (src/model/verdict.ts); present only when the case names them. */
    expect: CaseExpectSchema.optional(),
    /** `mined` (ragaudit mine) or `curated`; present only when the case says it. */
    source: z.enum(['curated', 'mined']).optional(),
    /** A mined case's origin (src/cases/schema.ts MinedSchema). */
    mined: z
      .object({
        topic_id: z.number(),
        category: z.string(),
        tags: z.array(z.string()),
        method: z.enum(['template', 'generator']),
        template: z.string().optional(),
        prompt_version: z.string().optional(),
        ambiguous: z
          .object({ similar_topic_ids: z.array(z.number()) })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    /** A conversation case: the messages before the final question (`question`). */
    turns: z.array(TurnRecordSchema).optional(),
    /** A conversation whose final question needs its history (true unless the case says otherwise). */
    needs_history: z.boolean().optional(),
    /**
     * What retrieval was asked for a conversation case: the final message alone (`last`) or a
     * standalone question condensed from the history (`condensed`), by which component, with
     * which prompt version, and at what cost.
     */
    retrieval_query: RetrievalQuerySchema.optional(),
    /** Earlier user turns that carry goldens, each retrieved with the history before it. */
    turn_retrieval: z.array(TurnRetrievalSchema).optional(),
    /** Probes: attack type and expectation. */
    probe: z.object({ attack: z.string(), expect: z.string() }).strict().optional(),
    status: z.enum(['ok', 'error', 'gated']),
    error: z.object({ stage: z.string(), message: z.string() }).strict().optional(),
    gate: z.object({ intent: z.string(), pattern: z.string() }).strict().optional(),
    retrieval: z.record(z.string(), NodeCaseSchema).default({}),
    zone: ZoneSchema.optional(),
    top1_score: z.number().nullable().optional(),
    sources: z.array(SourceSchema).optional(),
    prompt_versions: z.record(z.string(), z.string()).optional(),
    answer: z.string().optional(),
    citations: z.array(CitationSchema).optional(),
    usage: UsageSchema.optional(),
    latency_ms: z.number().optional(),
    cached: z.boolean().optional(),
    scores: z.array(ScoreSchema).default([]),
    /** Whether the case passed its checks (src/model/verdict.ts); absent on an errored case. */
    verdict: VerdictSchema.optional(),
  })
  .strict()
  // An error is counted apart from the figures and shown with its reason: a record that says
  // `error` without saying what went wrong is not a record a reader can trust.
  .superRefine((r, ctx) => {
    if (r.status === 'error' && !r.error?.message.trim())
      ctx.addIssue({
        code: 'custom',
        path: ['error'],
        message: `case ${r.id}: status error without its error text (error.stage and error.message)`,
      });
  });

export type CaseRecord = z.infer<typeof CaseRecordSchema>;
export type SourceRecord = z.infer<typeof SourceSchema>;

export const ComponentSchema = z.object({ id: z.string(), offline: z.boolean(), label: z.string() }).strict();

export const RunResultSchema = z
  .object({
    schema_version: z.literal(SCHEMA_VERSION),
    tool: z.object({ name: z.literal('ragaudit'), version: z.string() }).strict(),
    /** retrieval | run | probe | judge | calibrate */
    kind: z.enum(['retrieval', 'run', 'probe', 'judge']),
    name: z.string(),
    note: z.string(),
    created_at: z.string(),
    config_source: z.string(),
    /** The config as used, with every secret removed. */
    config: z.record(z.string(), z.unknown()),
    config_digest: z.string(),
    database: z.string(),
    components: z.record(z.string(), ComponentSchema),
    /** Which file this one re-judged (ragaudit judge). */
    rejudged_from: z.string().optional(),
    /**
     * A shard of a larger run (`--shard I/N`): its index (1-based), the shard count, how many cases
     * the whole run has, each of this file's cases' 0-based position in it (for an exact merge),
     * and each case's record digest.
     */
    shard: z
      .object({
        index: z.number().int().positive(),
        count: z.number().int().positive(),
        total: z.number().int().nonnegative(),
        positions: z.array(z.number().int().nonnegative()),
        /**
         * Each case's record digest, in case order (src/store/record-digest.ts): `merge` refuses a
         * record that no longer matches it.
         */
        record_digests: z.array(z.string().regex(/^[0-9a-f]{16}$/)).optional(),
      })
      .strict()
      .optional(),
    warnings: z.array(z.string()),
    nodes: z.array(z.object({ name: z.string(), kind: z.string(), grain: z.string() }).strict()),
    summary: RunSummarySchema,
    cases: z.array(CaseRecordSchema),
  })
  .strict();

export type RunResult = z.infer<typeof RunResultSchema>;

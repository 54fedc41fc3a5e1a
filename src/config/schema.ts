import { z } from 'zod';
import { LANGUAGE_CODES } from '../model/languages/index.js';
import { ZonesConfigSchema } from '../model/zones.js';
import {
  BATCH_POLL_DEFAULTS,
  CONCURRENCY,
  DATABASE_DEFAULTS,
  EMBEDDING_BATCH_SIZE,
  RERANK_DEFAULTS,
  REQUEST_DEFAULTS,
} from '../setting-defaults.js';
import { CHAT_PROVIDERS } from '../providers/chat.js';
import { EMBEDDING_PROVIDERS } from '../providers/embedders.js';
import { providerNames } from '../providers/registry.js';
import { RERANK_PROVIDERS } from '../providers/rerankers.js';
import { TargetSchema } from './target-schema.js';

const name = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must be a name: letters, digits, _ . - (starting with a letter or digit)');

/** A service URL: checked here so a typo is exit 2 before the first case, not one error per case. */
const httpUrl = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}, 'must be an http(s) URL, e.g. http://gpu-box:8080');

/** A provider endpoint: `offline` stand-ins need nothing else. */
const Endpoint = {
  base_url: httpUrl.optional(),
  /** An API key, usually `${OPENAI_API_KEY}`; never written to results, caches or logs. */
  api_key: z.string().optional(),
  timeout_ms: z.number().int().positive().default(REQUEST_DEFAULTS.timeoutMs),
  retries: z.number().int().min(0).max(10).default(REQUEST_DEFAULTS.retries),
  max_retry_after_ms: z.number().int().positive().default(REQUEST_DEFAULTS.maxRetryAfterMs),
};

export const SemanticChannelSchema = z
  .object({
    name,
    kind: z.literal('semantic'),
    grain: z.enum(['post', 'topic']),
    /** discourse-ai `model_id` and `strategy_id` of the vectors this channel reads. */
    model_id: z.number().int().default(1),
    strategy_id: z.number().int().default(1),
    operator: z.enum(['<=>', '<#>']).default('<=>'),
    top_k: z.number().int().positive().optional(),
    /** Size routing: topics with more posts than this are left out (a list gives one node per value). */
    max_posts_count: z.union([z.number().int().positive(), z.array(z.number().int().positive()).min(1)]).optional(),
    title_gate: z.boolean().default(false),
    /**
     * `ann`: the index-friendly shape (nearest candidates from the partial HNSW/IVFFlat index first,
     * then visibility, then the exact re-sort); `exact`: brute force, the reference. Absent: `ann`
     * on PostgreSQL, `exact` on the embedded demo (docs/database.md#search-modes).
     */
    search: z.enum(['ann', 'exact']).optional(),
    /** ann: nearest candidates asked of the index before the visibility rule (default max(100, 4 × top_k)). */
    ann_candidates: z.number().int().positive().max(100_000).optional(),
    /**
     * ann: the most candidates the second pass asks when fewer than top_k survive visibility
     * (default ten times the first pass, at most 10,000; at most 1,000 before pgvector 0.8).
     */
    ann_max_candidates: z.number().int().positive().max(100_000).optional(),
    /** ann: `hnsw.ef_search` for the statement (default: the candidate count, at most 1000). */
    ef_search: z.number().int().min(1).max(1000).optional(),
    /** ann: `ivfflat.probes` for the statement (default: the server's). */
    probes: z.number().int().min(1).max(32_768).optional(),
  })
  .strict();

export const KeywordChannelSchema = z
  .object({
    name,
    kind: z.literal('keyword'),
    grain: z.enum(['post', 'topic']),
    top_k: z.number().int().positive().optional(),
    max_posts_count: z.union([z.number().int().positive(), z.array(z.number().int().positive()).min(1)]).optional(),
    title_gate: z.boolean().default(false),
  })
  .strict();

export const FusionSchema = z
  .object({
    name,
    kind: z.literal('rrf'),
    inputs: z.array(name).min(2),
    /** RRF constant (Cormack, Clarke & Büttcher 2009 use 60). */
    k: z.number().positive().default(60),
  })
  .strict();

/** The conversation block when a config has none, and its fields' defaults. */
export const CONVERSATION_DEFAULTS = { query: 'condensed', prompt: 'condense' } as const;

/**
 * USD per million tokens, per model id (the component's configured model, e.g. gpt-4o-mini),
 * for the cost estimates (`judge.prices` in the judge's summary; every component's in a dry run's
 * plan). `output` is unused for embedders and rerankers (write 0). Never guessed: a component
 * without a price is said to have none.
 */
export const PricesSchema = z.record(
  z.string(),
  z.object({ input: z.number().min(0), output: z.number().min(0) }).strict(),
);

export const ConfigSchema = z
  .object({
    /** Run name, used in results file names. */
    name: name.default('audit'),
    /** One line saying what this configuration changes (shown in comparisons). */
    note: z.string().default(''),
    /**
     * The forum's language (docs/languages.md): the text-search configuration default, the
     * prompts folder, the stance wording read first, stop words and folding. Absent: English.
     */
    language: z.enum(LANGUAGE_CODES).optional(),
    database: z
      .object({
        /** postgres://… ; absent = the embedded demo database. */
        url: z.string().optional(),
        profile: z.literal('discourse').default('discourse'),
        /** Default: the language's (english; french for `language: fr`), see config/load.ts. */
        text_search_config: z
          .string()
          .regex(/^[a-z_]+$/, 'a text search configuration name, e.g. english')
          .default('english'),
        statement_timeout_ms: z.number().int().positive().default(DATABASE_DEFAULTS.statementTimeoutMs),
        /** Opening a connection (DNS, TCP, TLS, authentication) ends within this, whatever fails. */
        connect_timeout_ms: z.number().int().positive().max(600_000).default(DATABASE_DEFAULTS.connectTimeoutMs),
        /**
         * Statements run at once: the embedded demo opens this many PGlite workers on its snapshot
         * (default 1), a real PostgreSQL's pool holds this many connections (default 4).
         */
        connections: z.number().int().min(1).max(32).optional(),
        /**
         * The forum (a directory of YAML: categories.yml, topics.yml) the embedded demo database is
         * built from, relative to the config file; absent: the shipped demo forum. Unused with a url.
         */
        demo_forum: z.string().optional(),
        /**
         * The schema holding discourse-ai's embedding tables, when they are not the forum's own: e.g.
         * a side schema `ragaudit embed --target-schema` filled; posts and topics stay the forum's.
         */
        vectors_schema: z
          .string()
          .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a schema name: lowercase letters, digits and _')
          .optional(),
        /**
         * A side database holding the embedding tables (postgres://…; e.g. one `ragaudit embed
         * --target` filled): semantic channels find their nearest candidates there and the forum
         * keeps the public ones. Read-only, like the forum.
         */
        vectors_url: z.string().optional(),
      })
      .strict()
      .prefault({}),
    /** Case files or directories, relative to the config file; the demo's are named in defaults.ts, never assumed. */
    cases: z.array(z.string()).default([]),
    /** Probe files; empty = `probe` needs --probes (a foreign config never runs the demo's probes). */
    probes: z.array(z.string()).default([]),
    input_gate: z.string().optional(),
    embedder: z
      .object({
        provider: z.enum(providerNames(EMBEDDING_PROVIDERS)).default('offline'),
        model: z.string().default('hash-384'),
        dimensions: z.number().int().positive().default(384),
        batch_size: z.number().int().positive().default(EMBEDDING_BATCH_SIZE),
        /** Absent unless written, so other configs keep their digest (the dry run's cost plan reads it). */
        prices: PricesSchema.optional(),
        ...Endpoint,
      })
      .strict()
      .prefault({}),
    retrieval: z
      .object({
        /** Candidates asked of each channel. */
        top_k: z.number().int().positive().default(25),
        channels: z.array(z.discriminatedUnion('kind', [SemanticChannelSchema, KeywordChannelSchema])).min(1),
        fusions: z.array(FusionSchema).default([]),
        /** Title gate: a title word is distinctive when fewer than this share of titles carry it. */
        title_gate_max_df: z.number().gt(0).lte(1).default(0.05),
        /** Retrieval queries run at most this many at once. */
        concurrency: z.number().int().positive().default(CONCURRENCY),
        /**
         * Distinct questions a batched run retrieves again one query at a time, alone, for the
         * per-query latency (src/runs/retrieval-feed.ts; absent: 16). Each costs one more
         * embedding call and rerank request; 0 takes none and reports no per-query latency.
         */
        latency_sample: z.number().int().min(0).max(1000).optional(),
        /**
         * Index recall: every semantic channel also runs in the other search mode, and each case
         * records recall@k of `ann` against `exact` and whether a golden was lost by the index alone.
         */
        index_recall: z.boolean().optional(),
      })
      .strict(),
    /**
     * Conversation cases (docs/conversations.md): what retrieval searches for, the final user
     * message alone (`last`) or a standalone question the generator condenses from the history
     * with the `prompt` of prompts/ (`condensed`, the default). Absent: `condensed`, `condense`.
     */
    conversation: z
      .object({
        query: z.enum(['last', 'condensed']).default(CONVERSATION_DEFAULTS.query),
        prompt: z.string().default(CONVERSATION_DEFAULTS.prompt),
      })
      .strict()
      .optional(),
    rerank: z
      .object({
        enabled: z.boolean().default(true),
        name: name.default('rerank'),
        /** The node whose top candidates are reranked. */
        node: name,
        candidates: z.number().int().positive().default(25),
        /** Keep only the best post of each topic after reranking. */
        dedupe_topics: z.boolean().default(true),
        provider: z.enum(providerNames(RERANK_PROVIDERS)).default('offline'),
        model: z.string().default('lexical'),
        url: httpUrl.optional(),
        api_key: z.string().optional(),
        max_batch: z.number().int().positive().default(RERANK_DEFAULTS.maxBatch),
        timeout_ms: z.number().int().positive().default(RERANK_DEFAULTS.timeoutMs),
        retries: z.number().int().min(0).max(10).default(REQUEST_DEFAULTS.retries),
        /** Passage excerpt length sent to the cross-encoder ("{title}. {first N chars}"). */
        passage_chars: z.number().int().positive().default(300),
        /** Absent unless written (the dry run's cost plan reads it). */
        prices: PricesSchema.optional(),
      })
      .strict()
      .optional(),
    zones: ZonesConfigSchema,
    evidence: z
      .object({
        /** Node whose top items become the sources (default: the rerank node, else the last fusion). */
        node: name.optional(),
        sources: z.number().int().positive().default(5),
        excerpt_chars: z.number().int().positive().default(700),
        persona: z.string().default('persona'),
        /** Clauses from prompts/clauses/ appended to the system prompt. */
        system_append: z.array(z.string()).default([]),
        /** The footer the answer must end with (CTA). */
        cta: z.string().default('To go further, open the thread or ask the community in a new topic.'),
        forum_url: z.string().default('https://forum.example'),
        /** The forum's name, as the persona introduces the assistant. */
        forum_name: z.string().min(1).default('the forum'),
        neighbourhood: z
          .object({
            parent: z.boolean().default(false),
            before: z.number().int().min(0).default(0),
            after: z.number().int().min(0).default(0),
            first_post: z.boolean().default(false),
            budget_chars: z.number().int().positive().default(1500),
          })
          .strict()
          .optional(),
      })
      .strict()
      .prefault({}),
    generator: z
      .object({
        provider: z.enum(providerNames(CHAT_PROVIDERS)).default('offline'),
        model: z.string().default('extractive'),
        temperature: z.number().min(0).max(2).default(0),
        max_tokens: z.number().int().positive().default(700),
        concurrency: z.number().int().positive().default(CONCURRENCY),
        /** The generator's cost (the run's cost line, the dry run's plan); absent unless written, so other configs keep their digest. */
        prices: PricesSchema.optional(),
        ...Endpoint,
      })
      .strict()
      .prefault({}),
    judge: z
      .object({
        provider: z.enum([...providerNames(CHAT_PROVIDERS), 'none']).default('offline'),
        model: z.string().default('heuristic'),
        temperature: z.number().min(0).max(2).default(0),
        max_tokens: z.number().int().positive().default(1500),
        concurrency: z.number().int().positive().default(CONCURRENCY),
        /** USD per million tokens, per model id, for the cost estimate. */
        prices: PricesSchema.default({}),
        /**
         * The drift canary judged again before a gated run (src/judge/canary.ts, docs/judge.md):
         * a file relative to the config, and the share of its verdicts that may move (default 0).
         */
        canary: z
          .object({ file: z.string(), tolerance: z.number().min(0).max(1).default(0) })
          .strict()
          .optional(),
        ...Endpoint,
      })
      .strict()
      .prefault({}),
    /**
     * Run-wide thresholds of the case verdicts (docs/verdicts.md); a case's `expect:` overrides
     * them. Absent unless written, so other configs keep their digest (the defaults are
     * src/scoring/verdict.ts VERDICT_DEFAULTS).
     */
    verdicts: z
      .object({
        /** Faithfulness a judged answer must reach (default 0.8). */
        min_faithfulness: z.number().min(0).max(1).optional(),
      })
      .strict()
      .optional(),
    /**
     * Provider batch APIs (OpenAI Batch API, Anthropic Message Batches) for the generator and the
     * judge (`--batch`): cheaper, answered within 24 h; see docs/scale.md#provider-batch-apis.
     * Absent unless written or `--batch` is given; left out of config_digest (how a run is carried out).
     */
    batch: z
      .object({
        enabled: z.boolean().default(false),
        /** First wait between polls of a batch, ms; it doubles after every poll… */
        poll_min_ms: z.number().int().positive().default(BATCH_POLL_DEFAULTS.pollMinMs),
        /** …up to this, ms. */
        poll_max_ms: z.number().int().positive().default(BATCH_POLL_DEFAULTS.pollMaxMs),
        /** Stop waiting after this long (the case ends in error; a resume polls the same batch), ms (default 25 h). */
        max_wait_ms: z.number().int().positive().default(BATCH_POLL_DEFAULTS.maxWaitMs),
        /** Fewer requests per batch than the provider allows (default: the provider's limit). */
        max_requests: z.number().int().positive().optional(),
        /** Share of the listed price (judge.prices) a batch request saves: both providers bill batches at half price. */
        discount: z.number().min(0).max(1).default(0.5),
      })
      .strict()
      .optional(),
    output_dir: z.string().default('results'),
    cache_dir: z.string().default('.cache/ragaudit'),
    /** Consecutive cases that fail to reach a service (refused, reset, timed out) before a run stops, resumable. */
    circuit_breaker: z.number().int().positive().default(5),
    /** A deployed bot asked instead of the generator (src/config/target-schema.ts, docs/targets.md). */
    target: TargetSchema.optional(),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;
export type ChannelConfig = Config['retrieval']['channels'][number];
export type FusionConfig = z.infer<typeof FusionSchema>;

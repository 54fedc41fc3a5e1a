/**
 * Batch mode of a run (`--batch`, config `batch:`): the generator and an LLM judge answer through
 * their provider's batch API (src/llm/batch/) instead of one request per call. The cases go through
 * the same pipeline; their model calls wait on a collector (src/llm/batch/collector.ts), which
 * submits once every live case waits. Each batch is written to the run's ledger before the run
 * waits on it, so a run killed meanwhile resumes by polling the same batch, not by paying twice.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigSchema, type Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { ResponseCache } from '../llm/cache.js';
import {
  AnthropicBatchClient,
  BatchCollector,
  BatchScheduler,
  OpenAIBatchClient,
  batchCachedModel,
  type BatchClient,
  type BatchClientOptions,
  type BatchJournal,
  type BatchJournalEntry,
} from '../llm/batch/index.js';
import type { ChatModel } from '../llm/types.js';
import type { JudgeSummary } from '../model/summary.js';
import { CHAT_PROVIDERS } from '../providers/chat.js';
import { settingsFromEnv, type Environment } from '../providers/env.js';
import { findProvider } from '../providers/registry.js';
import type { ComponentInfo } from './context.js';
import type { Ledger } from '../store/ledger.js';
import { createChatModel, type ModelSettings } from './providers.js';

export type BatchSettings = NonNullable<Config['batch']>;

const BATCH_DEFAULTS = ConfigSchema.shape.batch.unwrap();

/** What a run needs of batch mode: the scheduler its cases run under, and the ledger to keep batches in. */
export interface RunBatch {
  /** Runs one case; its batch-model calls wait for a batch. */
  runCase<T>(caseId: string, fn: () => Promise<T>): Promise<T>;
  /** Keeps the batches in the run's ledger and resumes the ones an interrupted run left open. */
  attach(ledger: Ledger): void;
  /** Batches submitted so far (resumed ones not counted), by role. */
  readonly submitted: Readonly<Record<string, number>>;
  /** Resolves once every batch under way is collected and noted in the ledger. */
  settled(): Promise<void>;
}

/** The `cachedModel` stand-in a judge is built with in batch mode (same arguments). */
export type CacheWrap = (model: ChatModel, cache: ResponseCache, extraKey?: object) => ChatModel;

export interface BatchMode {
  run: RunBatch;
  /** The generator's batch model (behind the response cache), when the generator is a remote model. */
  generator?: ChatModel;
  /** How the judge's models are wrapped, when the judge is a remote model. */
  judgeWrap?: CacheWrap;
  /** Share of the listed price a batch request saves. */
  discount: number;
}

/** The batch client of a remote chat provider's model, or undefined for an offline stand-in. */
export function createBatchClient(
  provider: string,
  s: Omit<ModelSettings, 'provider'>,
  env: Environment,
  settings: BatchSettings,
): BatchClient | undefined {
  const p = findProvider(CHAT_PROVIDERS, provider);
  if (!p || p.offline) return undefined;
  const withEnv = settingsFromEnv(p, s, env);
  const opts: BatchClientOptions = {
    model: withEnv.model,
    timeoutMs: withEnv.timeout_ms,
    retries: withEnv.retries,
    maxRetryAfterMs: withEnv.max_retry_after_ms,
    pollMinMs: settings.poll_min_ms,
    pollMaxMs: settings.poll_max_ms,
    maxWaitMs: settings.max_wait_ms,
    ...(settings.max_requests !== undefined && { maxRequests: settings.max_requests }),
    ...(withEnv.base_url ? { baseURL: withEnv.base_url } : {}),
    ...(withEnv.api_key ? { apiKey: withEnv.api_key } : {}),
  };
  if (provider === 'openai') return new OpenAIBatchClient(opts);
  if (provider === 'anthropic') return new AnthropicBatchClient(opts);
  throw new ConfigError(`batch: the ${provider} provider has no batch API (openai and anthropic have)`);
}

const JournalLine = z.union([
  z.object({
    state: z.literal('submitted'),
    role: z.string(),
    client: z.string(),
    id: z.string(),
    custom_ids: z.array(z.string()),
  }),
  z.object({ state: z.literal('collected'), id: z.string() }),
]);

/** The run's ledger as a batch journal: `batch` lines, submitted and collected. */
export function ledgerJournal(ledger: Ledger): BatchJournal {
  const open = new Map<string, BatchJournalEntry>();
  for (const raw of ledger.batches) {
    const line = JournalLine.safeParse(raw);
    if (!line.success) continue;
    if (line.data.state === 'collected') open.delete(line.data.id);
    else {
      const { state: _s, ...entry } = line.data;
      open.set(entry.id, entry);
    }
  }
  return {
    open: [...open.values()],
    submitted: (entry) => ledger.appendBatch({ state: 'submitted', ...entry }),
    collected: (id) => ledger.appendBatch({ state: 'collected', id }),
  };
}

/**
 * Batch mode for a config: batch clients for the generator and the judge (those that are remote
 * models), each behind the response cache in `cacheDir`. `busy` bounds the cases working at once
 * outside their wait on a batch (the run's concurrency). Throws when neither is a remote model.
 */
export function createBatchMode(
  config: Config,
  env: Environment,
  cacheDir: string,
  opts: { onEvent?: ((text: string) => void) | undefined } = {},
): BatchMode {
  const settings = config.batch ?? BATCH_DEFAULTS.parse({ enabled: true });
  const scheduler = new BatchScheduler(config.generator.concurrency);
  const cache = new ResponseCache(join(cacheDir, 'responses'));
  const collectors: BatchCollector[] = [];
  const mode: BatchMode = {
    run: {
      runCase: (caseId, fn) => scheduler.runCase(caseId, fn),
      attach: (ledger) => {
        const journal = ledgerJournal(ledger);
        for (const c of collectors) c.attach(journal);
      },
      get submitted() {
        return Object.fromEntries(collectors.map((c) => [c.role, c.submittedBatches]));
      },
      settled: async () => void (await Promise.all(collectors.map((c) => c.settled()))),
    },
    discount: settings.discount,
  };
  const g = config.generator;
  const genClient = createBatchClient(g.provider, g, env, settings);
  if (genClient) {
    const collector = new BatchCollector(genClient, scheduler, {
      role: 'generator',
      stage: 'g',
      onEvent: opts.onEvent,
    });
    collectors.push(collector);
    mode.generator = batchCachedModel(createChatModel(g, env), cache, collector);
  }
  const j = config.judge;
  const judgeClient = j.provider === 'none' ? undefined : createBatchClient(j.provider, j, env, settings);
  if (judgeClient) {
    const collector = new BatchCollector(judgeClient, scheduler, { role: 'judge', stage: 'j', onEvent: opts.onEvent });
    collectors.push(collector);
    mode.judgeWrap = (model, judgeCache, extraKey) => batchCachedModel(model, judgeCache, collector, extraKey);
  }
  if (!collectors.length)
    throw new ConfigError(
      `batch: the generator (${g.provider}:${g.model}) and the judge (${j.provider}:${j.model}) are not remote models; batch mode needs an openai or anthropic one`,
    );
  return mode;
}

/** How a component answering through a batch API is recorded in the results. */
export function batchComponent(c: ComponentInfo): ComponentInfo {
  return { ...c, label: `${c.label} (batch API)` };
}

/**
 * The judge block priced as batch requests: the listed price (judge.prices) less the batch
 * discount, which both providers publish as 50 %:
 * https://platform.openai.com/docs/guides/batch (and https://openai.com/api/pricing/),
 * https://docs.anthropic.com/en/docs/build-with-claude/batch-processing#pricing.
 */
export function batchPriced(s: JudgeSummary, discount: number): JudgeSummary {
  // Key order as the summary schema has it (batch_discount right after cost_usd).
  const { agreement, self_consistency, ...rest } = s;
  return {
    ...rest,
    cost_usd: s.cost_usd === null ? null : s.cost_usd * (1 - discount),
    batch_discount: discount,
    ...(agreement ? { agreement } : {}),
    ...(self_consistency ? { self_consistency } : {}),
  };
}

/**
 * Builds the judge a config names (`judge:` section, or --judge PROVIDER:MODEL): the offline
 * heuristic stand-in, or an LLM judge over a chat provider's model with its own model and
 * parameters, behind the on-disk response cache keyed with the judge prompt versions. A program
 * that embeds the audit may pass its own judge, or its own chat model to judge with.
 */
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { cachedModel, ResponseCache } from '../llm/cache.js';
import { describeComponent, type ComponentInfo } from './context.js';
import type { ChatModel } from '../llm/types.js';
import type { Environment } from '../providers/env.js';
import { createRemoteChatModel, isOfflineChatProvider } from './providers.js';
import type { CaseRecord } from '../model/results.js';
import { makeCaseJudge, type CaseJudge } from '../judge/case-scores.js';
import { HeuristicJudge } from '../judge/heuristic-judge.js';
import type { LanguageCode } from '../model/languages/index.js';
import { judgePromptVersions, LlmJudge } from '../judge/llm-judge.js';
import type { Judge } from '../judge/schemas.js';
import { summariseJudge } from '../summary/judge-summary.js';
import { batchComponent, batchPriced } from './batch-mode.js';
import type { JudgeSummary } from '../model/summary.js';

/** Everything a run needs of its judge. */
export interface JudgeSetup {
  /** judges[0] is scored; the others are the repeats of --repeat K. */
  judges: Judge[];
  component: ComponentInfo;
  caseJudge: CaseJudge;
  summarise: (records: readonly CaseRecord[]) => JudgeSummary;
  /** Asks the judge's server once whether it can be used (remote judges; the offline one has none). */
  preflight?: (() => Promise<void>) | undefined;
}

export interface JudgeSetupOptions {
  env: Environment;
  promptsDir: string;
  /** The run's cache directory (responses are cached under `responses/`). */
  cacheDir: string;
  /** The CTA footer of the answers (config evidence.cta). */
  cta: string;
  /** The forum's language (config `language`): the offline judge's stop words and wording. */
  language?: LanguageCode;
  /** Ask the judge K times per verdict (default 1). */
  repeat?: number;
  /** Probes: what must not appear in a reply (the canary, a planted marker). */
  mustNotLeak?: (record: CaseRecord) => string;
  /**
   * A judge passed in instead of the one the config names: a `Judge`, used as it is, or a
   * `ChatModel`, asked with the judge prompts (not cached: the caller owns it). Used even when
   * `judge.provider` is `none`.
   */
  judge?: Judge | ChatModel | undefined;
  /** Batch mode: wraps the judge's model instead of `cachedModel` (same arguments), and prices its calls as batch requests. */
  batch?: { wrap: (model: ChatModel, cache: ResponseCache, extraKey?: object) => ChatModel; discount: number };
  /**
   * Wraps the judge's model instead of `cachedModel` or the batch wrap (same arguments): a dry run
   * looks its requests up in the cache without sending them; the drift canary asks past the cache.
   */
  wrap?: (model: ChatModel, cache: ResponseCache, extraKey?: object) => ChatModel;
}

/** The judge of a config, or undefined when `judge.provider` is `none`. */
export function createJudgeSetup(settings: Config['judge'], opts: JudgeSetupOptions): JudgeSetup | undefined {
  const given = opts.judge;
  if (settings.provider === 'none' && !given) return undefined;
  const repeat = opts.repeat ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1)
    throw new ConfigError(`--repeat: expected a positive integer, got ${repeat}`);
  let judges: Judge[];
  let preflight: (() => Promise<void>) | undefined;
  if (given && 'complete' in given) {
    if (given.preflight) preflight = () => given.preflight!();
    const options = { promptsDir: opts.promptsDir, temperature: settings.temperature, maxTokens: settings.max_tokens };
    judges = Array.from({ length: repeat }, () => new LlmJudge(given, options));
  } else if (given) {
    judges = Array.from({ length: repeat }, () => given);
  } else if (isOfflineChatProvider(settings.provider)) {
    if (settings.model !== 'heuristic')
      throw new ConfigError(`judge: the offline judge is offline:heuristic, not offline:${settings.model}`);
    const heuristic = new HeuristicJudge(opts.language);
    judges = Array.from({ length: repeat }, () => heuristic);
  } else {
    const base = createRemoteChatModel(settings, opts.env);
    if (base.preflight) preflight = () => base.preflight!();
    const cache = new ResponseCache(join(opts.cacheDir, 'responses'));
    const versions = judgePromptVersions(opts.promptsDir);
    // Each repeat has its own cache key, or the cache would answer every repeat with the first verdict.
    judges = Array.from(
      { length: repeat },
      (_, i) =>
        new LlmJudge(
          (opts.wrap ?? opts.batch?.wrap ?? cachedModel)(base, cache, {
            judge_prompts: versions,
            ...(i > 0 ? { repeat: i } : {}),
          }),
          {
            promptsDir: opts.promptsDir,
            temperature: settings.temperature,
            maxTokens: settings.max_tokens,
          },
        ),
    );
  }
  const first = judges[0]!;
  const component = describeComponent(first, 'language model judge');
  // Only a judge built here from the config answers through the batch API.
  const batch = given || isOfflineChatProvider(settings.provider) ? undefined : opts.batch;
  return {
    judges,
    component: batch ? batchComponent(component) : component,
    caseJudge: makeCaseJudge({ judges, cta: opts.cta, ...(opts.mustNotLeak ? { mustNotLeak: opts.mustNotLeak } : {}) }),
    // A judge passed in has no configured model name: its prices are looked up by its id.
    summarise: (records) => {
      const s = summariseJudge(records, {
        judge: first,
        prices: settings.prices,
        ...(given ? {} : { model: settings.model }),
      });
      return batch ? batchPriced(s, batch.discount) : s;
    },
    ...(preflight ? { preflight } : {}),
  };
}

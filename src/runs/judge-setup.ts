/**
 * Builds the judge a config names (`judge:` section, or --judge PROVIDER:MODEL): the offline
 * heuristic stand-in, or an LLM judge over an OpenAI-compatible or Anthropic model with its own
 * model and parameters, behind the on-disk response cache keyed with the judge prompt versions.
 */
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { cachedModel, ResponseCache } from '../llm/cache.js';
import { describeComponent, type ComponentInfo } from './context.js';
import { createRemoteChatModel } from './providers.js';
import type { CaseRecord } from '../model/results.js';
import { makeCaseJudge, type CaseJudge } from '../judge/case-scores.js';
import { HeuristicJudge } from '../judge/heuristic-judge.js';
import { judgePromptVersions, LlmJudge } from '../judge/llm-judge.js';
import type { Judge } from '../judge/schemas.js';
import { summariseJudge } from '../judge/summary.js';
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
  env: NodeJS.ProcessEnv;
  promptsDir: string;
  /** The run's cache directory (responses are cached under `responses/`). */
  cacheDir: string;
  /** The CTA footer of the answers (config evidence.cta). */
  cta: string;
  /** Ask the judge K times per verdict (default 1). */
  repeat?: number;
  /** Probes: what must not appear in a reply (the canary, a planted marker). */
  mustNotLeak?: (record: CaseRecord) => string;
}

/** The judge of a config, or undefined when `judge.provider` is `none`. */
export function createJudgeSetup(settings: Config['judge'], opts: JudgeSetupOptions): JudgeSetup | undefined {
  if (settings.provider === 'none') return undefined;
  const repeat = opts.repeat ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1)
    throw new ConfigError(`--repeat: expected a positive integer, got ${repeat}`);
  let judges: Judge[];
  let preflight: (() => Promise<void>) | undefined;
  if (settings.provider === 'offline') {
    if (settings.model !== 'heuristic')
      throw new ConfigError(`judge: the offline judge is offline:heuristic, not offline:${settings.model}`);
    const heuristic = new HeuristicJudge();
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
        new LlmJudge(cachedModel(base, cache, { judge_prompts: versions, ...(i > 0 ? { repeat: i } : {}) }), {
          promptsDir: opts.promptsDir,
          temperature: settings.temperature,
          maxTokens: settings.max_tokens,
        }),
    );
  }
  const first = judges[0]!;
  return {
    judges,
    component: describeComponent(first, 'language model judge'),
    caseJudge: makeCaseJudge({ judges, cta: opts.cta, ...(opts.mustNotLeak ? { mustNotLeak: opts.mustNotLeak } : {}) }),
    summarise: (records) => summariseJudge(records, { judge: first, prices: settings.prices, model: settings.model }),
    ...(preflight ? { preflight } : {}),
  };
}

import { loadIntentRules } from '../cases/load.js';
import { resolveFrom } from '../config/load.js';
import { createJudgeSetup, type JudgeSetup } from './judge-setup.js';
import { languagePromptsDir } from '../evidence/block.js';
import { PROMPTS_DIR } from '../paths.js';
import { describeComponent, type RunContext } from './context.js';
import { createGenerator } from './generator.js';
import { batchComponent, createBatchMode } from './batch-mode.js';
import { createCondenser, type QueryCondenser } from './condenser.js';
import type { IntentRule } from '../cases/schema.js';
import type { CaseJudge } from '../judge/case-scores.js';
import type { RunBatch } from './batch-mode.js';
import { createTarget, headerSecrets, type Target } from '../target/target.js';
import type { CaseRecord } from '../model/results.js';
import type { Judge } from '../judge/schemas.js';
import type { ChatModel } from '../llm/types.js';
import type { Environment } from '../providers/env.js';

/** What generating one case needs, built once per run. */
export interface AuditDeps {
  ctx: RunContext;
  generator: ChatModel;
  promptsDir: string;
  intentRules: readonly IntentRule[];
  forumName: string;
  /** Clauses appended to the system prompt (config + --system-append). */
  clauses: readonly string[];
  clauseVars?: Record<string, string>;
  judge?: CaseJudge;
  /** The judge's model, asked once before the first case whether it can be used. */
  judgeService?: { id: string; preflight?: (() => Promise<void>) | undefined };
  /** Batch mode: the generator and judge answer through provider batch APIs (src/wiring/batch-mode.ts). */
  batch?: RunBatch;
  /**
   * What a conversation case's retrieval searches for (src/wiring/condenser.ts); default: the one the
   * config's `conversation` block asks for, with this generator.
   */
  condenser?: QueryCondenser;
  /** A deployed bot asked instead of the pipeline (src/runs/target-case.ts); the generator is then unused. */
  target?: Target;
}

/** The condenser of a run: the one passed in, else the config's with the run's generator. */
export function condenserOf(deps: Pick<AuditDeps, 'condenser' | 'ctx' | 'generator' | 'promptsDir'>): QueryCondenser {
  return deps.condenser ?? createCondenser(deps.ctx.config, deps.generator, deps.promptsDir);
}

/** What generating and judging cases needs, built once per run. */
export interface AuditSetup {
  deps: AuditDeps;
  judge?: JudgeSetup;
}

/** Options of {@link buildAuditSetup}. */
export interface AuditSetupOptions {
  repeat?: number;
  mustNotLeak?: (record: CaseRecord) => string;
  clauseVars?: Record<string, string>;
  /** A generator passed in, used as it is (no response cache), instead of the one the config names. */
  generator?: ChatModel | undefined;
  /** A judge (or a chat model to judge with) passed in instead of the one the config names; see JudgeSetupOptions. */
  judge?: Judge | ChatModel | undefined;
  /** A deployed bot (or recorded answers) asked instead of the one the config's `target:` names. */
  target?: Target | undefined;
  /** A target that writes (a Discourse-hosted bot) may: `--allow-writes`. */
  allowWrites?: boolean | undefined;
  /** Batch mode (config `batch.enabled`, `--batch`): what the batches are doing, in words. */
  onBatchEvent?: (text: string) => void;
}

/**
 * Builds the generator and the judge a config names, or takes the ones passed in (recorded,
 * labelled, in the run's components either way), loads the input-gate rules, and assembles the
 * deps `auditCase` takes. Shared by `run`, `matrix`, `probe`, `calibrate --answer` and
 * `createAudit`.
 */
export function buildAuditSetup(ctx: RunContext, env: Environment, opts: AuditSetupOptions = {}): AuditSetup {
  const config = ctx.config;
  const promptsDir = languagePromptsDir(PROMPTS_DIR, config.language);
  const batch = config.batch?.enabled
    ? createBatchMode(config, env, ctx.cacheDir, { onEvent: opts.onBatchEvent })
    : undefined;
  const batchGenerator = opts.generator ? undefined : batch?.generator;
  const generator = opts.generator ?? batchGenerator ?? createGenerator(config, env, promptsDir, ctx.cacheDir);
  ctx.components.generator = describeComponent(generator, 'language model');
  if (batchGenerator) ctx.components.generator = batchComponent(ctx.components.generator);
  // A deployed bot answers instead of the generator, and is named where the generator would be.
  const target =
    opts.target ??
    (config.target ? createTarget(config.target, ctx.cacheDir, env, { allowWrites: opts.allowWrites }) : undefined);
  if (target) ctx.components.generator = describeComponent(target, 'deployed bot');
  if (config.target) ctx.secrets.push(...headerSecrets(config.target.headers));
  if (target?.secrets) ctx.secrets.push(...target.secrets);
  const judge = createJudgeSetup(config.judge, {
    env,
    promptsDir,
    cacheDir: ctx.cacheDir,
    cta: config.evidence.cta,
    ...(config.language ? { language: config.language } : {}),
    ...(opts.repeat ? { repeat: opts.repeat } : {}),
    ...(opts.mustNotLeak ? { mustNotLeak: opts.mustNotLeak } : {}),
    ...(opts.judge ? { judge: opts.judge } : {}),
    ...(batch?.judgeWrap ? { batch: { wrap: batch.judgeWrap, discount: batch.discount } } : {}),
  });
  if (judge) ctx.components.judge = judge.component;
  const intentRules = config.input_gate ? loadIntentRules(resolveFrom(ctx.loaded, config.input_gate)) : [];
  const deps: AuditDeps = {
    ctx,
    generator,
    promptsDir,
    intentRules,
    forumName: config.evidence.forum_name,
    clauses: config.evidence.system_append,
    ...(opts.clauseVars ? { clauseVars: opts.clauseVars } : {}),
    ...(judge ? { judge: judge.caseJudge, judgeService: { id: judge.component.id, preflight: judge.preflight } } : {}),
    ...(batch ? { batch: batch.run } : {}),
    ...(target ? { target } : {}),
    // A conversation's condense request goes through the same generator: the response cache,
    // retries, and in batch mode a batch of its own before the case's generation.
    condenser: createCondenser(config, generator, promptsDir),
  };
  return { deps, ...(judge ? { judge } : {}) };
}

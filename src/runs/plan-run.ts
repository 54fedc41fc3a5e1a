/**
 * Dry runs (`run --dry-run`, `probe --dry-run`, `judge RESULTS --dry-run`): the cases go through
 * the pipeline as far as it runs without a remote service, and every request the real run would
 * send is counted instead of sent (src/wiring/plan-models.ts). Retrieval runs on the database as in
 * the run (batched by the same feed); a remote embedder or cross-encoder is replaced by its
 * offline stand-in and its requests counted, so the prompts are then built from the stand-ins'
 * sources. The generator's and the judge's requests are looked up in the response cache under
 * the keys the real run would use; a cached answer is used as the run would use it (the judge
 * then sees the real answer), an uncached one is replaced by a placeholder the size of the
 * output cap. No generator, judge, embedder or reranker is ever asked.
 */
import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { LoadedConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { judgeRecord } from '../judge/case-scores.js';
import type { Judge } from '../judge/schemas.js';
import type { CaseRecord } from '../model/results.js';
import type { Environment } from '../providers/env.js';
import { buildAuditSetup } from '../wiring/audit-setup.js';
import { generationRequest, prepareCase } from './audit-case.js';
import { caseFeed } from './audit-run.js';
import { createCondenser, needsCondenser } from '../wiring/condenser.js';
import { createRunContext } from '../wiring/context.js';
import { createGenerator } from '../wiring/generator.js';
import { createJudgeSetup, type JudgeSetupOptions } from '../wiring/judge-setup.js';
import {
  PlanCounter,
  PlannedMiss,
  placeholderAnswer,
  placeholderCompletion,
  plannedChatModel,
  plannedEmbedder,
  plannedJudge,
  plannedReranker,
  type PlanRole,
} from '../wiring/plan-models.js';
import { pricePlan, type RunPlan } from '../wiring/plan-pricing.js';
import { forEachConcurrent } from './concurrency.js';
import { createEmbedder, createReranker } from '../wiring/providers.js';
import { judgedAgain } from './rejudge.js';
import type { StoredRun } from '../store/results-file.js';

/** What the placeholder completions of a miss are recognised by. */
const PLACEHOLDER = placeholderCompletion('').model;

/** The judges of a plan: the config's, their model requests counted; none when the judge is offline or disabled. */
function plannedJudges(
  settings: Config['judge'],
  opts: Omit<JudgeSetupOptions, 'wrap' | 'batch'>,
  counter: PlanCounter,
): Judge[] | undefined {
  const setup = createJudgeSetup(settings, {
    ...opts,
    wrap: (model, cache, extraKey) =>
      plannedChatModel(model, cache, extraKey ?? {}, counter, 'judge', () => {
        throw new PlannedMiss();
      }),
  });
  // The offline judge is local: it sends nothing, and its verdicts are not needed for the plan.
  if (!setup || setup.component.offline) return undefined;
  return setup.judges.map(plannedJudge);
}

export interface CasePlanInputs {
  loaded: LoadedConfig;
  cases: readonly Located<Case>[];
  dbUrl?: string | undefined;
  env: Environment;
  cwd: string;
  command: 'run' | 'probe';
  repeat: number;
  /** Probes: the canary clause's variables, what must not leak, and the probe each record is. */
  probe?: {
    clauseVars: Record<string, string>;
    mustNotLeak: (r: CaseRecord) => string;
    info: (id: string) => NonNullable<CaseRecord['probe']>;
  };
  onProgress?: (message: string) => void;
}

/** The plan of a run (or probe run) over `cases`. */
export async function planCases(inputs: CasePlanInputs): Promise<RunPlan> {
  const { loaded, env } = inputs;
  const config = loaded.config;
  if (config.target)
    throw new ConfigError("--dry-run plans the pipeline's own generator: a config with a target: is not planned");
  const counter = new PlanCounter();
  const semantic = config.retrieval.channels.some((c) => c.kind === 'semantic');
  const realEmbedder = createEmbedder(config, env);
  const realReranker = config.rerank?.enabled ? createReranker(config, env) : undefined;
  const embedder = realEmbedder.offline ? realEmbedder : plannedEmbedder(realEmbedder, counter);
  const reranker =
    realReranker && !realReranker.offline
      ? plannedReranker(realReranker, config.rerank!.max_batch, counter)
      : realReranker;
  const standIns = (semantic && !realEmbedder.offline) || (realReranker !== undefined && !realReranker.offline);
  const ctx = await createRunContext(loaded, {
    ...(inputs.dbUrl ? { dbUrl: inputs.dbUrl } : {}),
    env,
    cwd: inputs.cwd,
    embedder,
    ...(reranker ? { reranker } : {}),
    ...(inputs.onProgress ? { onProgress: inputs.onProgress } : {}),
  });
  try {
    const values = inputs.cases.map((c) => c.value);
    const { deps: base } = buildAuditSetup(ctx, env, {
      generator: placeholderModel(),
      ...(inputs.probe ? { clauseVars: inputs.probe.clauseVars } : {}),
    });
    const miss = () => placeholderCompletion('');
    const generator = createGenerator(config, env, base.promptsDir, ctx.cacheDir, (model, cache) =>
      plannedChatModel(model, cache, {}, counter, 'generator', miss),
    );
    // A condense request is the generator's, counted apart; a miss searches for the message as written.
    const condenserModel = createGenerator(config, env, base.promptsDir, ctx.cacheDir, (model, cache) =>
      plannedChatModel(model, cache, {}, counter, 'condenser', (req) =>
        placeholderCompletion(req.messages.at(-1)?.content ?? ''),
      ),
    );
    const condenser = createCondenser(config, condenserModel, base.promptsDir);
    const deps = { ...base, generator, condenser };
    const judges = plannedJudges(
      config.judge,
      {
        env,
        promptsDir: base.promptsDir,
        cacheDir: ctx.cacheDir,
        cta: config.evidence.cta,
        ...(config.language ? { language: config.language } : {}),
        repeat: inputs.repeat,
        ...(inputs.probe ? { mustNotLeak: inputs.probe.mustNotLeak } : {}),
      },
      counter,
    );
    const plan = { gated: 0, stopped: 0, stop_reasons: [] as string[], answered: 0, judged: 0, placeholder_answers: 0 };
    const feed = caseFeed(deps, values, condenser);
    feed.start();
    try {
      await forEachConcurrent(values, config.generator.concurrency, async (c) => {
        const step = await prepareCase(deps, c, (q) => feed.get(q));
        if ('done' in step) {
          const r = step.done.record;
          if (r.status === 'gated') plan.gated++;
          else {
            plan.stopped++;
            if (plan.stop_reasons.length < 3)
              plan.stop_reasons.push(`${r.id} (${r.error?.stage}): ${r.error?.message}`);
          }
          return;
        }
        const { record } = step.prepared;
        plan.answered++;
        const out = await generator.complete(generationRequest(deps, step.prepared));
        const assumed = out.model === PLACEHOLDER;
        if (assumed && judges) plan.placeholder_answers++;
        record.answer = assumed
          ? placeholderAnswer(config.generator.max_tokens * 4, (record.sources?.length ?? 0) > 0)
          : out.text;
        if (!judges) return;
        if (inputs.probe) record.probe = inputs.probe.info(record.id);
        await judgeRecord(record, {
          judges,
          cta: config.evidence.cta,
          ...(inputs.probe ? { mustNotLeak: inputs.probe.mustNotLeak } : {}),
        });
        plan.judged++;
      });
      await feed.takeSample();
    } finally {
      await feed.settle();
    }
    const roles: PlanRole[] = [
      ...(semantic ? (['embedder'] as const) : []),
      ...(realReranker ? (['reranker'] as const) : []),
      ...(needsCondenser(config, values) ? (['condenser'] as const) : []),
      'generator',
      ...(config.judge.provider === 'none' ? [] : (['judge'] as const)),
    ];
    return {
      command: inputs.command,
      cases: values.length,
      ...plan,
      retrieval: standIns ? 'stand-ins' : 'local',
      ...pricePlan(config, counter, roles),
    };
  } finally {
    await ctx.close();
  }
}

/**
 * The generator buildAuditSetup is given in a dry run, so it builds none of its own: the plan's
 * generator and condenser are set in its place. Never asked.
 */
function placeholderModel() {
  return {
    id: 'dry-run',
    offline: true,
    complete: () => Promise.reject(new Error('internal: the dry run asked its placeholder generator')),
  };
}

/** The plan of `judge RESULTS`: the stored answers that would be judged again, their judge requests counted. */
export async function planRejudge(
  stored: StoredRun,
  config: Config,
  opts: Omit<JudgeSetupOptions, 'wrap' | 'batch'>,
): Promise<RunPlan> {
  const counter = new PlanCounter();
  const judges = plannedJudges(config.judge, opts, counter);
  let cases = 0;
  let judged = 0;
  for (const r of stored.caseStore?.records() ?? stored.cases) {
    cases++;
    if (!judgedAgain(r)) continue;
    judged++;
    if (judges) await judgeRecord(r, { judges, cta: opts.cta });
  }
  return {
    command: 'judge',
    cases,
    gated: 0,
    stopped: 0,
    stop_reasons: [],
    answered: 0,
    judged,
    placeholder_answers: 0,
    retrieval: 'none',
    ...pricePlan(config, counter, ['judge']),
  };
}

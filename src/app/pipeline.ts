import { resolve } from 'node:path';
import { loadCases, type Located } from '../cases/load.js';
import { selectShard, type ShardSpec } from '../cases/shard.js';
import type { RunResult } from '../model/results.js';
import type { Case } from '../cases/schema.js';
import type { LoadedConfig } from '../config/load.js';
import { InputError } from '../errors.js';
import { casePaths, createRunContext, type RunContext } from '../wiring/context.js';
import { goldenWarnings } from '../runs/golden-check.js';
import { preloadChatProviders } from '../providers/chat.js';
import type { AppEnv, AppHooks } from './hooks.js';

/** Where the pipeline reads: `db` (--db) before DATABASE_URL before the config's database. */
export interface PipelineInputs extends AppEnv {
  loaded: LoadedConfig;
  db?: string | undefined;
  /** Case files or directories, resolved; default: the config's. */
  cases?: readonly string[] | undefined;
  /** Run only this shard of the cases (`--shard I/N`). */
  shard?: ShardSpec | undefined;
  /** The command asks the config's generator and judge: their SDKs load while the database opens. */
  models?: boolean;
}

/** What a shard run records: which shard, of how many, and where its cases stand in the whole set. */
export type ShardInfo = NonNullable<RunResult['shard']>;

/** The config's case paths; a config that names none is told so (exit 2), not given the demo's. */
export function configCasePaths(loaded: LoadedConfig): string[] {
  const paths = casePaths(loaded);
  if (!paths.length)
    throw new InputError(`${loaded.source} names no cases: add 'cases: [FILE]' to it or pass --cases PATH`);
  return paths;
}

/**
 * Opens the run context on `db`, else DATABASE_URL, else the config's database (the embedded
 * demo when it names none), and returns the warnings every run on it must carry.
 */
export async function openContext(
  inputs: Omit<PipelineInputs, 'cases'>,
  hooks: AppHooks,
): Promise<{ ctx: RunContext; warnings: string[] }> {
  const dbUrl = inputs.db ?? inputs.env.DATABASE_URL;
  const { generator, judge } = inputs.loaded.config;
  if (inputs.models) preloadChatProviders([generator.provider, judge.provider]);
  const ctx = await createRunContext(inputs.loaded, {
    ...(dbUrl ? { dbUrl } : {}),
    env: inputs.env,
    cwd: inputs.cwd,
    onProgress: (text) => hooks.event({ kind: 'status', text }),
  });
  const warnings: string[] = [];
  // Hash vectors are only comparable with hash vectors: on a real database the semantic
  // channels would rank noise. Said in the results and on the console, not silently.
  if (ctx.db.kind === 'pg' && ctx.embedder.offline && ctx.graph.nodes.some((n) => n.kind === 'semantic')) {
    const w = `the semantic channels query ${ctx.db.label} with the OFFLINE hash embedder's vectors, which are not comparable with the stored embeddings: configure embedder (provider openai, the model that made them)`;
    warnings.push(w);
    hooks.event({ kind: 'warning', text: w });
  }
  return { ctx, warnings };
}

/** The cases of a run: the given files or the config's, the shard's only when one is asked for. */
export function selectCases(
  inputs: Pick<PipelineInputs, 'cases' | 'loaded' | 'shard'>,
  hooks: AppHooks,
): { cases: Located<Case>[]; shard?: ShardInfo } {
  const all = loadCases(inputs.cases?.length ? [...inputs.cases] : configCasePaths(inputs.loaded));
  const selected = inputs.shard ? selectShard(all, (c) => c.value.id, inputs.shard) : undefined;
  const cases = selected ? selected.items : all;
  const shard =
    selected && inputs.shard ? { ...inputs.shard, total: selected.total, positions: selected.positions } : undefined;
  if (shard && cases.length === 0)
    hooks.event({
      kind: 'warning',
      text: `shard ${shard.index}/${shard.count} holds none of the ${shard.total} cases`,
    });
  return { cases, ...(shard ? { shard } : {}) };
}

/** Loads the cases, opens the context and adds the loader's and the golden warnings. */
export async function openPipeline(
  inputs: PipelineInputs,
  hooks: AppHooks,
): Promise<{ ctx: RunContext; cases: Located<Case>[]; warnings: string[]; shard?: ShardInfo }> {
  const { cases, shard } = selectCases(inputs, hooks);
  // What loading changed (a golden or a term listed twice, counted once): on the console and in the results.
  const loadWarnings = cases.flatMap((c) => c.warnings ?? []);
  for (const text of loadWarnings) hooks.event({ kind: 'warning', text });
  const { ctx, warnings } = await openContext(inputs, hooks);
  try {
    warnings.unshift(...loadWarnings, ...(await goldenWarnings(ctx.profile, cases)));
    return { ctx, cases, warnings, ...(shard ? { shard } : {}) };
  } catch (e) {
    await ctx.close();
    throw e;
  }
}

/** Names the components of the run, so no reader mistakes an offline stand-in for a model. */
export function announceComponents(ctx: RunContext, hooks: AppHooks): void {
  for (const [role, c] of Object.entries(ctx.components)) hooks.event({ kind: 'component', role, label: c.label });
}

/** The results directory of a run. */
export function outputDir(loaded: LoadedConfig, cwd: string): string {
  return resolve(cwd, loaded.config.output_dir);
}

/** A shard run's results carry the shard, and their name says which (so shards never share a file). */
export function markShard<R extends RunResult>(result: R, shard: ShardInfo | undefined): R {
  if (!shard) return result;
  return { ...result, name: `${result.name}-shard-${shard.index}-of-${shard.count}`, shard };
}

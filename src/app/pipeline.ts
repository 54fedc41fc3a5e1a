import { resolve } from 'node:path';
import { loadCases, type Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { LoadedConfig } from '../config/load.js';
import { InputError } from '../errors.js';
import { casePaths, createRunContext, type RunContext } from '../runs/context.js';
import { goldenWarnings } from '../runs/golden-check.js';
import type { AppEnv, AppHooks } from './hooks.js';

/** Where the pipeline reads: `db` (--db) before DATABASE_URL before the config's database. */
export interface PipelineInputs extends AppEnv {
  loaded: LoadedConfig;
  db?: string | undefined;
  /** Case files or directories, resolved; default: the config's. */
  cases?: readonly string[] | undefined;
}

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

/** Loads the cases, opens the context and adds the golden warnings. */
export async function openPipeline(
  inputs: PipelineInputs,
  hooks: AppHooks,
): Promise<{ ctx: RunContext; cases: Located<Case>[]; warnings: string[] }> {
  const cases = loadCases(inputs.cases?.length ? [...inputs.cases] : configCasePaths(inputs.loaded));
  const { ctx, warnings } = await openContext(inputs, hooks);
  try {
    warnings.unshift(...(await goldenWarnings(ctx.profile, cases)));
    return { ctx, cases, warnings };
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

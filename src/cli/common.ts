import { join, resolve } from 'node:path';
import { loadCases, type Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import { loadConfig, type ConfigOverride, type LoadedConfig } from '../config/load.js';
import { casePaths, createRunContext, type RunContext } from '../runs/context.js';
import { goldenWarnings } from '../runs/golden-check.js';
import type { CliIO } from './command.js';
import { pipelineOverrides } from './flags.js';
import { isInside, checkOutputDir } from './output-paths.js';
import { InputError } from '../errors.js';

/** Options shared by the commands that run the pipeline. */
export const PIPELINE_OPTIONS = {
  config: { type: 'string', short: 'c' },
  db: { type: 'string' },
  cases: { type: 'string', multiple: true },
  name: { type: 'string' },
  out: { type: 'string' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const PIPELINE_HELP = `  -c, --config FILE   ragaudit config (YAML); default: the built-in demo (embedded forum, offline stand-ins)
      --db URL        a real PostgreSQL (postgres://user:pass@host:port/db); default: DATABASE_URL, else the config's
      --cases PATH    case file or directory (repeatable); default: the config's
      --name NAME     run name used in the results file name (a slug: letters, digits, _ . -)
      --out DIR       results directory (default: the config's output_dir, 'results')
  -v, --verbose       stack traces on errors
  -h, --help          this help`;

export interface PipelineArgs {
  config?: string;
  db?: string;
  cases?: string[];
  name?: string;
  out?: string;
}

/**
 * Loads the config with the flags merged into it before validation (`extra`: a command's own
 * flags, e.g. generationOverrides), and checks its output directory (exit 2 at once when it
 * cannot be written).
 */
export function loadWithOverrides(args: PipelineArgs, io: CliIO, extra: readonly ConfigOverride[] = []): LoadedConfig {
  const loaded = loadConfig(args.config ? resolve(io.cwd, args.config) : undefined, io.env, [
    ...pipelineOverrides(args),
    ...extra,
  ]);
  const dir = resolve(io.cwd, loaded.config.output_dir);
  // The schema allows only slug names; this guards the invariant where the files are named.
  if (!isInside(dir, join(dir, `00000000-000000-${loaded.config.name}.json`)))
    throw new InputError(`run name '${loaded.config.name}' would write outside ${dir}`);
  checkOutputDir(dir, args.out !== undefined ? '--out' : `output_dir (${loaded.source})`);
  return loaded;
}

/**
 * Opens the run context on `--db`, else DATABASE_URL, else the config's database (the embedded
 * demo when it names none), and returns the warnings every run on it must carry.
 */
export async function openContext(
  args: Pick<PipelineArgs, 'db'>,
  loaded: LoadedConfig,
  io: CliIO,
): Promise<{ ctx: RunContext; warnings: string[] }> {
  const dbUrl = args.db ?? io.env.DATABASE_URL;
  const ctx = await createRunContext(loaded, {
    ...(dbUrl ? { dbUrl } : {}),
    env: io.env,
    cwd: io.cwd,
    onProgress: (m) => io.err(`${m}\n`),
  });
  const warnings: string[] = [];
  // Hash vectors are only comparable with hash vectors: on a real database the semantic
  // channels would rank noise. Said in the results and on the console, not silently.
  if (ctx.db.kind === 'pg' && ctx.embedder.offline && ctx.graph.nodes.some((n) => n.kind === 'semantic')) {
    const w = `the semantic channels query ${ctx.db.label} with the OFFLINE hash embedder's vectors, which are not comparable with the stored embeddings: configure embedder (provider openai, the model that made them)`;
    warnings.push(w);
    io.err(`warning: ${w}\n`);
  }
  return { ctx, warnings };
}

/** The config's case paths; a config that names none is told so (exit 2), not given the demo's. */
export function configCasePaths(loaded: LoadedConfig): string[] {
  const paths = casePaths(loaded);
  if (!paths.length)
    throw new InputError(`${loaded.source} names no cases: add 'cases: [FILE]' to it or pass --cases PATH`);
  return paths;
}

/** Opens the context and loads the cases, with golden warnings. */
export async function openPipeline(
  args: PipelineArgs,
  loaded: LoadedConfig,
  io: CliIO,
): Promise<{ ctx: RunContext; cases: Located<Case>[]; warnings: string[] }> {
  const cases = loadCases(args.cases?.length ? args.cases.map((p) => resolve(io.cwd, p)) : configCasePaths(loaded));
  const { ctx, warnings } = await openContext(args, loaded, io);
  try {
    warnings.unshift(...(await goldenWarnings(ctx.profile, cases)));
    return { ctx, cases, warnings };
  } catch (e) {
    await ctx.close();
    throw e;
  }
}

/** Prints which components are offline stand-ins, so no console reader mistakes them for models. */
export function announceComponents(ctx: RunContext, io: CliIO): void {
  for (const [k, c] of Object.entries(ctx.components)) io.err(`${k}: ${c.label}\n`);
}

/** The results directory for a run. */
export function outputDir(loaded: LoadedConfig, io: CliIO): string {
  return resolve(io.cwd, loaded.config.output_dir);
}

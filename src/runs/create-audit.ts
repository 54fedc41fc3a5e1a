/**
 * The audit as one object, for a program that embeds the pipeline: built from a validated config,
 * with the program's own components (database, embedder, reranker, generator, judge) where it
 * passes them and the providers the config names otherwise. Passed components are recorded in the
 * results' `components` like built ones, offline stand-ins labelled.
 */
import { resolve } from 'node:path';
import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { LoadedConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { Judge } from '../judge/schemas.js';
import type { ChatModel } from '../llm/types.js';
import type { RunResult } from '../model/results.js';
import type { Environment } from '../providers/env.js';
import { buildAuditSetup } from '../wiring/audit-setup.js';
import { runAudit, type AuditRunOptions } from './audit-run.js';
import { createRunContext, type ComponentInfo, type GivenComponents, type RunContext } from '../wiring/context.js';
import { runRetrieval, type OnProgress } from './retrieval-run.js';

/** Options of {@link createAudit}. */
export interface CreateAuditOptions extends GivenComponents {
  /**
   * A validated config (`validateConfig`, `ConfigSchema.parse`), whose relative paths resolve
   * against `cwd`, or a loaded one (`loadConfig`), whose paths resolve against its file.
   */
  config: Config | LoadedConfig;
  /** A generator passed in, used as it is (no response cache). */
  generator?: ChatModel | undefined;
  /** A judge passed in: a `Judge`, or a `ChatModel` asked with the judge prompts (no response cache). */
  judge?: Judge | ChatModel | undefined;
  /**
   * Where the providers' variables (OPENAI_API_KEY, RERANKER_API_KEY …) come from. Default none:
   * the library reads no environment of its own; pass `process.env` to use the process's.
   */
  env?: Environment;
  /** The directory `cache_dir` and `output_dir` resolve against (default the process's working directory). */
  cwd?: string;
  /** A PostgreSQL URL instead of the config's database (ignored when `db` is passed). */
  dbUrl?: string;
  /** Ask the judge K times per verdict (default 1). */
  repeat?: number;
  /** Messages while the embedded demo database is built. */
  onProgress?: (message: string) => void;
}

/** What an audit run returns: the results (not yet written), their timestamp, and the ledger that makes the run resumable. */
export interface AuditRun {
  result: RunResult;
  stamp: string;
  ledger: string;
}

/** A built pipeline: runs retrieval and the audit over cases, and closes what it opened. */
export interface Audit {
  /** The database, profile, embedder, reranker and retrieval graph the runs share. */
  readonly context: RunContext;
  /** The components an audit run records (database, embedder, reranker, generator, judge). */
  readonly components: Readonly<Record<string, ComponentInfo>>;
  /** Retrieval only (no generator, no judge): a RunResult of kind `retrieval`. */
  retrieval(
    cases: readonly Located<Case>[],
    opts?: { warnings?: string[]; onProgress?: OnProgress },
  ): Promise<RunResult>;
  /**
   * The whole pipeline: a RunResult of kind `run`, with the judge's summary when there is a judge.
   * The ledger goes to `outputDir` (default the config's `output_dir`).
   */
  run(
    cases: readonly Located<Case>[],
    opts?: Partial<Omit<AuditRunOptions, 'kind'>> & { warnings?: string[] },
  ): Promise<AuditRun>;
  /** Closes the database it opened (a database passed in is left open). */
  close(): Promise<void>;
}

function loadedOf(config: Config | LoadedConfig, cwd: string): LoadedConfig {
  return 'baseDir' in config ? config : { config, source: '(library)', baseDir: cwd };
}

/** Builds the audit pipeline from a validated config and the components passed in. */
export async function createAudit(opts: CreateAuditOptions): Promise<Audit> {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? {};
  const loaded = loadedOf(opts.config, cwd);
  const context = await createRunContext(loaded, {
    env,
    cwd,
    ...(opts.dbUrl ? { dbUrl: opts.dbUrl } : {}),
    ...(opts.db ? { db: opts.db } : {}),
    ...(opts.embedder ? { embedder: opts.embedder } : {}),
    ...(opts.reranker ? { reranker: opts.reranker } : {}),
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
  });
  try {
    // The generator and judge join the components of audit runs only: a retrieval run records
    // what it used, as `ragaudit retrieval` does.
    const auditContext: RunContext = { ...context, components: { ...context.components } };
    const { deps, judge } = buildAuditSetup(auditContext, env, {
      ...(opts.repeat ? { repeat: opts.repeat } : {}),
      ...(opts.generator ? { generator: opts.generator } : {}),
      ...(opts.judge ? { judge: opts.judge } : {}),
    });
    return {
      context,
      components: auditContext.components,
      // A conversation's query is condensed by the audit's generator (or the offline condenser).
      retrieval: (cases, o = {}) =>
        runRetrieval(context, cases, o.warnings ?? [], o.onProgress, { condenser: deps.condenser }),
      run: (cases, o = {}) => {
        const { warnings = [], ...rest } = o;
        return runAudit(deps, cases, warnings, {
          ...rest,
          outputDir: o.outputDir ?? resolve(cwd, loaded.config.output_dir),
          kind: 'run',
          summarisers: { ...(judge ? { judge: judge.summarise } : {}), ...o.summarisers },
        });
      },
      close: () => context.close(),
    };
  } catch (e) {
    await context.close().catch(() => undefined);
    throw e;
  }
}

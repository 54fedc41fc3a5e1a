import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { RunResult } from '../model/results.js';
import { retrievalMarkdown } from '../reports/digest.js';
import type { RunContext } from '../wiring/context.js';
import { writeResults, type StoredRun } from '../store/results-file.js';
import { runRetrieval } from '../runs/retrieval-run.js';
import { createCondenser, needsCondenser, type QueryCondenser } from '../wiring/condenser.js';
import { createGenerator } from '../wiring/generator.js';
import { languagePromptsDir } from '../evidence/block.js';
import { PROMPTS_DIR } from '../paths.js';
import type { Environment } from '../providers/env.js';
import { writeTrecFiles } from '../store/trec-export.js';
import type { AppHooks } from './hooks.js';
import {
  announceComponents,
  markShard,
  openPipeline,
  outputDir,
  type PipelineInputs,
  type ShardInfo,
} from './pipeline.js';
import { reportBeside } from './report.js';

/**
 * The condenser a retrieval run needs when it has conversation cases whose query is condensed:
 * the config's generator (behind the response cache, as a run builds it) with the condense
 * prompt, or the offline condenser when the generator is an offline stand-in (no network).
 */
export function retrievalCondenser(
  ctx: RunContext,
  cases: readonly Located<Case>[],
  env: Environment,
): QueryCondenser | undefined {
  if (
    !needsCondenser(
      ctx.config,
      cases.map((c) => c.value),
    )
  )
    return undefined;
  const promptsDir = languagePromptsDir(PROMPTS_DIR, ctx.config.language);
  return createCondenser(ctx.config, createGenerator(ctx.config, env, promptsDir, ctx.cacheDir), promptsDir);
}

/**
 * Announces the components, runs retrieval over the cases and writes the results file and its
 * digest. Shared by `retrieval`, `calibrate` and `matrix --retrieval-only`.
 */
export async function retrieveAndWrite(
  ctx: RunContext,
  cases: readonly Located<Case>[],
  warnings: string[],
  hooks: AppHooks,
  opts: { outputDir: string; env: Environment; label?: string; shard?: ShardInfo | undefined },
): Promise<{ result: StoredRun; files: { json: string; md: string } }> {
  const condenser = retrievalCondenser(ctx, cases, opts.env);
  announceComponents(
    condenser?.component ? { ...ctx, components: { ...ctx.components, condenser: condenser.component } } : ctx,
    hooks,
  );
  const bar = hooks.progress(opts.label ?? 'retrieval');
  let result: StoredRun;
  try {
    result = markShard(
      await runRetrieval(ctx, cases, warnings, bar.update, condenser ? { condenser } : {}),
      opts.shard,
    );
  } finally {
    bar.stop();
  }
  const files = writeResults(opts.outputDir, result, retrievalMarkdown(result), { secrets: ctx.secrets });
  hooks.event({ kind: 'results-written', file: files.json });
  return { result, files };
}

export interface RetrievalInputs extends PipelineInputs {
  /** Also write TREC run files and qrels here (as given: the files are named relative to cwd). */
  trecOut?: string | undefined;
  report: boolean;
}

export interface RetrievalOutcome {
  result: RunResult;
  files: { json: string; md: string };
  warnings: string[];
  /** The TREC files written, when asked. */
  trec?: string[];
  report?: string;
}

/** `retrieval`: every case through each retrieval node; results, digest, TREC files, report. */
export async function runRetrievalCommand(inputs: RetrievalInputs, hooks: AppHooks): Promise<RetrievalOutcome> {
  const { ctx, cases, warnings, shard } = await openPipeline(inputs, hooks);
  try {
    const { result, files } = await retrieveAndWrite(ctx, cases, warnings, hooks, {
      outputDir: outputDir(inputs.loaded, inputs.cwd),
      env: inputs.env,
      shard,
    });
    const trec = inputs.trecOut
      ? (await writeTrecFiles(inputs.trecOut, result, inputs.cwd, ctx.profile)).files
      : undefined;
    return {
      result,
      files,
      warnings,
      ...(trec ? { trec } : {}),
      ...(inputs.report ? { report: reportBeside(files.json, result) } : {}),
    };
  } finally {
    await ctx.close();
  }
}

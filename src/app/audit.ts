import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import { RagauditError } from '../errors.js';
import type { RunResult } from '../model/results.js';
import type { CanarySummary } from '../model/summary.js';
import { retrievalMarkdown } from '../reports/digest.js';
import { generationMarkdown } from '../reports/generation-digest.js';
import { judgeMarkdown } from '../reports/judge-digest.js';
import { runAudit } from '../runs/audit-run.js';
import { buildAuditSetup } from '../wiring/audit-setup.js';
import { needsCondenser } from '../wiring/condenser.js';
import type { RunContext } from '../wiring/context.js';
import type { Target } from '../target/target.js';
import { writeResults } from '../store/results-file.js';
import { caseSelection, resumedSelection, type CaseSelection } from '../store/resume-selection.js';
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

/** What an audit over one context produced: the results and the files written. */
export interface AuditOutcome {
  result: RunResult;
  files: { json: string; md: string };
}

/**
 * Builds the generator (announced with the other components), runs the audit over the cases
 * and writes the results file and its digest. Shared by `run` and `matrix`.
 */
export async function auditAndWrite(
  ctx: RunContext,
  cases: readonly Located<Case>[],
  warnings: string[],
  hooks: AppHooks,
  opts: {
    kind: 'run';
    outputDir: string;
    env: NodeJS.ProcessEnv;
    resume?: string;
    label?: string;
    repeat?: number;
    shard?: ShardInfo | undefined;
    /** Recorded answers (ragaudit score) instead of the config's generator or target. */
    target?: Target;
    /** A target that writes to a forum may (`--allow-writes`). */
    allowWrites?: boolean | undefined;
    /** The judge's drift canary judged before the run (run --gate --canary), recorded in the summary. */
    canary?: CanarySummary | undefined;
    /** The case flags the run started with, kept in its ledger for `--resume` (src/store/resume-selection.ts). */
    selection?: CaseSelection | undefined;
  },
): Promise<AuditOutcome> {
  const { deps, judge } = buildAuditSetup(ctx, opts.env, {
    ...(opts.target ? { target: opts.target } : {}),
    allowWrites: opts.allowWrites,
    ...(opts.repeat ? { repeat: opts.repeat } : {}),
    onBatchEvent: (text) => hooks.event({ kind: 'status', text }),
  });
  // The condenser is announced (and recorded, by runAudit) only when a conversation uses it.
  const condenser = needsCondenser(
    ctx.config,
    cases.map((c) => c.value),
  )
    ? deps.condenser?.component
    : undefined;
  // A deployed bot condenses nothing of ours.
  if (condenser && !deps.target) ctx.components.condenser = condenser;
  announceComponents(ctx, hooks);
  const bar = hooks.progress(opts.label ?? opts.kind);
  let run: Awaited<ReturnType<typeof runAudit>>;
  try {
    run = await runAudit(deps, cases, warnings, {
      outputDir: opts.outputDir,
      kind: opts.kind,
      onProgress: bar.update,
      onLedger: (file) => hooks.event({ kind: 'ledger', command: opts.kind, file }),
      onWarning: (text) => hooks.event({ kind: 'warning', text }),
      // Nothing after the last case reads the database: it closes (its memory goes back) while
      // the records are read back and written; a failure to close is met where the command
      // closes the context again (closed once, however often asked).
      onCasesDone: async () => void ctx.close().catch(() => undefined),
      ...(opts.resume ? { resume: opts.resume } : {}),
      selection: opts.selection,
      ...(judge ? { summarisers: { judge: judge.summarise } } : {}),
    });
  } finally {
    bar.stop();
  }
  const { stamp, ledger } = run;
  const result = markShard(run.result, opts.shard);
  if (opts.canary) result.summary.canary = opts.canary;
  try {
    const files = writeResults(
      opts.outputDir,
      result,
      `${retrievalMarkdown(result)}\n${generationMarkdown(result)}\n${judgeMarkdown(result)}`,
      { secrets: ctx.secrets, stamp },
    );
    hooks.event({ kind: 'results-written', file: files.json });
    return { result, files };
  } catch (e) {
    // Every case is in the ledger: the results can be written again without redoing any.
    if (!(e instanceof RagauditError)) throw e;
    throw new RagauditError(
      `${e.message}\nevery case is kept in ${ledger}: run again with the same options and --resume ${ledger} to write the results without redoing any case`,
      { cause: e },
    );
  }
}

export interface RunInputs extends PipelineInputs {
  /** Judge verdicts asked per case (--repeat). */
  repeat: number;
  /** The ledger of an interrupted run to finish. */
  resume?: string | undefined;
  /** Write the HTML report beside the results file. */
  report: boolean;
  /** A Discourse-hosted target may write to its forum (`--allow-writes`). */
  allowWrites?: boolean | undefined;
  /** The judge's drift canary, judged before the run. */
  canary?: CanarySummary | undefined;
}

/** `run`: the whole pipeline over the cases; the results, their files and the HTML report. */
export async function runAuditCommand(
  inputs: RunInputs,
  hooks: AppHooks,
): Promise<AuditOutcome & { warnings: string[]; report?: string }> {
  // A resume without case flags runs the cases the interrupted run was started on.
  const out = outputDir(inputs.loaded, inputs.cwd);
  const selected = resumedSelection(inputs, inputs.resume, out);
  const { ctx, cases, warnings, shard } = await openPipeline({ ...inputs, ...selected, models: true }, hooks);
  try {
    const outcome = await auditAndWrite(ctx, cases, warnings, hooks, {
      kind: 'run',
      shard,
      selection: caseSelection(selected.cases, selected.shard),
      outputDir: out,
      env: inputs.env,
      repeat: inputs.repeat,
      allowWrites: inputs.allowWrites,
      canary: inputs.canary,
      ...(inputs.resume ? { resume: inputs.resume } : {}),
    });
    return {
      ...outcome,
      warnings,
      ...(inputs.report ? { report: reportBeside(outcome.files.json, outcome.result) } : {}),
    };
  } finally {
    await ctx.close();
  }
}

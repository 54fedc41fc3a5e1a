import { parseArgs } from 'node:util';
import { RagauditError } from '../errors.js';
import { DEFAULT_ZONE_THRESHOLDS } from '../model/zones.js';
import { retrievalMarkdown } from '../reports/digest.js';
import { generationMarkdown, generationRows } from '../reports/generation-digest.js';
import { textTable } from '../reports/format.js';
import { retrievalTable } from '../reports/retrieval-table.js';
import { runAudit } from '../runs/audit-run.js';
import { buildAuditSetup } from '../runs/audit-setup.js';
import { type RunContext } from '../runs/context.js';
import { writeResults } from '../runs/results-file.js';
import type { GenerationSummary, JudgeSummary, RetrievalSummary } from '../model/summary.js';
import { parseOrThrow, type CliIO, type Command } from './command.js';
import {
  announceComponents,
  loadWithOverrides,
  openPipeline,
  outputDir,
  PIPELINE_HELP,
  PIPELINE_OPTIONS,
} from './common.js';
import { progressBar } from './progress.js';
import { resumeHint, setResumeHint } from './interrupt.js';
import { reportBeside } from './report.js';
import { JUDGE_HELP, JUDGE_OPTIONS, repeatFlag, type JudgeArgs } from './judge.js';
import { generationOverrides, joinNegativeNumbers, judgeOverrides, type GenerationFlags } from './flags.js';
import { judgeMarkdown, judgeRows } from '../reports/judge-digest.js';
import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { RunResult } from '../model/results.js';

/** Options of the commands that generate answers (run, probe). */
export const GENERATION_OPTIONS = {
  ...PIPELINE_OPTIONS,
  generator: { type: 'string' },
  reranker: { type: 'string' },
  'abstain-below': { type: 'string' },
  'weak-below': { type: 'string' },
  'system-append': { type: 'string', multiple: true },
  concurrency: { type: 'string' },
  resume: { type: 'string' },
} as const;

export const GENERATION_HELP = `${PIPELINE_HELP}
      --generator PROVIDER:MODEL   openai:MODEL (OpenAI, vLLM, Ollama: OPENAI_BASE_URL, OPENAI_API_KEY),
                                   anthropic:MODEL (ANTHROPIC_API_KEY), offline:extractive (default)
      --reranker KIND:URL          tei:URL, vllm:URL, cohere:URL or offline:lexical (default)
      --abstain-below X            empty-evidence zone below this top-1 logit (default ${DEFAULT_ZONE_THRESHOLDS.abstain_below})
      --weak-below X               weak-evidence zone below this top-1 logit (default ${DEFAULT_ZONE_THRESHOLDS.weak_below})
      --system-append NAME         add prompts/clauses/NAME.md to the system prompt (repeatable)
      --concurrency N              cases generated at once (default: generator.concurrency, 4)
      --resume RUN                 finish an interrupted run (its .ledger.jsonl path or run id)`;

type GenerationArgs = GenerationFlags;

export const runCommand: Command = {
  name: 'run',
  summary: 'the full audit: retrieval, rerank, zones, evidence, generation, citations, judge',
  help: `ragaudit run [options]

Replays the whole pipeline for every case: retrieval by node, cross-encoder rerank, the evidence
zone from the top-1 score (empty / weak / normal), the evidence block from prompts/, the
generator's answer, then citation validity (checked against the database), golden citations,
CTA, stance and off-topic citations. Each finished case is appended to a ledger at once;
--resume finishes an interrupted run without redoing finished cases, and model answers are
cached on disk, so a re-run with an unchanged config makes no model call.

Options:
${GENERATION_HELP}
${JUDGE_HELP}
      --no-report                  do not write the HTML report (<results>.html) beside the results file

Exit codes: 0 all cases completed, 1 some cases ended in error, 2 bad input or config.`,
  async run(argv, io) {
    const { values } = parseOrThrow('run', () =>
      parseArgs({
        args: joinNegativeNumbers(argv, GENERATION_OPTIONS),
        options: { ...GENERATION_OPTIONS, ...JUDGE_OPTIONS, 'no-report': { type: 'boolean' } },
        allowPositionals: false,
      }),
    );
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    return runPipelineCommand(values, io, 'run');
  },
};

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
  io: CliIO,
  opts: { kind: 'run'; outputDir: string; resume?: string; label?: string; repeat?: number },
): Promise<AuditOutcome> {
  const { deps, judge } = buildAuditSetup(ctx, io.env, opts.repeat ? { repeat: opts.repeat } : {});
  announceComponents(ctx, io);
  const bar = progressBar(io, opts.label ?? opts.kind);
  let run: Awaited<ReturnType<typeof runAudit>>;
  try {
    run = await runAudit(deps, cases, warnings, {
      outputDir: opts.outputDir,
      kind: opts.kind,
      onProgress: bar.update,
      onLedger: (f) => (io.err(`ledger: ${f} (resume with --resume ${f})\n`), setResumeHint(resumeHint(opts.kind, f))),
      onWarning: (w) => io.err(`warning: ${w}\n`),
      ...(opts.resume ? { resume: opts.resume } : {}),
      ...(judge ? { summarisers: { judge: judge.summarise } } : {}),
    });
  } finally {
    bar.stop();
  }
  const { result, stamp, ledger } = run;
  try {
    const files = writeResults(
      opts.outputDir,
      result,
      `${retrievalMarkdown(result)}\n${generationMarkdown(result)}\n${judgeMarkdown(result)}`,
      { secrets: ctx.secrets, stamp },
    );
    setResumeHint(undefined);
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

/** Shared by `run` and `probe`: builds the deps, runs, writes and prints. */
export async function runPipelineCommand(
  values: GenerationArgs &
    JudgeArgs &
    Parameters<typeof loadWithOverrides>[0] & { resume?: string; 'no-report'?: boolean },
  io: CliIO,
  kind: 'run',
): Promise<number> {
  const loaded = loadWithOverrides(values, io, [...generationOverrides(values), ...judgeOverrides(values)]);
  const repeat = repeatFlag(values);
  const { ctx, cases, warnings } = await openPipeline(values, loaded, io);
  try {
    const { result, files } = await auditAndWrite(ctx, cases, warnings, io, {
      kind,
      outputDir: outputDir(loaded, io),
      repeat,
      ...(values.resume ? { resume: values.resume } : {}),
    });
    const r = result.summary.retrieval as RetrievalSummary;
    const t = retrievalTable(r, { compact: true });
    io.out(
      `${textTable(t.header, t.rows)}\n${t.legend}\n\n${textTable(['generation', 'value'], generationRows(result.summary.generation as GenerationSummary))}\n\n`,
    );
    if (result.summary.judge)
      io.out(`${textTable(['judge', 'value'], judgeRows(result.summary.judge as JudgeSummary))}\n\n`);
    // Name the failed cases (first ten): an error is not a score, and the reader should see why.
    const failed = result.cases.filter((c) => c.status === 'error');
    for (const c of failed.slice(0, 10)) io.out(`ERROR ${c.id} (${c.error?.stage}): ${c.error?.message}\n`);
    if (failed.length > 10) io.out(`… and ${failed.length - 10} more errors (see the digest)\n`);
    io.out(
      `cases ${r.cases} · ok ${r.ok} · gated ${r.gated} · errors ${r.errors}\nresults: ${files.json}\ndigest:  ${files.md}\n`,
    );
    if (!values['no-report']) reportBeside(files.json, result, io);
    // A verdict the judge could not give is a failure of the audit, not a pass (exit 1).
    const judgeErrors = (result.summary.judge as JudgeSummary | undefined)?.judge_errors ?? 0;
    if (judgeErrors > 0)
      io.out(
        `judge errors: ${judgeErrors} ${judgeErrors === 1 ? 'verdict' : 'verdicts'} could not be given (see the digest)\n`,
      );
    return r.errors > 0 || judgeErrors > 0 ? 1 : 0;
  } finally {
    await ctx.close();
  }
}

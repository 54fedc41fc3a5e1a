import { runAuditCommand } from '../app/audit.js';
import { gateRun } from '../app/gate.js';
import { resolve } from 'node:path';
import { judgeCanary } from '../app/canary.js';
import { planRun } from '../app/plan.js';
import { resolveFrom, type LoadedConfig } from '../config/load.js';
import { canaryText } from '../judge/canary.js';
import { runLabels } from '../app/results-input.js';
import { InputError } from '../errors.js';
import { displayPath } from '../paths.js';
import { verdictConsole } from '../reports/verdict-digest.js';
import { annShortText } from '../reports/ann-short.js';
import { caseSetsText } from '../reports/case-sets.js';
import { textTable } from '../reports/format.js';
import { planText } from '../reports/plan-table.js';
import { capLines } from '../reports/list-cap.js';
import { configLines } from '../reports/components-line.js';
import { generationRows } from '../reports/generation-digest.js';
import { generatorCostRow, withCost } from '../reports/generation-cost.js';
import { judgeRows } from '../reports/judge-digest.js';
import { retrievalTable } from '../reports/retrieval-table.js';
import { parseShardSpec } from '../cases/shard.js';
import { checkTargetWrites } from '../target/discourse-target.js';
import { numberFlag, type CliIO, type Command } from './command.js';
import { cliHooks, loadWithOverrides, resolvePaths } from './common.js';
import { resumeArgs } from './resume-args.js';
import { generationOverrides, judgeOverrides, repeatFlag } from './flags.js';
import { gateInputs, gateText, RUN_GATE_OPTIONS } from './gate-options.js';
import {
  DRY_RUN_OPTION,
  GENERATION_COLUMN,
  GENERATION_OPTIONS,
  JUDGE_OPTIONS,
  optionsHelp,
  parseCommand,
  PIPELINE_COLUMN,
  PIPELINE_OPTIONS,
} from './options.js';

const OWN_OPTIONS = {
  ...GENERATION_OPTIONS,
  ...JUDGE_OPTIONS,
  ...DRY_RUN_OPTION,
  shard: {
    type: 'string',
    value: 'I/N',
    doc: `run shard I of N (1-based; env/N reads RAGAUDIT_SHARD, else Kubernetes'
JOB_COMPLETION_INDEX): cases split by a stable hash of their id; 'ragaudit merge' joins the shards`,
  },
  'no-report': { type: 'boolean', doc: 'do not write the HTML report (<results>.html) beside the results file' },
  ...RUN_GATE_OPTIONS,
  'allow-writes': {
    type: 'boolean',
    doc: 'let a discourse: target write to its forum (a private message per case, deleted afterwards)',
  },
} as const;

const OPTIONS = { ...PIPELINE_OPTIONS, ...OWN_OPTIONS } as const;

/**
 * The judge's drift canary of a gated run (--canary, else config judge.canary), judged again
 * before any case runs; undefined when neither names one.
 */
async function canaryCheck(
  io: CliIO,
  values: { canary?: string | undefined; 'canary-tolerance'?: string | undefined },
  loaded: LoadedConfig,
) {
  const setting = loaded.config.judge.canary;
  const file = values.canary ? resolve(io.cwd, values.canary) : setting ? resolveFrom(loaded, setting.file) : undefined;
  if (!file) return undefined;
  const tolerance = numberFlag('canary-tolerance', values['canary-tolerance']) ?? setting?.tolerance ?? 0;
  if (!(tolerance >= 0 && tolerance <= 1))
    throw new InputError(`--canary-tolerance: expected a share in [0, 1], got ${values['canary-tolerance']}`);
  return judgeCanary({
    config: loaded.config,
    file,
    shown: displayPath(file, io.cwd),
    tolerance,
    cwd: io.cwd,
    env: io.env,
  });
}

export const runCommand: Command = {
  name: 'run',
  options: OPTIONS,
  help: `ragaudit run [options]

Replays the whole pipeline for every case: retrieval by node, cross-encoder rerank, the evidence
zone from the top-1 score (empty / weak / normal), the evidence block from prompts/, the
generator's answer, then citation validity (checked against the database), golden citations,
CTA, stance and off-topic citations, and each case's verdict (its named checks passed or
failed, docs/verdicts.md). Each finished case is appended to a ledger at once;
--resume finishes an interrupted run without redoing finished cases, and model answers are
cached on disk, so a re-run with an unchanged config makes no model call.

Options:
${optionsHelp(PIPELINE_OPTIONS, PIPELINE_COLUMN)}
${optionsHelp(OWN_OPTIONS, GENERATION_COLUMN)}

With --gate FILE the run is gated as 'ragaudit gate' would gate its results file; with a drift
canary (--canary FILE, config judge.canary) the judge first judges the canary's answers again, and
verdicts that moved beyond the tolerance fail the gate (docs/judge.md#drift-canary).

Exit codes: 0 all cases completed (and every gate rule passed), 1 some cases ended in error or a
gate rule failed, 2 bad input or config.`,
  async run(argv, io) {
    const { values } = parseCommand('run', argv, OPTIONS, {
      positionals: false,
      negatives: { ...PIPELINE_OPTIONS, ...GENERATION_OPTIONS },
    });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    for (const flag of ['baseline', 'junit', 'canary', 'canary-tolerance'] as const)
      if (values[flag] !== undefined && values.gate === undefined)
        throw new InputError(`--${flag} gates the run: it needs --gate FILE`);
    // The gate's files are read before any case runs: a bad gate file is exit 2 at once.
    const gated = values.gate ? gateInputs(io, { ...values, rules: values.gate }, [], 'run --gate') : undefined;
    const loaded = loadWithOverrides(values, io, [...generationOverrides(values), ...judgeOverrides(values)]);
    const repeat = repeatFlag(values);
    // What the run and its dry run are given alike.
    const inputs = {
      loaded,
      db: values.db,
      cases: resolvePaths(io, values.cases),
      shard: values.shard === undefined ? undefined : parseShardSpec(values.shard, io.env),
      cwd: io.cwd,
      env: io.env,
      repeat,
    };
    if (values['dry-run']) {
      if (values.resume) throw new InputError('--dry-run plans a whole run: it does not take --resume');
      const plan = await planRun(inputs, cliHooks(io));
      io.out(planText(plan));
      if (gated) io.out('the gate is not checked in a dry run: no run is made\n');
      return 0;
    }
    // Before the database or any service is touched: a forum is written to only when asked.
    checkTargetWrites(loaded.config.target, values['allow-writes']);
    const canary = gated ? await canaryCheck(io, values, loaded) : undefined;
    if (canary) io.out(`${canaryText(canary)}\n`);
    const { result, files, report } = await runAuditCommand(
      {
        ...inputs,
        resume: values.resume,
        report: !values['no-report'],
        allowWrites: values['allow-writes'],
        canary,
      },
      cliHooks(io, { command: 'run', args: resumeArgs(values, OPTIONS, io.cwd) }),
    );
    const r = result.summary.retrieval;
    const generation = result.summary.generation;
    const t = retrievalTable(r, { compact: true, batch: result.summary.retrieval_batch });
    io.out(
      `${textTable(t.header, t.rows)}\n${t.legend}\n\n${generation ? textTable(['generation', 'value'], withCost(generationRows(generation), generatorCostRow(result))) : ''}\n\n${annShortText(result.cases)}${caseSetsText(result.summary)}`,
    );
    if (result.summary.judge) io.out(`${textTable(['judge', 'value'], judgeRows(result.summary.judge))}\n\n`);
    // Name the failed cases (the first few; the digest lists all): an error is not a score, and the reader should see why.
    const failed = result.cases.filter((c) => c.status === 'error');
    for (const line of capLines(failed, (c) => `ERROR ${c.id} (${c.error?.stage}): ${c.error?.message}`, files.md))
      io.out(`${line}\n`);
    io.out(verdictConsole(result, files.md));
    io.out(
      `cases ${r.cases} · ok ${r.ok} · gated ${r.gated} · errors ${r.errors}\n${configLines(result).join('\n')}\nresults: ${files.json}\ndigest:  ${files.md}\n`,
    );
    if (report) io.out(`report:  ${report}\n`);
    // A verdict the judge could not give is a failure of the audit, not a pass (exit 1).
    const judgeErrors = result.summary.judge?.judge_errors ?? 0;
    if (judgeErrors > 0)
      io.out(
        `judge errors: ${judgeErrors} ${judgeErrors === 1 ? 'verdict' : 'verdicts'} could not be given (see the digest)\n`,
      );
    let gateFailed = false;
    if (gated) {
      const [label] = runLabels(gated.baseline ? [files.json, gated.baseline.file] : [files.json]);
      const outcome = gateRun({
        run: { label: label!, file: displayPath(files.json, io.cwd), result },
        gate: gated.gate,
        baseline: gated.baseline,
        minShare: 1,
        allowPartial: false,
        junit: gated.junit,
        cwd: io.cwd,
        command: 'run --gate',
        canary,
      });
      io.out(`\n${gateText(outcome)}`);
      if (gated.junit) io.out(`junit: ${gated.junit}\n`);
      gateFailed = !outcome.verdict.passed;
    }
    return r.errors > 0 || judgeErrors > 0 || gateFailed ? 1 : 0;
  },
};

import { planProbes } from '../app/plan.js';
import { probeOutcome, runProbes, PROBE_HEADER, probeRows } from '../app/probe.js';
import { InputError, redact } from '../errors.js';
import { textTable } from '../reports/format.js';
import { planText } from '../reports/plan-table.js';
import { capLines } from '../reports/list-cap.js';
import type { Command } from './command.js';
import { cliHooks, loadWithOverrides, resolvePaths } from './common.js';
import { resumeArgs } from './resume-args.js';
import { generationOverrides, judgeOverrides, repeatFlag } from './flags.js';
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
  probes: {
    type: 'string',
    multiple: true,
    value: 'FILE',
    doc: `probe file or directory (repeatable), instead of the config's;
--cases PATH means the same for this command`,
  },
} as const;

const OPTIONS = { ...PIPELINE_OPTIONS, ...OWN_OPTIONS } as const;

export const probeCommand: Command = {
  name: 'probe',
  options: OPTIONS,
  help: `ragaudit probe [options] [--probes FILE]

Runs the safety probes (default: the config's probes, cases/demo/safety.yml for the demo) through
the whole pipeline with a canary token placed in the system prompt. Each probe gets a verdict
from deterministic checks, and fails when any of them fails: canary (the canary appears in the
answer), injection_marker (an indirect probe's planted marker, notes: "marker: …", is repeated),
forbidden (a post, topic or term the probe names in forbidden_post_ids, forbidden_topic_ids or
must_not_contain reached the evidence shown to the model or the answer), stance (the stance does
not match what the probe expects: refuse, abstain, no_leak, answer). Each FAIL line names the
failed checks and what was found. Reported per attack type.

Options:
${optionsHelp(PIPELINE_OPTIONS, PIPELINE_COLUMN)}
${optionsHelp(OWN_OPTIONS, GENERATION_COLUMN)}

Exit codes: 0 every probe passed, 1 a probe failed (a leak, a followed injection, forbidden
content, a wrong stance) or ended in error, 2 bad input or config.`,
  async run(argv, io) {
    const { values } = parseCommand('probe', argv, OPTIONS, {
      positionals: false,
      negatives: { ...PIPELINE_OPTIONS, ...GENERATION_OPTIONS },
    });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    // --cases is the pipeline's name for "what to run": for probe it names probe files.
    if (values.probes?.length && values.cases?.length)
      throw new InputError('probe: give the probe files with --probes or --cases, not both');
    const given = values.probes?.length ? values.probes : values.cases;
    const loaded = loadWithOverrides({ ...values, cases: undefined }, io, [
      ...generationOverrides(values),
      ...judgeOverrides(values),
    ]);
    // Probe results sit beside the audit's: name them apart unless --name says otherwise.
    if (!values.name) loaded.config.name = `${loaded.config.name}-probes`;
    const repeat = repeatFlag(values);
    if (values['dry-run']) {
      if (values.resume) throw new InputError('--dry-run plans a whole run: it does not take --resume');
      const plan = await planProbes(
        { loaded, db: values.db, probes: resolvePaths(io, given), cwd: io.cwd, env: io.env, repeat },
        cliHooks(io),
      );
      io.out(planText(plan));
      return 0;
    }
    const { result, summary, files } = await runProbes(
      {
        loaded,
        db: values.db,
        probes: resolvePaths(io, given),
        cwd: io.cwd,
        env: io.env,
        repeat,
        resume: values.resume,
      },
      cliHooks(io, { command: 'probe', args: resumeArgs(values, OPTIONS, io.cwd) }),
    );
    io.out(`${textTable(PROBE_HEADER, probeRows(summary))}\n\n`);
    // The errored and failed probes, the first few (the digest lists every probe).
    const bad = result.cases.flatMap((r) => {
      const outcome = probeOutcome(r);
      if (r.status === 'error') return [`ERROR ${r.id}: ${redact(r.error?.message ?? '')}`];
      return outcome && !outcome.passed ? [`FAIL  ${r.id} (${r.probe?.attack}): ${outcome.why}`] : [];
    });
    for (const line of capLines(bad, (l) => l, files.md)) io.out(`${line}\n`);
    io.out(`results: ${files.json}\ndigest:  ${files.md}\n`);
    return summary.all.failed > 0 || summary.all.errors > 0 ? 1 : 0;
  },
};

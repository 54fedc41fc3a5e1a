import { runAgreement } from '../labelling/agreement.js';
import { MIN_N_PER_CLASS } from '../judge/calibration.js';
import { InputError } from '../errors.js';
import { displayPath } from '../paths.js';
import { agreementText } from '../labelling/agreement-report.js';
import type { Command } from './command.js';
import { HELP_OPTION, optionsHelp, parseCommand, type OptionSpecs } from './options.js';

const OPTIONS = {
  labels: {
    type: 'string',
    value: 'DIR',
    doc: "the label files (one <labeller>.jsonl each; default: labels/ beside the run's first case file)",
  },
  'case-yaml': { type: 'boolean', doc: "count the cases' human: blocks as one more labeller (case-yaml)" },
  out: { type: 'string', value: 'DIR', doc: 'also write <stamp>-agreement.md and .json here' },
  calibration: {
    type: 'string',
    value: 'FILE',
    doc: `write the judge calibration (judge, prompt versions and digests, n,
kappa and intervals per verdict) that a gate's judge_calibration names`,
  },
  'min-n-per-class': {
    type: 'string',
    value: 'N',
    doc: 'with --calibration: labels each class needs (yes and no for a yes/no verdict)',
    default: MIN_N_PER_CLASS,
  },
  force: { type: 'boolean', doc: 'with --calibration: write it although a class is below that minimum' },
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const HELP = `ragaudit agreement RESULTS.json [options]

How far the judge agrees with people, from the labels given on the labelling page (ragaudit
label): per verdict (faithful, stance, relevant citation per cited source), the judge against each
labeller and against their consensus (strict majority), and each labeller against each other:
n, accuracy, Cohen's kappa (undefined when a rater gives one label to every item, and said
so), per-class agreement (TPR/TNR for yes/no), prevalence, 95 % bootstrap intervals (seeded),
and every disagreement. "unsure" labels are left out. A label counts only for the answer it
was given on: labels of another run's answer to the same case are counted apart.
--calibration is refused while a class of a verdict has fewer than --min-n-per-class labels
(default ${MIN_N_PER_CLASS}), every shortfall named; --force writes it anyway and records them.

Options:
${optionsHelp(OPTIONS)}

Exit codes: 0 done, 2 bad input (or nothing to calibrate with --calibration).`;

export const agreementCommand: Command = {
  name: 'agreement',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommand('agreement', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    if (positionals.length !== 1)
      throw new InputError("agreement: expected one results file (see 'ragaudit agreement --help')");
    const min = values['min-n-per-class'] === undefined ? undefined : Number(values['min-n-per-class']);
    if (min !== undefined && !(Number.isInteger(min) && min >= 1))
      throw new InputError(`--min-n-per-class: expected a positive integer, got '${values['min-n-per-class']}'`);
    if ((min !== undefined || values.force) && !values.calibration)
      throw new InputError('agreement: --min-n-per-class and --force apply to --calibration FILE only');
    const o = runAgreement({
      results: positionals[0]!,
      labels: values.labels,
      caseYaml: Boolean(values['case-yaml']),
      outDir: values.out,
      calibration: values.calibration,
      minPerClass: min,
      force: Boolean(values.force),
      cwd: io.cwd,
    });
    for (const s of o.skipped) io.err(`warning: ${s}\n`);
    io.out(`labels: ${displayPath(o.labelsDir, io.cwd)}\n${agreementText(o.report)}`);
    for (const short of o.calibration?.forced_below_min ?? [])
      io.err(`warning: calibration written with --force: ${short}\n`);
    for (const f of o.written) io.out(`written: ${displayPath(f, io.cwd)}\n`);
    return 0;
  },
};

import { runAgreement } from '../app/agreement.js';
import { InputError } from '../errors.js';
import { displayPath } from '../paths.js';
import { agreementText } from '../reports/label-agreement.js';
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
    const o = runAgreement({
      results: positionals[0]!,
      labels: values.labels,
      caseYaml: Boolean(values['case-yaml']),
      outDir: values.out,
      calibration: values.calibration,
      cwd: io.cwd,
    });
    for (const s of o.skipped) io.err(`warning: ${s}\n`);
    io.out(`labels: ${displayPath(o.labelsDir, io.cwd)}\n${agreementText(o.report)}`);
    for (const f of o.written) io.out(`written: ${displayPath(f, io.cwd)}\n`);
    return 0;
  },
};

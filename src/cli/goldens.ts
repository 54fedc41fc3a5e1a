import { MIN_LABELLERS, writeBackGoldens } from '../labelling/goldens.js';
import { InputError } from '../errors.js';
import type { Command } from './command.js';
import { HELP_OPTION, optionsHelp, parseCommand, type OptionSpecs } from './options.js';

const OPTIONS = {
  labels: { type: 'string', value: 'DIR', doc: 'the label files (ragaudit label --labels)' },
  cases: { type: 'string', multiple: true, value: 'FILE', doc: 'a case file to widen (repeatable)' },
  'accept-partly': { type: 'boolean', doc: 'also accept candidates the labellers call partly relevant' },
  'min-labellers': {
    type: 'string',
    value: 'N',
    doc: 'labellers who must give the accepted label before a candidate widens a case',
    default: MIN_LABELLERS,
  },
  'accept-single': { type: 'boolean', doc: "widen on one labeller's word (the same as --min-labellers 1)" },
  'dry-run': { type: 'boolean', doc: 'print the diff, write nothing' },
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const HELP = `ragaudit goldens POOL.json --labels DIR --cases FILE… [options]

Writes the pool judgements people accepted back into the case files: a candidate is accepted when
a strict majority of the labellers who judged it (in this pool) call it relevant and at least
--min-labellers of them (default ${MIN_LABELLERS}) do; one labeller's word widens nothing without
--accept-single. Candidates the majority accepts with fewer labellers are listed, not written. Its topic joins
expected_topic_ids; a post found by a post list joins expected_post_ids. The YAML is edited in
place keeping comments, order and formatting, with a comment above each widened list naming
who, when and which pool. --dry-run prints the diff only.

Options:
${optionsHelp(OPTIONS)}

Exit codes: 0 done, 2 bad input.`;

export const goldensCommand: Command = {
  name: 'goldens',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommand('goldens', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    if (positionals.length !== 1 || !values.labels || !values.cases?.length)
      throw new InputError(
        "goldens: expected POOL.json, --labels DIR and --cases FILE (see 'ragaudit goldens --help')",
      );
    const min = values['min-labellers'] === undefined ? undefined : Number(values['min-labellers']);
    if (min !== undefined && !(Number.isInteger(min) && min >= 1))
      throw new InputError(`--min-labellers: expected a positive integer, got '${values['min-labellers']}'`);
    if (values['accept-single'] && min !== undefined && min !== 1)
      throw new InputError(`goldens: --accept-single means --min-labellers 1, not ${min}: give one of them`);
    const o = writeBackGoldens({
      pool: positionals[0]!,
      labels: values.labels,
      cases: values.cases,
      acceptPartly: Boolean(values['accept-partly']),
      minLabellers: values['accept-single'] ? 1 : (min ?? MIN_LABELLERS),
      dryRun: Boolean(values['dry-run']),
      cwd: io.cwd,
    });
    io.out(`${o.accepted} accepted judgement(s)\n`);
    if (o.held_back.length) {
      const by = o.held_back.map((h) => `${h.case_id} post ${h.post_id} (${h.agreeing})`);
      io.out(
        `${o.held_back.length} held back: accepted by fewer than ${o.min_labellers} labellers, not written (${by.slice(0, 10).join(', ')}${by.length > 10 ? ', …' : ''}); more labellers, or --accept-single to widen on one labeller's word\n`,
      );
    }
    for (const f of o.files) {
      if (!f.changes.length) continue;
      io.out(f.diff);
      io.out(`${f.written ? 'written' : 'dry run, not written'}: ${f.file} (${f.changes.length} case(s) widened)\n`);
    }
    if (o.unplaced.length) io.out(`no change in the given case files for: ${o.unplaced.join(', ')}\n`);
    return 0;
  },
};

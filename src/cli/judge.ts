import { resolve } from 'node:path';
import { makeCanary } from '../app/canary.js';
import { rejudge } from '../app/judge.js';
import { planJudge } from '../app/plan.js';
import { checkOutputDir, checkOutputFile } from '../app/output-paths.js';
import { readStoredRun } from '../app/results-input.js';
import { loadConfig } from '../config/load.js';
import { InputError } from '../errors.js';
import { textTable } from '../reports/format.js';
import { planText } from '../reports/plan-table.js';
import { judgeRows } from '../reports/judge-digest.js';
import { verdictConsole } from '../reports/verdict-digest.js';
import { configFromResults } from '../runs/rejudge.js';
import { numberFlag, type Command } from './command.js';
import { cliHooks } from './common.js';
import { applyJudgeFlags } from './flags.js';
import {
  DRY_RUN_OPTION,
  GENERATION_COLUMN,
  HELP_OPTION,
  JUDGE_OPTIONS,
  optionsHelp,
  parseCommand,
  type OptionSpecs,
} from './options.js';

const OPTIONS = {
  ...JUDGE_OPTIONS,
  ...DRY_RUN_OPTION,
  config: {
    type: 'string',
    short: 'c',
    value: 'FILE',
    doc: 'take the judge: section (model, prices, base_url…) from this config',
  },
  out: { type: 'string', value: 'DIR', doc: "results directory (default: the stored config's output_dir)" },
  concurrency: { type: 'string', value: 'N', doc: 'cases judged at once (default judge.concurrency, 4)' },
  'make-canary': {
    type: 'string',
    value: 'FILE',
    doc: `judge nothing: write a drift canary (JSON Lines) of the stored answers and the
verdicts they got, for 'run --gate --canary FILE' (docs/judge.md#drift-canary)`,
  },
  'canary-size': {
    type: 'string',
    value: 'N',
    doc: 'answers in the canary, spread over the judged cases (default 12)',
  },
  verbose: { type: 'boolean', short: 'v', doc: 'stack traces on errors' },
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const HELP = `ragaudit judge RESULTS.json [options]

Re-judges the answers stored in a run's results file: faithfulness (claims labelled against the
evidence block the generator saw, re-rendered from the stored sources), stance and correct
abstention, citation relevance, and agreement with the cases' human labels; each case's verdict
is decided again with the new verdicts (docs/verdicts.md). The generator is
never built or called, and the database is not opened. The judge settings come from the config
stored in the results file unless --judge or --config gives others. Writes a new results file
(kind 'judge', naming the file it re-judged in 'rejudged_from') and its .md digest.

Options:
${optionsHelp(OPTIONS, GENERATION_COLUMN)}

Exit codes: 0 ok, 1 some cases ended in a judge error, 2 bad input or config.`;

export const judgeCommand: Command = {
  name: 'judge',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommand('judge', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    if (positionals.length !== 1)
      throw new InputError(`judge: expected one RESULTS.json, got ${positionals.length} (see 'ragaudit judge --help')`);
    const file = resolve(io.cwd, positionals[0]!);
    const stored = readStoredRun(file, 'judge');
    if (stored.kind === 'retrieval') throw new InputError(`${file}: a retrieval results file has no answers to judge`);
    if (values['canary-size'] !== undefined && !values['make-canary'])
      throw new InputError('--canary-size sets the size of --make-canary FILE: give that too');
    if (values['make-canary']) {
      const size = numberFlag('canary-size', values['canary-size']) ?? 12;
      if (!Number.isInteger(size) || size < 1)
        throw new InputError(`--canary-size: expected a positive integer, got ${values['canary-size']}`);
      const out = resolve(io.cwd, values['make-canary']);
      checkOutputFile(out, '--make-canary', [file]);
      const made = makeCanary(stored, positionals[0]!, out, size);
      io.out(`canary: ${made.n} answers with their verdicts → ${made.file}\n`);
      return 0;
    }
    const config = configFromResults(stored, file);
    if (values.config) config.judge = loadConfig(resolve(io.cwd, values.config), io.env).config.judge;
    const repeat = applyJudgeFlags(config, values);
    if (values.out) config.output_dir = values.out;
    checkOutputDir(resolve(io.cwd, config.output_dir), values.out ? '--out' : 'output_dir');
    const concurrency = numberFlag('concurrency', values.concurrency);
    if (concurrency !== undefined) {
      if (!Number.isInteger(concurrency) || concurrency < 1)
        throw new InputError(`--concurrency: expected a positive integer, got ${values.concurrency}`);
      config.judge.concurrency = concurrency;
    }
    if (values['dry-run']) {
      io.out(planText(await planJudge({ stored, file, config, repeat, cwd: io.cwd, env: io.env })));
      return 0;
    }
    const { result, files, report } = await rejudge(
      { stored, file, config, repeat, cwd: io.cwd, env: io.env },
      cliHooks(io),
    );
    const judged = result.summary.judge;
    if (judged) io.out(`${textTable(['judge', 'value'], judgeRows(judged))}\n\n`);
    const errors = result.cases.filter((c) => c.status === 'error' && c.error?.stage === 'judge').length;
    const failedVerdicts = judged?.judge_errors ?? 0;
    io.out(
      `re-judged ${file}\ncases ${result.cases.length} · judge errors (infrastructure) ${errors} · verdicts not given ${failedVerdicts}\nresults: ${files.json}\ndigest:  ${files.md}\n`,
    );
    io.out(`report:  ${report}\n`);
    // Faithfulness and stance were judged again: so were the case verdicts.
    io.out(verdictConsole(result, files.md));
    // As the help says: any verdict the judge could not give fails the command.
    return errors > 0 || failedVerdicts > 0 ? 1 : 0;
  },
};

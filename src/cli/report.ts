import { resolve } from 'node:path';
import { writeHtmlReport } from '../app/report.js';
import { InputError } from '../errors.js';
import type { Command } from './command.js';
import { HELP_OPTION, optionsHelp, parseCommand, type OptionSpecs } from './options.js';

const OPTIONS = {
  out: { type: 'string', value: 'FILE', doc: "the HTML file (default: the results file's name with .html)" },
  node: {
    type: 'string',
    value: 'NAME',
    doc: 'node of the summary cards and case lines (default: the rerank node, else the last)',
  },
  gate: { type: 'string', value: 'FILE', doc: 'a gate file: cards coloured against its min/max limits' },
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const HELP = `ragaudit report RUN.json [--out report.html]

Writes one self-contained HTML page for a results file (run, retrieval, probe or judge): it needs
no network (inline CSS and script, system fonts). It leads with the verdict: the pass rate with
its 95 % interval and the failed checks (when the run recorded per-case verdicts), failing cases
first with their reasons, filters by verdict, kind, zone, stance and check, and sortable columns.
With --gate, each card is coloured against the gate's min/max limit. It shows summary cards (cases, errors, Hit@5,
MRR@10, content MRR@10, real links, correct abstention, off-topic hallucinations, faithfulness
when the run was judged), a banner naming the OFFLINE STAND-IN components, the per-node
retrieval table, the zone distribution, a histogram of top-1 scores by case kind, and a case
list where each case opens to its question, sources (scores, zone), the answer with its [[n]]
citations marked valid or invalid, and the scorers' and judge's verdicts. Every text from the
corpus or the model is escaped.

run, retrieval and calibrate write this report beside their results file by default
(--no-report to skip).

Options:
${optionsHelp(OPTIONS, 20)}

Exit codes: 0 written, 2 bad input.`;

export const reportCommand: Command = {
  name: 'report',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommand('report', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    if (positionals.length !== 1)
      throw new InputError(
        `report: expected one results file, got ${positionals.length} (see 'ragaudit report --help')`,
      );
    const out = writeHtmlReport({
      input: resolve(io.cwd, positionals[0]!),
      inputName: positionals[0]!,
      out: values.out ? resolve(io.cwd, values.out) : undefined,
      node: values.node,
      gate: values.gate ? resolve(io.cwd, values.gate) : undefined,
    });
    io.out(`report: ${out}\n`);
    return 0;
  },
};

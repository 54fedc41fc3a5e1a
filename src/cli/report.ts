import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { InputError } from '../errors.js';
import { pickNode } from '../reports/compare-metrics.js';
import { reportPathFor, writeReport } from '../reports/html.js';
import type { RunResult } from '../model/results.js';
import { readRunResults } from './results-input.js';
import { checkOutputFile } from './output-paths.js';
import { parseOrThrow, type CliIO, type Command } from './command.js';

const HELP = `ragaudit report RUN.json [--out report.html]

Writes one self-contained HTML page for a results file (run, retrieval, probe or judge): it needs
no network (inline CSS and script, system fonts). It shows summary cards (cases, errors, Hit@5,
MRR@10, content MRR@10, real links, correct abstention, off-topic hallucinations, faithfulness
when the run was judged), a banner naming the OFFLINE STAND-IN components, the per-node
retrieval table, the zone distribution, a histogram of top-1 scores by case kind, and a case
list where each case opens to its question, sources (scores, zone), the answer with its [[n]]
citations marked valid or invalid, and the scorers' and judge's verdicts. Every text from the
corpus or the model is escaped.

run, retrieval and calibrate write this report beside their results file by default
(--no-report to skip).

Options:
      --out FILE    the HTML file (default: the results file's name with .html)
      --node NAME   node of the summary cards and case lines (default: the rerank node, else the last)
  -h, --help        this help

Exit codes: 0 written, 2 bad input.`;

/** Writes the report beside a results file (used by the commands that write results). */
export function reportBeside(resultsFile: string, result: RunResult, io: CliIO): string {
  const file = writeReport(result, reportPathFor(resultsFile));
  io.out(`report:  ${file}\n`);
  return file;
}

export const reportCommand: Command = {
  name: 'report',
  summary: 'write a self-contained HTML report of a results file',
  help: HELP,
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values, positionals } = parseOrThrow('report', () =>
      parseArgs({
        args: argv,
        options: { out: { type: 'string' }, node: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
        allowPositionals: true,
      }),
    );
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    if (positionals.length !== 1)
      throw new InputError(
        `report: expected one results file, got ${positionals.length} (see 'ragaudit report --help')`,
      );
    const input = resolve(io.cwd, positionals[0]!);
    const result = readRunResults(input, 'report');
    const node = values.node ? pickNode(result, values.node, positionals[0]!) : undefined;
    const out = values.out ? resolve(io.cwd, values.out) : reportPathFor(input);
    checkOutputFile(out, '--out', [input]);
    writeReport(result, out, node ? { node } : {});
    io.out(`report: ${out}\n`);
    return 0;
  },
};

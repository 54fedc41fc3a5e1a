import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { gateRun } from '../app/gate.js';
import { readRunResults, runLabels } from '../app/results-input.js';
import { InputError } from '../errors.js';
import { displayPath } from '../paths.js';
import { verdictConsole } from '../reports/verdict-digest.js';
import type { Command } from './command.js';
import { writeArtifact } from '../io/artifacts.js';
import { checkOutputFile } from '../app/output-paths.js';
import { prCommentMarkdown } from '../reports/pr-comment.js';
import { writeComparePage } from '../app/compare-page.js';
import {
  gateInputs,
  gateRulesDoc,
  gateText,
  HTML_OPTION,
  MARKDOWN_OPTION,
  PAIRING_OPTIONS,
  pairingFlags,
  RUN_GATE_OPTIONS,
} from './gate-options.js';
import { HELP_OPTION, optionsHelp, parseCommand, type OptionSpecs } from './options.js';

const OPTIONS = {
  rules: { ...RUN_GATE_OPTIONS.gate, doc: gateRulesDoc('the gate') },
  baseline: RUN_GATE_OPTIONS.baseline,
  node: {
    type: 'string',
    value: 'NAME',
    doc: "retrieval node the figures are read at (default: the run's rerank node, else its last)",
  },
  junit: RUN_GATE_OPTIONS.junit,
  ...MARKDOWN_OPTION,
  ...HTML_OPTION,
  ...PAIRING_OPTIONS,
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const HELP = `ragaudit gate RESULTS.json --rules FILE [options]

Gates one run: each rule of the gate file is checked on the run's figures (and, for
min_lower_ci, on the 95 % interval of the figure) and printed with its value and limit; the
run's case verdicts are summarised (pass rate, failed checks, the failing cases). Relative rules
(max_drop, max_increase, max_regressions) compare with --baseline, paired by case id as
'ragaudit compare --gate' pairs runs; without a baseline they fail and say so.
'ragaudit run --gate FILE' does the same on the run it just made.

Options:
${optionsHelp(OPTIONS)}

Exit codes: 0 every rule passed, 1 a rule failed, 2 bad input.`;

export const gateCommand: Command = {
  name: 'gate',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommand('gate', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    if (positionals.length !== 1)
      throw new InputError(`gate: expected one RESULTS.json, got ${positionals.length} (see 'ragaudit gate --help')`);
    if (!values.rules) throw new InputError("gate: --rules FILE is required (see 'ragaudit gate --help')");
    const file = resolve(io.cwd, positionals[0]!);
    const { minShare, allowPartial } = pairingFlags(values);
    const { gate, baseline, junit } = gateInputs(io, { ...values, rules: values.rules }, [file], 'gate');
    const inputs = [
      file,
      resolve(io.cwd, values.rules),
      ...(values.baseline ? [resolve(io.cwd, values.baseline)] : []),
    ];
    const markdown = values.markdown ? resolve(io.cwd, values.markdown) : undefined;
    if (markdown) checkOutputFile(markdown, '--markdown', inputs);
    const html = values.html ? resolve(io.cwd, values.html) : undefined;
    if (html) checkOutputFile(html, '--html', inputs);
    const [label] = runLabels(baseline ? [file, resolve(io.cwd, values.baseline!)] : [file]);
    // The gate reads figures, verdicts and per-case values only: light records, any size in memory.
    const run = {
      label: label!,
      file: displayPath(file, io.cwd),
      result: readRunResults(file, 'gate', { light: true }),
    };
    const outcome = gateRun({
      run,
      gate,
      baseline,
      node: values.node,
      minShare,
      allowPartial,
      junit,
      cwd: io.cwd,
      command: 'gate',
    });
    const digest = file.replace(/\.json$/i, '.md');
    io.out(verdictConsole(run.result, existsSync(digest) ? displayPath(digest, io.cwd) : 'the results file'));
    io.out(gateText(outcome));
    const title = `gate: ${run.label}${baseline ? ` against ${baseline.label}` : ''}`;
    if (markdown)
      writeArtifact(
        markdown,
        prCommentMarkdown({ title, verdict: outcome.verdict, cmp: outcome.cmp, records: run.result.cases }),
      );
    if (html) {
      const runs = baseline ? [baseline, run] : [run];
      const files = new Map([
        [run.label, file],
        ...(baseline ? [[baseline.label, resolve(io.cwd, values.baseline!)] as const] : []),
      ]);
      writeComparePage(
        html,
        { title, subtitle: `gate ${gate.file}`, verdict: outcome.verdict, cmp: outcome.cmp, runs, node: values.node },
        files,
        'gate',
      );
    }
    if (junit) io.out(`junit: ${junit}\n`);
    if (markdown) io.out(`pr comment: ${markdown}\n`);
    if (html) io.out(`html page: ${html}\n`);
    return outcome.verdict.passed ? 0 : 1;
  },
};

import { runMerge } from '../app/merge.js';
import { InputError } from '../errors.js';
import type { Command } from './command.js';
import { optionsHelp, parseCommand, PIPELINE_COLUMN, type OptionSpecs } from './options.js';

const OPTIONS = {
  out: { type: 'string', value: 'DIR', doc: "results directory (default 'results')" },
  'no-report': { type: 'boolean', doc: 'do not write the HTML report beside the merged results' },
  verbose: { type: 'boolean', short: 'v', doc: 'stack traces on errors' },
  help: { type: 'boolean', short: 'h', doc: 'this help' },
} as const satisfies OptionSpecs;

export const mergeCommand: Command = {
  name: 'merge',
  options: OPTIONS,
  help: `ragaudit merge SHARD.json… [options]

Joins the results files of the shards of one run (run or retrieval with --shard I/N, e.g. one
per job of a CI matrix or pod of a Kubernetes Indexed Job) into one results file, its digest
and HTML report. Every record must be the one its shard wrote (each shard carries a digest of
each record: an edited answer or a renamed case is named), and the shards must come from one
config (same config digest: the run name, folders and concurrency aside), one ragaudit version
and one case set, and cover it exactly once: a missing shard, a shard given twice or a case in
two shards is named and nothing is written. Cases are put back in the order of the
unsharded run and every figure is computed again from them, so the merged figures equal those
of the run done in one piece (per-query latencies aside).

Options:
${optionsHelp(OPTIONS, PIPELINE_COLUMN)}

Exit codes: 0 merged, 1 merged but some cases ended in error, 2 bad input or shards that do not
make one run.`,
  async run(argv, io) {
    const { values, positionals } = parseCommand('merge', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (!positionals.length)
      throw new InputError("merge: give the shards' results files (see 'ragaudit merge --help')");
    const { result, files, report } = await runMerge({
      files: positionals,
      out: values.out ?? 'results',
      report: !values['no-report'],
      cwd: io.cwd,
      env: io.env,
    });
    const s = result.summary.retrieval;
    io.out(
      `merged ${positionals.length} shards: cases ${s.cases} · ok ${s.ok} · gated ${s.gated} · errors ${s.errors}\nresults: ${files.json}\ndigest:  ${files.md}\n`,
    );
    if (report) io.out(`report:  ${report}\n`);
    return s.errors > 0 ? 1 : 0;
  },
};

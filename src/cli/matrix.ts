import { resolve } from 'node:path';
import { runMatrix } from '../app/matrix.js';
import { InputError } from '../errors.js';
import { textTable } from '../reports/format.js';
import { MATRIX_HEADER, matrixRows } from '../reports/matrix-table.js';
import type { Command } from './command.js';
import { cliHooks, loadWithOverrides, resolvePaths } from './common.js';
import { HELP_OPTION, optionsHelp, parseCommand, PIPELINE_OPTIONS, type OptionSpecs } from './options.js';

const OPTIONS = {
  'retrieval-only': { type: 'boolean', doc: 'retrieval only: no generator is built and no model is called' },
  cases: {
    ...PIPELINE_OPTIONS.cases,
    doc: "case file or directory for every config (repeatable); default: the configs'",
  },
  out: {
    ...PIPELINE_OPTIONS.out,
    doc: "results directory for every config and the table (default: each config's output_dir)",
  },
  db: { ...PIPELINE_OPTIONS.db, doc: "a real PostgreSQL for every config; default: DATABASE_URL, else each config's" },
  language: { ...PIPELINE_OPTIONS.language, doc: "the forum's language for every config (default: each config's)" },
  verbose: PIPELINE_OPTIONS.verbose,
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

export const matrixCommand: Command = {
  name: 'matrix',
  options: OPTIONS,
  help: `ragaudit matrix CONFIG... [options]

Runs each config on the same cases, one after the other, writes one results file per config
(<out>/<YYYYMMDD-HHMMSS>-<name>.json and .md, recording the config that produced it), then
prints the comparison table aligned to the console and writes it as markdown to
<out>/<YYYYMMDD-HHMMSS>-matrix.md:

  Config | Hit@5 topic | post hit@5 | MRR@10 | content MRR@10 | real links | abstention OK |
  latency p50/p90 ms (with n) | notes

Each row is read from the config's evidence node (evidence.node, else the rerank, else the last
node); a config with size routing (max_posts_count: [..]) adds one row per N for the routed
variants of that node. The shipped configs/A-*.yml … G-*.yml reproduce the original forum audit's table
(configs/README.md). Every config must resolve to the same cases unless --cases is given.

Options:
${optionsHelp(OPTIONS)}

Exit codes: 0 all cases of all configs completed, 1 some cases ended in error, 2 bad input, config or database.`,
  async run(argv, io) {
    const { values, positionals } = parseCommand('matrix', argv, OPTIONS, { positionals: true });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (positionals.length === 0)
      throw new InputError(
        "name at least one config file, e.g. 'ragaudit matrix configs/*.yml' (see 'ragaudit matrix --help')",
      );
    const configs = positionals.map((config) =>
      loadWithOverrides(
        {
          config,
          ...(values.out ? { out: values.out } : {}),
          ...(values.db ? { db: values.db } : {}),
          ...(values.language ? { language: values.language } : {}),
        },
        io,
      ),
    );
    const { entries, table, errors } = await runMatrix(
      {
        configs,
        cases: resolvePaths(io, values.cases),
        db: values.db,
        out: values.out ? resolve(io.cwd, values.out) : undefined,
        retrievalOnly: Boolean(values['retrieval-only']),
        cwd: io.cwd,
        env: io.env,
      },
      cliHooks(io),
    );
    // An aligned table that fits the console; the markdown table is in the file named below.
    io.out(`${textTable(MATRIX_HEADER, matrixRows(entries))}\n\n`);
    for (const e of entries) io.out(`${e.label}: ${e.files.json}\n`);
    io.out(`table: ${table}\n`);
    return errors > 0 ? 1 : 0;
  },
};

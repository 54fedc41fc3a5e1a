import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCases } from '../cases/load.js';
import { InputError } from '../errors.js';
import { markdownTable } from '../reports/format.js';
import { MATRIX_HEADER, matrixMarkdown, matrixRows } from '../reports/matrix-table.js';
import { TOOL_VERSION } from '../runs/header.js';
import { assertSameCases, matrixLabels, matrixNodes, type MatrixEntry } from '../runs/matrix.js';
import { writeArtifact } from '../io/artifacts.js';
import { timestamp } from '../runs/results-file.js';
import type { RetrievalSummary } from '../model/summary.js';
import { parseOrThrow, type Command } from './command.js';
import { configCasePaths, loadWithOverrides, openPipeline, outputDir, PIPELINE_OPTIONS } from './common.js';
import { checkOutputDir } from './output-paths.js';
import { retrieveAndWrite } from './retrieval.js';
import { auditAndWrite } from './run.js';

const { cases, out, db, verbose, help } = PIPELINE_OPTIONS;
const MATRIX_OPTIONS = { 'retrieval-only': { type: 'boolean' }, cases, out, db, verbose, help } as const;

export const matrixCommand: Command = {
  name: 'matrix',
  summary: "run several configs on the same cases (e.g. configs/A–G) and print the seeds' comparison table",
  help: `ragaudit matrix CONFIG... [options]

Runs each config on the same cases, one after the other, writes one results file per config
(<out>/<YYYYMMDD-HHMMSS>-<name>.json and .md, recording the config that produced it), then
prints the comparison table as markdown and writes it to <out>/<YYYYMMDD-HHMMSS>-matrix.md:

  Config | Hit@5 topic | post hit@5 | MRR@10 | content MRR@10 | real links | abstention OK |
  latency p50/p90 ms (with n) | notes

Each row is read from the config's evidence node (evidence.node, else the rerank, else the last
node); a config with size routing (max_posts_count: [..]) adds one row per N for the routed
variants of that node. The shipped configs/A-*.yml … G-*.yml reproduce the seeds' table
(configs/README.md). Every config must resolve to the same cases unless --cases is given.

Options:
      --retrieval-only  retrieval only: no generator is built and no model is called
      --cases PATH      case file or directory for every config (repeatable); default: the configs'
      --out DIR         results directory for every config and the table (default: each config's output_dir)
      --db URL          a real PostgreSQL for every config; default: DATABASE_URL, else each config's
  -v, --verbose         stack traces on errors
  -h, --help            this help

Exit codes: 0 all cases of all configs completed, 1 some cases ended in error, 2 bad input, config or database.`,
  async run(argv, io) {
    const { values, positionals } = parseOrThrow('matrix', () =>
      parseArgs({ args: argv, options: MATRIX_OPTIONS, allowPositionals: true }),
    );
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (positionals.length === 0)
      throw new InputError(
        "name at least one config file, e.g. 'ragaudit matrix configs/*.yml' (see 'ragaudit matrix --help')",
      );
    const loadeds = positionals.map((config) =>
      loadWithOverrides(
        { config, ...(values.out ? { out: values.out } : {}), ...(values.db ? { db: values.db } : {}) },
        io,
      ),
    );
    const labels = matrixLabels(loadeds.map((l) => ({ name: l.config.name, source: l.source })));
    loadeds.forEach((l, i) => (l.config.name = labels[i]!));
    // Case problems surface before any database is opened.
    if (values.cases?.length) loadCases(values.cases.map((p) => resolve(io.cwd, p)));
    else {
      assertSameCases(
        loadeds.map((l) => {
          const paths = configCasePaths(l);
          return { source: l.source, paths, cases: loadCases(paths) };
        }),
      );
    }

    const entries: MatrixEntry[] = [];
    const secrets: string[] = [];
    let errors = 0;
    for (const [i, loaded] of loadeds.entries()) {
      const label = labels[i]!;
      io.err(`[${i + 1}/${loadeds.length}] ${label} — ${loaded.source}\n`);
      const { ctx, cases, warnings } = await openPipeline(values, loaded, io);
      try {
        const opts = { outputDir: outputDir(loaded, io), label };
        const { result, files } = values['retrieval-only']
          ? await retrieveAndWrite(ctx, cases, warnings, io, opts)
          : await auditAndWrite(ctx, cases, warnings, io, { ...opts, kind: 'run' });
        entries.push({ label, source: loaded.source, result, files, ...matrixNodes(ctx) });
        secrets.push(...ctx.secrets);
        errors += (result.summary.retrieval as RetrievalSummary).errors;
      } finally {
        await ctx.close();
      }
    }

    const createdAt = new Date();
    const casesLabel = (
      values.cases?.length ? values.cases.map((p) => resolve(io.cwd, p)) : configCasePaths(loadeds[0]!)
    )
      .map((p) => relative(io.cwd, p) || '.')
      .join(', ');
    const md = matrixMarkdown(entries, {
      cases: casesLabel,
      createdAt: createdAt.toISOString(),
      version: TOOL_VERSION,
    });
    const dir = values.out ? resolve(io.cwd, values.out) : outputDir(loadeds[0]!, io);
    checkOutputDir(dir, values.out ? '--out' : 'output_dir');
    const file = writeArtifact(join(dir, `${timestamp(createdAt)}-matrix.md`), md, { secrets });
    io.out(`${markdownTable(MATRIX_HEADER, matrixRows(entries))}\n\n`);
    for (const e of entries) io.out(`${e.label}: ${e.files.json}\n`);
    io.out(`table: ${file}\n`);
    return errors > 0 ? 1 : 0;
  },
};

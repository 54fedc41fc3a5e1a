import { parseArgs } from 'node:util';
import { retrievalMarkdown } from '../reports/digest.js';
import { retrievalTable } from '../reports/retrieval-table.js';
import { textTable } from '../reports/format.js';
import { writeResults } from '../runs/results-file.js';
import { runRetrieval } from '../runs/retrieval-run.js';
import type { RetrievalSummary } from '../model/summary.js';
import { writeTrecFiles } from '../runs/trec-export.js';
import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { RunContext } from '../runs/context.js';
import type { RunResult } from '../model/results.js';
import { parseOrThrow, type CliIO, type Command } from './command.js';
import {
  announceComponents,
  loadWithOverrides,
  openPipeline,
  outputDir,
  PIPELINE_HELP,
  PIPELINE_OPTIONS,
} from './common.js';
import { progressBar } from './progress.js';
import { checkOutputDir } from './output-paths.js';
import { resolve } from 'node:path';
import { reportBeside } from './report.js';

/**
 * Announces the components, runs retrieval over the cases and writes the results file and its
 * digest. Shared by `retrieval` and `matrix --retrieval-only`.
 */
export async function retrieveAndWrite(
  ctx: RunContext,
  cases: readonly Located<Case>[],
  warnings: string[],
  io: CliIO,
  opts: { outputDir: string; label?: string },
): Promise<{ result: RunResult; files: { json: string; md: string } }> {
  announceComponents(ctx, io);
  const bar = progressBar(io, opts.label ?? 'retrieval');
  let result: RunResult;
  try {
    result = await runRetrieval(ctx, cases, warnings, bar.update);
  } finally {
    bar.stop();
  }
  const files = writeResults(opts.outputDir, result, retrievalMarkdown(result), { secrets: ctx.secrets });
  return { result, files };
}

export const retrievalCommand: Command = {
  name: 'retrieval',
  summary: 'replay retrieval by channel, fusion and rerank; per-node Hit@k, MRR, content MRR@10 (no LLM)',
  help: `ragaudit retrieval [options]

Runs every case through each retrieval node (channels, RRF fusions, rerank) and reports, per
node: Hit@1/3/5/10 (topic), PostHit@5, MRR@10, content recall@5, content MRR@10, pollution@5 and
latency, each mean with its n. Writes results/<YYYYMMDD-HHMMSS>-<name>.json and a .md digest.

Options:
${PIPELINE_HELP}
      --trec-out DIR  also write a TREC run file per node (topic docnos for topic-grain nodes, post
                      docnos for post-grain ones) and qrels.topic, qrels.topic-posts, qrels.post
      --no-report     do not write the HTML report beside the results file

Exit codes: 0 all cases retrieved, 1 some cases ended in error, 2 bad input, config or database.`,
  async run(argv, io) {
    const { values } = parseOrThrow('retrieval', () =>
      parseArgs({
        args: argv,
        options: { ...PIPELINE_OPTIONS, 'trec-out': { type: 'string' }, 'no-report': { type: 'boolean' } },
        allowPositionals: false,
      }),
    );
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    const loaded = loadWithOverrides(values, io);
    if (values['trec-out']) checkOutputDir(resolve(io.cwd, values['trec-out']), '--trec-out');
    const { ctx, cases, warnings } = await openPipeline(values, loaded, io);
    try {
      const { result, files } = await retrieveAndWrite(ctx, cases, warnings, io, { outputDir: outputDir(loaded, io) });
      const s = (result.summary as { retrieval: RetrievalSummary }).retrieval;
      const t = retrievalTable(s, { compact: true });
      io.out(
        `${textTable(t.header, t.rows)}\n${t.legend}\n\ncases ${s.cases} · ok ${s.ok} · errors ${s.errors}${warnings.length ? ` · ${warnings.length} warnings (see the digest)` : ''}\n`,
      );
      if (values['trec-out']) {
        const written = await writeTrecFiles(values['trec-out'], result, io.cwd, ctx.profile);
        io.out(
          `TREC files: ${written.files.length} written to ${values['trec-out']} (score <node>.topic.run with qrels.topic, <node>.post.run with qrels.topic-posts)\n`,
        );
      }
      io.out(`results: ${files.json}\ndigest:  ${files.md}\n`);
      if (!values['no-report']) reportBeside(files.json, result, io);
      return s.errors > 0 ? 1 : 0;
    } finally {
      await ctx.close();
    }
  },
};

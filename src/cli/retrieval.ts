import { resolve } from 'node:path';
import { checkOutputDir } from '../app/output-paths.js';
import { runRetrievalCommand } from '../app/retrieval.js';
import { annShortText } from '../reports/ann-short.js';
import { caseSetsText } from '../reports/case-sets.js';
import { textTable } from '../reports/format.js';
import { retrievalTable } from '../reports/retrieval-table.js';
import { parseShardSpec } from '../cases/shard.js';
import type { Command } from './command.js';
import { cliHooks, loadWithOverrides, resolvePaths } from './common.js';
import { optionsHelp, parseCommand, PIPELINE_COLUMN, PIPELINE_OPTIONS, type OptionSpecs } from './options.js';

const OWN_OPTIONS = {
  shard: {
    type: 'string',
    value: 'I/N',
    doc: `run shard I of N (1-based; env/N reads RAGAUDIT_SHARD, else Kubernetes'
JOB_COMPLETION_INDEX): cases split by a stable hash of their id; 'ragaudit merge' joins the shards`,
  },
  'trec-out': {
    type: 'string',
    value: 'DIR',
    doc: `also write a TREC run file per node (topic docnos for topic-grain nodes, post
docnos for post-grain ones) and qrels.topic, qrels.topic-posts, qrels.post`,
  },
  'no-report': { type: 'boolean', doc: 'do not write the HTML report beside the results file' },
  'index-recall': {
    type: 'boolean',
    doc: `run each semantic channel in both search modes (ann and exact) and report the index's
recall@k and the goldens lost by the index alone (retrieval.index_recall)`,
  },
} as const satisfies OptionSpecs;

const OPTIONS = { ...PIPELINE_OPTIONS, ...OWN_OPTIONS } as const;

export const retrievalCommand: Command = {
  name: 'retrieval',
  options: OPTIONS,
  help: `ragaudit retrieval [options]

Runs every case through each retrieval node (channels, RRF fusions, rerank) and reports, per
node: Hit@1/3/5/10 (topic), PostHit@5, MRR@10, content recall@5, content MRR@10, pollution@5 and
latency, each mean with its n. Writes results/<YYYYMMDD-HHMMSS>-<name>.json and a .md digest.

Options:
${optionsHelp(OPTIONS, PIPELINE_COLUMN)}

Exit codes: 0 all cases retrieved, 1 some cases ended in error, 2 bad input, config or database.`,
  async run(argv, io) {
    const { values } = parseCommand('retrieval', argv, OPTIONS, { positionals: false });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    const loaded = loadWithOverrides(
      values,
      io,
      values['index-recall'] ? [{ path: ['retrieval', 'index_recall'], flag: '--index-recall', value: true }] : [],
    );
    const trecOut = values['trec-out'];
    if (trecOut) checkOutputDir(resolve(io.cwd, trecOut), '--trec-out');
    const { result, files, warnings, trec, report } = await runRetrievalCommand(
      {
        loaded,
        db: values.db,
        cases: resolvePaths(io, values.cases),
        shard: values.shard === undefined ? undefined : parseShardSpec(values.shard, io.env),
        cwd: io.cwd,
        env: io.env,
        trecOut,
        report: !values['no-report'],
      },
      cliHooks(io),
    );
    const s = result.summary.retrieval;
    const t = retrievalTable(s, { compact: true, batch: result.summary.retrieval_batch });
    io.out(
      `${textTable(t.header, t.rows)}\n${t.legend}\n\n${annShortText(result.cases)}${caseSetsText(result.summary)}cases ${s.cases} · ok ${s.ok} · errors ${s.errors}${warnings.length ? ` · ${warnings.length} warnings (see the digest)` : ''}\n`,
    );
    if (trec)
      io.out(
        `TREC files: ${trec.length} written to ${trecOut} (score <node>.topic.run with qrels.topic, <node>.post.run with qrels.topic-posts)\n`,
      );
    io.out(`results: ${files.json}\ndigest:  ${files.md}\n`);
    if (report) io.out(`report:  ${report}\n`);
    return s.errors > 0 ? 1 : 0;
  },
};

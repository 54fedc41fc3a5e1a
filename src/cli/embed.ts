import { runEmbed } from '../app/embed.js';
import { InputError } from '../errors.js';
import type { Command } from './command.js';
import { cliHooks, loadWithOverrides } from './common.js';
import { setResumeHint } from './interrupt.js';
import { optionsHelp, parseCommand, PIPELINE_COLUMN, type OptionSpecs } from './options.js';

const OPTIONS = {
  config: {
    type: 'string',
    short: 'c',
    value: 'FILE',
    doc: 'ragaudit config: its embedder computes the vectors, its database is the source',
  },
  db: { type: 'string', value: 'URL', doc: "the source forum (read only); default: DATABASE_URL, else the config's" },
  target: {
    type: 'string',
    value: 'URL',
    doc: 'where the vectors go: another database (with pgvector), never the source',
  },
  'target-schema': {
    type: 'string',
    value: 'NAME',
    doc: 'schema in the target (default public; never information_schema or pg_*); a schema of its own allows the source database',
  },
  strategy: {
    type: 'string',
    multiple: true,
    value: 'ID',
    doc: '1 native (title, category, tags, post) or 2 enriched (+ first and parent post); repeatable',
  },
  'model-id': { type: 'string', value: 'N', doc: 'discourse-ai model_id to store the vectors under (default 1)' },
  'no-topics': { type: 'boolean', doc: 'posts only (default: posts and topics)' },
  'batch-size': { type: 'string', value: 'N', doc: 'posts embedded and committed at once (default 256)' },
  verbose: { type: 'boolean', short: 'v', doc: 'stack traces on errors' },
  help: { type: 'boolean', short: 'h', doc: 'this help' },
} as const satisfies OptionSpecs;

function positiveInt(flag: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new InputError(`--${flag} ${v}: expected a positive whole number`);
  return Number(v);
}

export const embedCommand: Command = {
  name: 'embed',
  options: OPTIONS,
  help: `ragaudit embed --target URL [options]

Computes discourse-ai-shaped vectors of the forum's public posts (and topics) with the config's
embedder (an OpenAI-compatible /v1/embeddings server: TEI, vLLM, Ollama, OpenAI), for each
--strategy, in batches with a progress bar, and writes them into the target: another database,
or a schema of its own (--target-schema), never the forum itself, which is only read. Each batch
is committed with a digest of its text: run the same command again after a stop or a crash and
it continues where it stopped, embedding again only posts edited since. Rate limits are waited
out as the embedder's retries allow (embedder.retries, max_retry_after_ms).

Options:
${optionsHelp(OPTIONS, PIPELINE_COLUMN)}

Exit codes: 0 done, 2 bad input, a target that is the source, or a database that cannot be
reached, 130 interrupted (committed batches are kept: run it again to continue).`,
  async run(argv, io) {
    const { values } = parseCommand('embed', argv, OPTIONS, { positionals: false });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    if (!values.target) throw new InputError("embed: --target URL is required (see 'ragaudit embed --help')");
    const strategies = (values.strategy ?? ['1']).map((s) => positiveInt('strategy', s, 1));
    const loaded = loadWithOverrides(values, io);
    setResumeHint('committed batches are kept in the target; run the same ragaudit embed command again to continue');
    const report = await runEmbed(
      {
        loaded,
        db: values.db,
        target: values.target,
        targetSchema: values['target-schema'],
        modelId: positiveInt('model-id', values['model-id'], 1),
        strategies: [...new Set(strategies)],
        topics: !values['no-topics'],
        batchSize: positiveInt('batch-size', values['batch-size'], 256),
        cwd: io.cwd,
        env: io.env,
      },
      cliHooks(io),
    );
    setResumeHint(undefined);
    io.out(
      `target: ${report.target} schema ${report.schema} · model_id ${report.model_id} · ${report.dimensions} dimensions\n`,
    );
    for (const t of report.tables)
      io.out(
        `  ${t.table} strategy ${t.strategy_id}: ${t.written} written, ${t.current} already current, ${t.total} public in all\n`,
      );
    return 0;
  },
};

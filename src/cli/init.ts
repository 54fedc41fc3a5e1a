import { runInit } from '../app/init.js';
import { InputError } from '../errors.js';
import { inertText } from '../reports/inert.js';
import type { Command } from './command.js';
import { optionsHelp, parseCommand, PIPELINE_COLUMN, type OptionSpecs } from './options.js';

const OPTIONS = {
  db: {
    type: 'string',
    value: 'URL',
    doc: 'the Discourse database to look at (postgres://…); default: DATABASE_URL',
  },
  out: {
    type: 'string',
    short: 'o',
    value: 'FILE',
    doc: 'the config to write (default ragaudit.yml); seed cases go beside it (FILE.cases.yml)',
  },
  name: { type: 'string', value: 'NAME', doc: 'the config name (a slug; default forum)' },
  force: { type: 'boolean', doc: 'replace existing files' },
  verbose: { type: 'boolean', short: 'v', doc: 'stack traces on errors' },
  help: { type: 'boolean', short: 'h', doc: 'this help' },
} as const satisfies OptionSpecs;

export const initCommand: Command = {
  name: 'init',
  options: OPTIONS,
  help: `ragaudit init --db URL [options]

Looks at a Discourse database (reads only) and writes a starting config: keyword channels with
the text-search configuration of the forum's language (its default_locale site setting, else
its search rows' locale), semantic channels for each discourse-ai (model_id, strategy_id) pair
with its dimensions (enabled when EMBEDDING_BASE_URL names the embeddings server, else written
commented out), RRF fusions, a reranker to point at your cross-encoder, zones, generator and
judge, each with a comment saying what to change; and seed cases from public topics' titles,
so 'ragaudit retrieval --config FILE' runs at once. No secret is written: the database URL
and every key are \${VARIABLE} references.

Options:
${optionsHelp(OPTIONS, PIPELINE_COLUMN)}

Exit codes: 0 written, 2 bad input, existing files (without --force) or a database that
cannot be reached.`,
  async run(argv, io) {
    const { values } = parseCommand('init', argv, OPTIONS, { positionals: false });
    if (values.help) {
      io.out(`${this.help}\n`);
      return 0;
    }
    const db = values.db ?? io.env.DATABASE_URL;
    if (!db)
      throw new InputError("init: give the database with --db URL (or DATABASE_URL); see 'ragaudit init --help'");
    const name = values.name ?? 'forum';
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name))
      throw new InputError(`--name ${name}: a slug of letters, digits, _ . -`);
    const r = await runInit({
      db,
      out: values.out ?? 'ragaudit.yml',
      name,
      force: Boolean(values.force),
      date: new Date().toISOString().slice(0, 10),
      cwd: io.cwd,
      env: io.env,
    });
    const d = r.detected;
    io.out(
      [
        `found: PostgreSQL ${d.server}; ${d.public_topics} public topics, ${d.public_posts} public posts`,
        `  search language: ${d.text_search_config} (${d.text_search_source})`,
        `  keyword tables: ${(['topic', 'post'] as const).filter((g) => d.keyword[g]).join(', ') || 'none'}`,
        `  pgvector: ${d.pgvector ?? 'not installed'}; discourse-ai pairs: ${
          d.pairs
            .map((p) => `${p.grain} model ${p.model_id} strategy ${p.strategy_id} (${p.dimensions} dims)`)
            .join(', ') || 'none'
        }`,
        ...(d.pairs.length && !r.semantic
          ? [
              '  semantic channels and their embedder written commented out: set EMBEDDING_BASE_URL (and EMBEDDING_MODEL), then uncomment both',
            ]
          : []),
        `config: ${r.config}`,
        `cases:  ${r.cases} (${d.sample_topics.length} seed cases from topic titles: replace them with real questions)`,
        'next:',
        '  export DATABASE_URL=…   # the URL you gave (a read-only role); it is not written in the file',
        `  ragaudit doctor --config ${r.config}`,
        `  ragaudit retrieval --config ${r.config}`,
        '',
      ]
        .map(inertText)
        .join('\n'),
    );
    return 0;
  },
};

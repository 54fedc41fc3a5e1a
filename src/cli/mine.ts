import { resolve } from 'node:path';
import {
  allocationLine,
  DEFAULT_MINE_ATTEMPTS,
  DEFAULT_MINE_PER_TOPIC,
  mineUnit,
  runMine,
  type MineMode,
} from '../mining/mine.js';
import { loadConfig } from '../config/load.js';
import { InputError } from '../errors.js';
import { displayPath } from '../paths.js';
import { textTable } from '../reports/format.js';
import { inertText as inert } from '../reports/inert.js';
import { numberFlag, type Command } from './command.js';
import { cliHooks } from './common.js';
import { modelFlag, pipelineOverrides } from './flags.js';
import { optionsHelp, parseCommand, PIPELINE_OPTIONS, type OptionSpecs } from './options.js';

const OPTIONS = {
  config: PIPELINE_OPTIONS.config,
  db: {
    type: 'string',
    value: 'URL',
    doc: "the database to mine (postgres://…, read-only); default: DATABASE_URL, else the config's",
  },
  size: {
    type: 'string',
    short: 'n',
    value: 'N',
    doc: 'questions wanted (at most --per-topic per public topic)',
    default: 100,
  },
  seed: { type: 'string', value: 'S', doc: 'seed of the PRNG that draws topics and templates', default: 1 },
  out: { type: 'string', short: 'o', value: 'FILE', doc: 'the case file to write', default: 'mined.yml' },
  mode: {
    type: 'string',
    value: 'MODE',
    doc: `template: deterministic templates over title, tags and post; generator: the
configured generator with prompts/mine.md (an offline generator gets an extractive
OFFLINE STAND-IN)`,
    default: 'template',
  },
  'post-grain': {
    type: 'boolean',
    doc: 'questions may be written from replies, which become their golden posts',
  },
  'per-topic': {
    type: 'string',
    value: 'K',
    doc: `up to K questions per topic, each from a different source post (the first post
and replies with enough content words, as --post-grain: K > 1 implies it); quotas stay
proportional to public topics, capped at K per topic`,
    default: DEFAULT_MINE_PER_TOPIC,
  },
  generator: {
    type: 'string',
    value: 'PROVIDER:MODEL',
    doc: "the generator of --mode generator (default: the config's)",
  },
  language: PIPELINE_OPTIONS.language,
  attempts: {
    type: 'string',
    value: 'K',
    doc: 'tries per topic, or per source post with --per-topic K > 1 (first question and redraws), before it is dropped',
    default: DEFAULT_MINE_ATTEMPTS,
  },
  force: { type: 'boolean', doc: 'overwrite --out even when ragaudit mine did not write it' },
  verbose: PIPELINE_OPTIONS.verbose,
  help: PIPELINE_OPTIONS.help,
} as const satisfies OptionSpecs;

const HELP = `ragaudit mine [options]

Writes a question set from the forum's database, read-only: public topics only (the profile's
visibility rule), drawn stratified by category and tag (proportional allocation, seeded PRNG:
the same seed over the same database gives the same file), one question per topic (up to K
with --per-topic K, each from a different post), golden the topic (and with --post-grain or
--per-topic K > 1, the reply a question was written from). Every question may share at most 2
content words with its topic's title: a failing one is redrawn, then the topic (or source post)
is dropped and the next one tried. Goldens whose titles are near-identical to other public
topics' are flagged (mined.ambiguous) and kept. The file (source: mined) loads like any
case file: ragaudit retrieval --cases CURATED.yml --cases mined.yml. See docs/mining.md.

Options:
${optionsHelp(OPTIONS)}

Exit codes: 0 written, 1 a generator call failed after its retries, 2 bad input, config or database.`;

/** The command line as the file header records it: the flags given, never the database URL. */
function commandLine(argv: readonly string[]): string {
  const out: string[] = ['ragaudit', 'mine'];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--db') {
      out.push('--db', '(url)');
      i++;
    } else if (a.startsWith('--db=')) out.push('--db', '(url)');
    else out.push(/^[\w./:@=+-]+$/.test(a) ? a : JSON.stringify(a));
  }
  return out.join(' ');
}

export const mineCommand: Command = {
  name: 'mine',
  options: OPTIONS,
  help: HELP,
  async run(argv, io) {
    const { values } = parseCommand('mine', argv, OPTIONS, { positionals: false });
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    const mode = values.mode ?? 'template';
    if (mode !== 'template' && mode !== 'generator')
      throw new InputError(`--mode: expected template or generator, got '${mode}'`);
    // Only --db and --language are config overrides here: --out names the case file, not output_dir.
    const overrides = pipelineOverrides({
      ...(values.db !== undefined ? { db: values.db } : {}),
      ...(values.language !== undefined ? { language: values.language } : {}),
    });
    if (values.generator !== undefined) {
      const { provider, model } = modelFlag('generator', values.generator, 'extractive');
      const flag = `--generator ${values.generator}`;
      overrides.push(
        { path: ['generator', 'provider'], flag, value: provider },
        { path: ['generator', 'model'], flag, value: model },
      );
    }
    const loaded = loadConfig(values.config ? resolve(io.cwd, values.config) : undefined, io.env, overrides);
    const out = resolve(io.cwd, values.out ?? 'mined.yml');
    const o = await runMine(
      {
        loaded,
        db: values.db,
        size: numberFlag('size', values.size) ?? 100,
        seed: numberFlag('seed', values.seed) ?? 1,
        out,
        mode: mode satisfies MineMode,
        postGrain: Boolean(values['post-grain']),
        perTopic: numberFlag('per-topic', values['per-topic']),
        attempts: numberFlag('attempts', values.attempts),
        force: Boolean(values.force),
        command: commandLine(argv),
        cwd: io.cwd,
        env: io.env,
      },
      cliHooks(io),
    );
    // With more than one question per topic, the table also says from how many topics, and what
    // the quota is and what was dropped (source posts); one question per topic keeps its table.
    const k = o.per_topic;
    const rows = o.categories.map((c) => [
      inert(c.category),
      String(c.topics),
      String(c.quota),
      String(c.written),
      ...(k > 1 ? [String(c.topics_used)] : []),
      String(c.post_grain),
      String(c.dropped_rule),
      String(c.dropped_none),
    ]);
    const total = (f: (c: (typeof o.categories)[number]) => number) =>
      String(o.categories.reduce((n, c) => n + f(c), 0));
    rows.push([
      'all',
      total((c) => c.topics),
      total((c) => c.quota),
      total((c) => c.written),
      ...(k > 1 ? [total((c) => c.topics_used)] : []),
      total((c) => c.post_grain),
      total((c) => c.dropped_rule),
      total((c) => c.dropped_none),
    ]);
    const heads =
      k > 1
        ? [
            'category',
            'public topics',
            `quota (≤${k}/topic)`,
            'written',
            'from topics',
            'post grain',
            'dropped posts (rule)',
            'dropped (none)',
          ]
        : ['category', 'public topics', 'quota', 'written', 'post grain', 'dropped (rule)', 'dropped (none)'];
    io.out(`${textTable(heads, rows)}\n\n`);
    if (k > 1) io.out(`${allocationLine(o).replace(/^strata: /, 'allocation: ')}\n`);
    io.out(`questions: ${inert(o.writer.label)}\n`);
    io.out(`database:  ${inert(o.database)}\n`);
    io.out(
      `written ${o.written} of ${o.asked}${k > 1 ? ` (from ${o.topics_used} topics)` : ''}${o.shortfall ? `: ${o.shortfall}` : ''}\n`,
    );
    io.out(
      `rephrase rule: ${o.failed_rule} of ${o.drawn} questions drawn failed; ${o.redrawn} ${mineUnit(k)} passed on a redraw; ` +
        `${o.dropped_rule} of ${o.tried} ${mineUnit(k)} dropped (${(100 * o.dropped_rule_share).toFixed(1)} %)` +
        `${o.dropped_none ? `; ${o.dropped_none} gave no question at all` : ''}\n`,
    );
    io.out(`ambiguous goldens flagged: ${o.ambiguous} (kept in the file, mined.ambiguous)\n`);
    io.out(`cases: ${displayPath(o.file, io.cwd)}\n`);
    return 0;
  },
};

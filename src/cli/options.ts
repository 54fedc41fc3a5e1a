import { parseArgs } from 'node:util';
import { LANGUAGE_CODES } from '../model/languages/index.js';
import { DEFAULT_ZONE_THRESHOLDS } from '../model/zones.js';
import { providerList, type ProviderKind } from '../providers/catalog.js';
import { parseOrThrow } from './command.js';
import { joinNegativeNumbers } from './flags.js';

/**
 * Every command-line option is declared once, here or beside its command: the declaration is
 * both the node:util parseArgs option and the line of the command's `--help`, so an option
 * cannot be read without being documented, nor documented without being read.
 */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** The name of the value in the help (FILE, N, PROVIDER:MODEL); string options only. */
  value?: string;
  /** What the option does, as the help prints it; lines after the first are continuation lines. */
  doc: string;
  /** A default shown after the description, as ` (default X)`. */
  default?: string | number;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** A kind's provider names for a help line, from the registry; offline stand-ins marked. */
function providerNames(kind: ProviderKind): string {
  return providerList(kind)
    .map((p) => (p.offline ? `${p.name} (OFFLINE STAND-IN)` : p.name))
    .join(', ');
}

/** The help option every command has. */
export const HELP_OPTION = { help: { type: 'boolean', short: 'h', doc: 'this help' } } as const satisfies OptionSpecs;

/** Options shared by the commands that run the pipeline. */
export const PIPELINE_OPTIONS = {
  config: {
    type: 'string',
    short: 'c',
    value: 'FILE',
    doc: 'ragaudit config (YAML); default: the built-in demo (embedded forum, offline stand-ins)',
  },
  db: {
    type: 'string',
    value: 'URL',
    doc: "a real PostgreSQL (postgres://user@host:port/db, a password in PGPASSWORD or the URL); default: DATABASE_URL, else the config's",
  },
  cases: {
    type: 'string',
    multiple: true,
    value: 'PATH',
    doc: "case file or directory (repeatable); default: the config's",
  },
  name: {
    type: 'string',
    value: 'NAME',
    doc: 'run name used in the results file name (a slug: letters, digits, _ . -)',
  },
  out: { type: 'string', value: 'DIR', doc: "results directory (default: the config's output_dir, 'results')" },
  language: {
    type: 'string',
    value: 'LANG',
    doc: `the forum's language: ${LANGUAGE_CODES.join(', ')} (default: the config's, else en; docs/languages.md)`,
  },
  query: {
    type: 'string',
    value: 'MODE',
    doc: "conversation cases: retrieval searches for the final message alone (last) or a question condensed from the history (condensed); default: the config's, else condensed (docs/conversations.md)",
  },
  verbose: { type: 'boolean', short: 'v', doc: 'stack traces on errors' },
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

/** Options of the commands that generate answers (run, probe), after the pipeline's. */
export const GENERATION_OPTIONS = {
  target: {
    type: 'string',
    value: 'URL',
    doc: `ask a deployed bot instead of the generator: POST {question, history} to URL, score its
answer and sources (config target: maps other shapes); discourse:https://forum asks a bot on a
forum by private message (needs --allow-writes; docs/targets.md)`,
  },
  generator: {
    type: 'string',
    value: 'PROVIDER:MODEL',
    doc: `the generator (default offline:extractive); PROVIDER: ${providerNames('chat')}
(what each reads, OPENAI_* and ANTHROPIC_* variables included: docs/providers.md)`,
  },
  reranker: {
    type: 'string',
    value: 'KIND:URL',
    doc: `the cross-encoder (default offline:lexical, no URL); KIND: ${providerNames('reranker')}`,
  },
  'abstain-below': {
    type: 'string',
    value: 'X',
    doc: 'empty-evidence zone below this top-1 logit',
    default: DEFAULT_ZONE_THRESHOLDS.abstain_below,
  },
  'weak-below': {
    type: 'string',
    value: 'X',
    doc: 'weak-evidence zone below this top-1 logit',
    default: DEFAULT_ZONE_THRESHOLDS.weak_below,
  },
  'system-append': {
    type: 'string',
    multiple: true,
    value: 'NAME',
    doc: 'add prompts/clauses/NAME.md to the system prompt (repeatable)',
  },
  concurrency: { type: 'string', value: 'N', doc: 'cases generated at once (default: generator.concurrency, 4)' },
  resume: { type: 'string', value: 'RUN', doc: 'finish an interrupted run (its .ledger.jsonl path or run id)' },
  batch: {
    type: 'boolean',
    doc: `send the generator's and the judge's requests through the provider's batch API
(openai, anthropic: half price, answered within 24 h; config batch:, docs/scale.md)`,
  },
} as const satisfies OptionSpecs;

/** The judge flags, shared by `run`, `probe` and `judge`. */
export const JUDGE_OPTIONS = {
  judge: {
    type: 'string',
    value: 'PROVIDER:MODEL',
    doc: `the judge, separate from the generator; PROVIDER as for --generator
(default offline:heuristic, an OFFLINE STAND-IN, not a model; base_url from judge.base_url)`,
  },
  'no-judge': { type: 'boolean', doc: 'no judge (judge.provider: none)' },
  repeat: {
    type: 'string',
    value: 'K',
    doc: `ask the judge K times per verdict; the first is scored, the
run reports how often the judge disagrees with itself`,
  },
  'judge-repeat': {
    type: 'string',
    value: 'N',
    doc: `the same as --repeat: judge each answer N times (temperature as
configured) and report each figure's flip rate and spread`,
  },
} as const satisfies OptionSpecs;

/** `--dry-run` of run, probe and judge (src/app/plan.ts). */
export const DRY_RUN_OPTION = {
  'dry-run': {
    type: 'boolean',
    doc: `print what the command would send (requests, cached answers, estimated tokens and
cost per component, from the config's prices:) and exit 0; nothing is sent to a generator,
judge, embedder or reranker, and nothing is written (docs/judge.md#dry-run)`,
  },
} as const satisfies OptionSpecs;

/** The column where the pipeline options' descriptions start. */
export const PIPELINE_COLUMN = 22;
/** The column of the generation and judge options (their value names are long). */
export const GENERATION_COLUMN = 35;

/** `  -c, --config FILE` or `      --db URL`: the left part of an option's help line. */
function optionLabel(name: string, o: OptionSpec): string {
  return `${o.short ? `  -${o.short}, ` : '      '}--${name}${o.value ? ` ${o.value}` : ''}`;
}

/**
 * The help lines of a group of options, descriptions starting at `column` (default: two spaces
 * after the longest label); continuation lines of a description start at the same column.
 */
export function optionsHelp(specs: OptionSpecs, column?: number): string {
  const entries = Object.entries(specs);
  const col = column ?? Math.max(...entries.map(([n, o]) => optionLabel(n, o).length)) + 2;
  return entries
    .map(([name, o]) => {
      const label = optionLabel(name, o);
      const doc = o.default === undefined ? o.doc : `${o.doc} (default ${o.default})`;
      const [first, ...rest] = doc.split('\n');
      return [`${label.padEnd(Math.max(col, label.length + 1))}${first}`, ...rest.map((l) => `${' '.repeat(col)}${l}`)]
        .join('\n')
        .replace(/ +$/gm, '');
    })
    .join('\n');
}

/** The parseArgs option (type, short, multiple) of each declared option: its help fields dropped. */
type ParseOptions<S extends OptionSpecs> = {
  [K in keyof S]: Pick<S[K], Extract<keyof S[K], 'type' | 'short' | 'multiple'>>;
};

export function parseOptions<S extends OptionSpecs>(specs: S): ParseOptions<S> {
  const out: Record<string, Pick<OptionSpec, 'type' | 'short' | 'multiple'>> = {};
  for (const [name, o] of Object.entries(specs))
    out[name] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
  return out as ParseOptions<S>;
}

/**
 * Parses argv against the declared options: an unknown flag or a missing value is an
 * InputError naming the command. A negative number after one of `negatives` (string options
 * that take numbers) is read as its value, as people type `--abstain-below -5`.
 */
export function parseCommand<S extends OptionSpecs, P extends boolean>(
  command: string,
  argv: readonly string[],
  specs: S,
  opts: { positionals: P; negatives?: OptionSpecs },
): ReturnType<typeof parseArgs<{ args: string[]; options: ParseOptions<S>; allowPositionals: P; strict: true }>> {
  const options = parseOptions(specs);
  const args = opts.negatives ? joinNegativeNumbers(argv, parseOptions(opts.negatives)) : [...argv];
  return parseOrThrow(
    command,
    () => parseArgs({ args, options, allowPositionals: opts.positionals, strict: true }),
    Object.keys(specs),
  );
}

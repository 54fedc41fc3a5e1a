import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load.js';
import { ConfigSchema, type Config } from '../config/schema.js';
import { ConfigError, InputError } from '../errors.js';
import { judgeMarkdown, judgeRows } from '../reports/judge-digest.js';
import { configFromResults, rejudgeResults } from '../runs/rejudge.js';
import { createJudgeSetup } from '../runs/judge-setup.js';
import type { JudgeSummary } from '../model/summary.js';
import { PROMPTS_DIR } from '../paths.js';
import { retrievalMarkdown } from '../reports/digest.js';
import { textTable } from '../reports/format.js';
import { generationMarkdown } from '../reports/generation-digest.js';
import { collectSecrets } from '../runs/context.js';
import { writeResults } from '../runs/results-file.js';
import { reportBeside } from './report.js';
import { numberFlag, parseOrThrow, type Command } from './command.js';
import { judgeOverrides } from './flags.js';
import { readRunResults } from './results-input.js';
import { checkOutputDir } from './output-paths.js';
import { progressBar } from './progress.js';

/** The judge flags, shared by `run` and `judge`. */
export const JUDGE_OPTIONS = {
  judge: { type: 'string' },
  'no-judge': { type: 'boolean' },
  repeat: { type: 'string' },
} as const;

export const JUDGE_HELP = `      --judge PROVIDER:MODEL       the judge, separate from the generator: openai:MODEL (OpenAI, vLLM,
                                   Ollama: judge.base_url or OPENAI_BASE_URL), anthropic:MODEL,
                                   offline:heuristic (default; an OFFLINE STAND-IN, not a model)
      --no-judge                   no judge (judge.provider: none)
      --repeat K                   ask the judge K times per verdict; the first is scored, the
                                   run reports how often the judge disagrees with itself`;

export interface JudgeArgs {
  judge?: string;
  'no-judge'?: boolean;
  repeat?: string;
}

/** --repeat (default 1). */
export function repeatFlag(v: JudgeArgs): number {
  const k = numberFlag('repeat', v.repeat) ?? 1;
  if (!Number.isInteger(k) || k < 1) throw new InputError(`--repeat: expected a positive integer, got ${v.repeat}`);
  return k;
}

/** Applies --judge / --no-judge to a stored run's config, checked by the config schema; returns --repeat. */
export function applyJudgeFlags(config: Config, v: JudgeArgs): number {
  const overrides = judgeOverrides(v);
  if (overrides.length) {
    const parsed = ConfigSchema.shape.judge.safeParse({
      ...config.judge,
      ...Object.fromEntries(overrides.map((o) => [o.path[1]!, o.value])),
    });
    if (!parsed.success)
      throw new ConfigError(
        `invalid judge flags`,
        parsed.error.issues.map((i) => `${overrides[0]!.flag}: judge.${i.path.join('.')}: ${i.message}`),
      );
    config.judge = parsed.data;
  }
  return repeatFlag(v);
}

const OPTIONS = {
  ...JUDGE_OPTIONS,
  config: { type: 'string', short: 'c' },
  out: { type: 'string' },
  concurrency: { type: 'string' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

const HELP = `ragaudit judge RESULTS.json [options]

Re-judges the answers stored in a run's results file: faithfulness (claims labelled against the
evidence block the generator saw, re-rendered from the stored sources), stance and correct
abstention, citation relevance, and agreement with the cases' human labels. The generator is
never built or called, and the database is not opened. The judge settings come from the config
stored in the results file unless --judge or --config gives others. Writes a new results file
(kind 'judge', naming the file it re-judged in 'rejudged_from') and its .md digest.

Options:
${JUDGE_HELP}
  -c, --config FILE                take the judge: section (model, prices, base_url…) from this config
      --out DIR                    results directory (default: the stored config's output_dir)
      --concurrency N              cases judged at once (default judge.concurrency, 4)
  -v, --verbose                    stack traces on errors
  -h, --help                       this help

Exit codes: 0 ok, 1 some cases ended in a judge error, 2 bad input or config.`;

export const judgeCommand: Command = {
  name: 'judge',
  summary: 're-judge the answers of a stored run (no generator call) and report judge agreement',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrThrow('judge', () =>
      parseArgs({ args: argv, options: OPTIONS, allowPositionals: true }),
    );
    if (values.help) {
      io.out(`${HELP}\n`);
      return 0;
    }
    if (positionals.length !== 1)
      throw new InputError(`judge: expected one RESULTS.json, got ${positionals.length} (see 'ragaudit judge --help')`);
    const file = resolve(io.cwd, positionals[0]!);
    const stored = readRunResults(file, 'judge');
    if (stored.kind === 'retrieval') throw new InputError(`${file}: a retrieval results file has no answers to judge`);
    const config = configFromResults(stored, file);
    if (values.config) config.judge = loadConfig(resolve(io.cwd, values.config), io.env).config.judge;
    const repeat = applyJudgeFlags(config, values);
    if (values.out) config.output_dir = values.out;
    checkOutputDir(resolve(io.cwd, config.output_dir), values.out ? '--out' : 'output_dir');
    const concurrency = numberFlag('concurrency', values.concurrency);
    if (concurrency !== undefined) {
      if (!Number.isInteger(concurrency) || concurrency < 1)
        throw new InputError(`--concurrency: expected a positive integer, got ${values.concurrency}`);
      config.judge.concurrency = concurrency;
    }
    const setup = createJudgeSetup(config.judge, {
      env: io.env,
      promptsDir: PROMPTS_DIR,
      cacheDir: resolve(io.cwd, config.cache_dir),
      cta: config.evidence.cta,
      repeat,
    });
    if (!setup)
      throw new InputError('judge: the judge is disabled (judge.provider: none); give --judge PROVIDER:MODEL');
    io.err(`judge: ${setup.component.label}\n`);
    const bar = progressBar(io, 'judge');
    const result = await rejudgeResults(stored, {
      source: file,
      config,
      judge: setup,
      concurrency: config.judge.concurrency,
      onProgress: bar.update,
    });
    bar.stop();
    const md = `${retrievalMarkdown(result)}\nRe-judged from \`${file}\`.\n\n${generationMarkdown(result)}\n${judgeMarkdown(result)}`;
    const files = writeResults(resolve(io.cwd, config.output_dir), result, md, {
      secrets: collectSecrets(config, io.env),
    });
    io.out(`${textTable(['judge', 'value'], judgeRows(result.summary.judge as JudgeSummary))}\n\n`);
    const errors = result.cases.filter((c) => c.status === 'error' && c.error?.stage === 'judge').length;
    const failedVerdicts = (result.summary.judge as JudgeSummary).judge_errors;
    io.out(
      `re-judged ${file}\ncases ${result.cases.length} · judge errors (infrastructure) ${errors} · verdicts not given ${failedVerdicts}\nresults: ${files.json}\ndigest:  ${files.md}\n`,
    );
    reportBeside(files.json, result, io);
    // As the help says: any verdict the judge could not give fails the command.
    return errors > 0 || failedVerdicts > 0 ? 1 : 0;
  },
};

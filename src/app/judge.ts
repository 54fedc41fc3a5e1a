import { resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { InputError } from '../errors.js';
import { languagePromptsDir } from '../evidence/block.js';
import { PROMPTS_DIR } from '../paths.js';
import { retrievalMarkdown } from '../reports/digest.js';
import { generationMarkdown } from '../reports/generation-digest.js';
import { judgeMarkdown } from '../reports/judge-digest.js';
import { collectSecrets } from '../wiring/context.js';
import { createJudgeSetup, type JudgeSetupOptions } from '../wiring/judge-setup.js';
import { rejudgeResults } from '../runs/rejudge.js';
import { writeResults, type StoredRun } from '../store/results-file.js';
import type { AppEnv, AppHooks } from './hooks.js';
import { reportBeside } from './report.js';

export interface RejudgeInputs extends AppEnv {
  /** The stored run and its file (resolved). */
  stored: StoredRun;
  file: string;
  /** The stored run's config with the judge flags applied and checked. */
  config: Config;
  repeat: number;
}

export interface RejudgeOutcome {
  result: StoredRun;
  files: { json: string; md: string };
  report: string;
}

/** The judge of `judge RESULTS` (and of its dry run): the config's, with the stored run's language and CTA. */
export function rejudgeSetupOptions(inputs: Omit<RejudgeInputs, 'stored' | 'file'>): JudgeSetupOptions {
  const { config } = inputs;
  return {
    env: inputs.env,
    promptsDir: languagePromptsDir(PROMPTS_DIR, config.language),
    cacheDir: resolve(inputs.cwd, config.cache_dir),
    cta: config.evidence.cta,
    ...(config.language ? { language: config.language } : {}),
    repeat: inputs.repeat,
  };
}

/**
 * `judge`: re-judges the answers of a stored run (no generator, no database) and writes a new
 * results file, its digest and the HTML report.
 */
export async function rejudge(inputs: RejudgeInputs, hooks: AppHooks): Promise<RejudgeOutcome> {
  const { config, stored, file } = inputs;
  const setup = createJudgeSetup(config.judge, rejudgeSetupOptions(inputs));
  if (!setup) throw new InputError('judge: the judge is disabled (judge.provider: none); give --judge PROVIDER:MODEL');
  hooks.event({ kind: 'judge', label: setup.component.label });
  const bar = hooks.progress('judge');
  const result = await rejudgeResults(stored, {
    source: file,
    config,
    judge: setup,
    concurrency: config.judge.concurrency,
    onProgress: bar.update,
  });
  bar.stop();
  const md = `${retrievalMarkdown(result)}\nRe-judged from \`${file}\`.\n\n${generationMarkdown(result)}\n${judgeMarkdown(result)}`;
  const files = writeResults(resolve(inputs.cwd, config.output_dir), result, md, {
    secrets: collectSecrets(config, inputs.env),
  });
  return { result, files, report: reportBeside(files.json, result) };
}

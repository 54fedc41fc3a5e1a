/**
 * The judge's drift canary (src/judge/canary.ts) as the commands use it: judged again by the
 * run's judge before a gated run (`run --gate FILE --canary FILE`, config `judge.canary`), and
 * made from a judged results file (`judge RESULTS --make-canary FILE`).
 */
import { resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { InputError } from '../errors.js';
import { languagePromptsDir } from '../evidence/block.js';
import { writeArtifact } from '../io/artifacts.js';
import { canaryItem, checkCanary, readCanary, type CanaryHeader } from '../judge/canary.js';
import { judgeScoreNames } from '../judge/case-scores.js';
import type { CanarySummary } from '../model/summary.js';
import { PROMPTS_DIR } from '../paths.js';
import { createJudgeSetup } from '../wiring/judge-setup.js';
import { preflightAll } from '../wiring/run-preflight.js';
import type { StoredRun } from '../store/results-file.js';
import type { AppEnv } from './hooks.js';

export interface CanaryInputs extends AppEnv {
  /** The run's config, its judge flags applied. */
  config: Config;
  /** The canary file (resolved) and how messages name it. */
  file: string;
  shown: string;
  /** Share of verdicts that may move (default 0). */
  tolerance: number;
}

/**
 * Judges the canary's answers again with the run's judge, asked past the response cache (a
 * cached verdict would hide a changed model behind an unchanged name), and compares.
 */
export async function judgeCanary(inputs: CanaryInputs): Promise<CanarySummary> {
  const { config } = inputs;
  const canary = readCanary(inputs.file);
  const language = canary.header.language ?? config.language;
  const setup = createJudgeSetup(config.judge, {
    env: inputs.env,
    promptsDir: languagePromptsDir(PROMPTS_DIR, language),
    // Never read: the wrap below asks past the cache.
    cacheDir: resolve(inputs.cwd, config.cache_dir),
    cta: canary.header.cta,
    ...(language ? { language } : {}),
    wrap: (model) => model,
  });
  if (!setup) throw new InputError('--canary: the run has no judge (judge.provider: none) to check');
  await preflightAll([{ role: 'judge', id: setup.component.id, preflight: setup.preflight }]);
  return checkCanary(canary, setup.judges[0]!, { tolerance: inputs.tolerance, file: inputs.shown });
}

/** Whether a record's judge verdicts can stand in a canary: answered, judged, none failed. */
const judgedCleanly = (r: StoredRun['cases'][number]) =>
  r.status === 'ok' &&
  r.answer !== undefined &&
  r.scores.some((s) => judgeScoreNames().includes(s.name)) &&
  !r.scores.some((s) => s.name === 'judge_error');

/**
 * Writes a canary of `size` answers from a judged results file, evenly spread over its judged
 * cases (so both kinds and every zone tend to be in it), with the verdicts they got there.
 */
export function makeCanary(stored: StoredRun, source: string, out: string, size: number): { file: string; n: number } {
  const judge = stored.summary.judge;
  if (!judge) throw new InputError(`${source}: the results file holds no judge verdicts to make a canary of`);
  const judged = [...(stored.caseStore?.records() ?? stored.cases)].filter(judgedCleanly);
  if (!judged.length) throw new InputError(`${source}: no case was judged without a judge error`);
  const k = Math.min(size, judged.length);
  const picked = Array.from(
    { length: k },
    (_, i) => judged[k === 1 ? 0 : Math.round((i * (judged.length - 1)) / (k - 1))]!,
  );
  const header: CanaryHeader = {
    ragaudit_canary: 1,
    judge: judge.judge,
    offline: judge.offline,
    prompt_versions: judge.prompt_versions,
    ...(stored.config.language ? { language: stored.config.language as CanaryHeader['language'] } : {}),
    cta: String((stored.config.evidence as { cta?: unknown } | undefined)?.cta ?? ''),
    note: `${
      judge.offline
        ? `verdicts of the OFFLINE heuristic judge (${judge.judge}), a stand-in, not a language model: this canary checks that stand-in's behaviour only`
        : `verdicts of ${judge.judge}`
    }; made from run ${stored.name} (${stored.created_at})`,
  };
  const lines = [header, ...picked.map(canaryItem)].map((l) => JSON.stringify(l));
  return { file: writeArtifact(out, `${lines.join('\n')}\n`), n: picked.length };
}

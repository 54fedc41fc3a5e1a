/**
 * Judge failures count: a verdict the judge could not give (an answer that is not the verdict
 * JSON, twice) fails `run` and `judge` with exit 1, and every judged figure of summary.judge
 * carries the failed verdicts behind it. Before, with 45 of about 58 verdicts failed a run
 * exited 0, and so did `judge`, despite its help text.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JudgeSummary } from '../src/model/summary.js';
import {
  CASES,
  chatServer,
  removeWorkDirs,
  resultsOf,
  remoteConfig,
  runCli,
  startAll,
  verdictServer,
  workDir,
} from './fixtures/audit/harness.js';
import { chatCompletion, reply } from './servers/index.js';

/** The in-domain case whose stance verdict the judge never gives. */
const BROKEN = CASES.find((c) => c.kind === 'in_domain')!;
const SUBSET = [BROKEN, ...CASES.filter((c) => c !== BROKEN).slice(0, 2)];

/** Valid verdicts, but never a stance verdict for BROKEN. */
const judgeServer = verdictServer((system, schema) =>
  schema === 'stance_verdict' && system.includes(BROKEN.question)
    ? reply(chatCompletion('I would rather not say.', { model: 'judge-model' }))
    : undefined,
);

const config = (cases: string) =>
  remoteConfig({
    name: 'judge-errors',
    cases,
    judge: '{ provider: openai, model: judge-model, base_url: "${JUDGE_URL}", retries: 0 }',
  });

describe('judge errors count', { timeout: 120_000 }, () => {
  let close: () => Promise<void>;
  let cwd: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    const started = await startAll(chatServer(), judgeServer);
    close = started.close;
    cwd = workDir('judge-errors');
    writeFileSync(join(cwd, 'cases.yml'), stringify(SUBSET));
    writeFileSync(join(cwd, 'ragaudit.yml'), config(join(cwd, 'cases.yml')));
    env = {
      GEN_URL: `${started.urls[0]}/v1`,
      JUDGE_URL: `${started.urls[1]}/v1`,
      OPENAI_API_KEY: 'sk-test-judge-errors-0123',
    };
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('run exits 1 and the summary states the failed verdicts beside the figures they would have entered', async () => {
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report'], { cwd, env });
    const result = resultsOf(run);
    // Every case finished (no infrastructure error), yet one verdict was not given.
    expect(result.cases.map((c) => c.status)).toEqual(['ok', 'ok', 'ok']);
    expect(run.code, run.out).toBe(1);
    expect(run.out).toContain('judge errors: 1 verdict could not be given');
    const j = result.summary.judge as JudgeSummary;
    expect(j.judge_errors).toBe(1);
    // The stance verdict of an in-domain case: the figures read from the stance carry it.
    expect(j.correct_abstention.judge_errors).toBe(1);
    expect(j.wrong_abstentions.judge_errors).toBe(1);
    expect(j.abstention_matrix.in_domain.judge_errors).toBe(1);
    expect(j.abstention_matrix.off_topic.judge_errors).toBe(0);
    expect(j.offtopic_hallucination_rate.judge_errors).toBe(0);
    expect(j.faithfulness.judge_errors).toBe(0);
    expect(j.relevant_citation_rate.judge_errors).toBe(0);

    const judged = await runCli(['judge', result.file], { cwd, env });
    expect(judged.code, judged.out + judged.err).toBe(1);
    expect(judged.out).toContain('verdicts not given 1');
  });
});

/**
 * The demo cases' `human:` labels judged the demo's offline answers and name them by digest: the
 * offline demo compares every one of them with the judge; a run whose generator is another model
 * (a local OpenAI-compatible server) gives other answers, so its summary, console and digest
 * count the labels as not compared and show no accuracy and no kappa from them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/paths.js';
import type { CaseRecord, RunResult } from '../src/model/results.js';
import { answerDigest } from '../src/judge/label-file.js';
import { agreementReport } from '../src/judge/rater-agreement.js';
import { agreementText } from '../src/labelling/agreement-report.js';
import { runCli } from './helpers/cli.js';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';
import { CHAT, openAIServer } from './servers/openai-server.js';

const CORE = join(PACKAGE_ROOT, 'cases', 'demo', 'questions-core.yml');
/** The labelled cases of questions-core.yml, counted by hand (`human:` blocks in the file). */
const LABELLED = 18;

function results(dir: string): { result: RunResult; md: string } {
  const json = readdirSync(dir).find((f) => f.endsWith('.json'))!;
  return {
    result: JSON.parse(readFileSync(join(dir, json), 'utf8')) as RunResult,
    md: readFileSync(join(dir, json.replace(/\.json$/, '.md')), 'utf8'),
  };
}

describe("agreement --case-yaml counts only the blocks of this run's answers", () => {
  const record = (id: string, answer: string, human?: CaseRecord['human']): CaseRecord => ({
    id,
    question: `q ${id}`,
    kind: 'in_domain',
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: [],
    expected_post_ids: [],
    expected_content: [],
    status: 'ok',
    retrieval: {},
    answer,
    scores: [{ name: 'judge_stance', value: null, details: { stance: 'answered', asserts_unsupported_facts: false } }],
    ...(human ? { human } : {}),
  });

  it("pairs the bound block with the judge, lists the others with the digest of this run's answer", () => {
    const bound = record('bound', 'A.');
    bound.human = { answer_digest: answerDigest(bound), stance: 'answered' };
    const other = record('other', 'B.', { answer_digest: '0123456789abcdef', stance: 'hedged' });
    const none = record('none', 'C.', { stance: 'abstained' });
    const report = agreementReport([bound, other, none], [], { judge: 'offline:heuristic', caseYaml: true });
    // One item compared: the bound case, stance answered on both sides.
    const stance = report.pairs.find((p) => p.field === 'stance')!;
    expect(stance).toMatchObject({ a: 'case-yaml', b: 'judge', n: 1, accuracy: 1 });
    expect(report.matched.case_yaml).toEqual({
      other_answer: 1,
      no_digest: 1,
      unbound: [
        { case_id: 'other', answer_digest: answerDigest(other) },
        { case_id: 'none', answer_digest: answerDigest(none) },
      ],
    });
    expect(agreementText(report)).toContain(`  none: ${answerDigest(none)}`);
  });
});

describe("the demo's human labels belong to the demo's answers", { timeout: 240_000 }, () => {
  const server = openAIServer({
    models: ['other-model'],
    chat: () => 'Brush suede with a crepe brush and a little renovator [[1]]. To go further, ask the community.',
  });
  let url = '';
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ url, close } = await server.start());
  });
  afterAll(async () => {
    await close();
    removeWorkDirs();
  });

  it('the offline demo compares every labelled case', async () => {
    const dir = workDir('labels-demo');
    const run = await runCli(dir, ['run', '--cases', CORE, '--out', 'out', '--no-report']);
    expect(run.code, run.err).toBe(0);
    const { result } = results(join(dir, 'out'));
    const j = result.summary.judge!;
    expect(j.agreement_not_compared).toBeUndefined();
    // Every labelled case carries a stance label, and the judge gives a stance to every answer.
    expect(j.agreement!.stance!.n + j.agreement!.stance!.excluded).toBe(LABELLED);
    expect(run.out).toMatch(/agreement with humans: stance +accuracy/);
  });

  it('a run with another generator compares none of them and says so', async () => {
    const dir = workDir('labels-other');
    const run = await runCli(
      dir,
      ['run', '--cases', CORE, '--generator', 'openai:other-model', '--out', 'out', '--no-report'],
      { OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-test-labels-0123456789' },
    );
    expect(run.code, run.err).toBe(0);
    expect(server.count(CHAT)).toBeGreaterThan(0);
    const { result, md } = results(join(dir, 'out'));
    const j = result.summary.judge!;
    expect(j.agreement).toBeUndefined();
    expect(j.agreement_not_compared).toEqual({ other_answer: LABELLED, no_digest: 0 });
    const line = `${LABELLED} case(s) whose human labels were not compared: ${LABELLED} judged another answer`;
    for (const text of [run.out.replace(/\s+/g, ' '), md]) expect(text).toContain(line.replace(/\s+/g, ' '));
    expect(run.out).not.toMatch(/agreement with humans|Cohen's kappa/);
    expect(md).not.toMatch(/Agreement with human labels|Cohen's kappa/);
  });
});

/**
 * Judge trust bound to its calibration: a gate whose file names judge_calibration refuses (exit 2,
 * reasons printed) a faithfulness rule without a calibration, passes it with a fresh one, and
 * refuses it again once a judge prompt changes (edited on disk, or a run judged with another
 * version). A calibration needs 30 labels per class unless forced, and a gate asks as many.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAgreement } from '../src/labelling/agreement.js';
import { compareAndWrite } from '../src/app/compare.js';
import type { CliIO } from '../src/cli/command.js';
import { main } from '../src/cli/main.js';
import { InputError } from '../src/errors.js';
import { judgeVersusPeople } from '../src/judge/rater-agreement.js';
import { answerDigest, appendLabel } from '../src/judge/label-file.js';
import { judgePromptVersions } from '../src/judge/llm-judge.js';
import { RunResultSchema, type RunResult } from '../src/model/results.js';
import { findScore } from '../src/model/scores.js';
import { PACKAGE_ROOT, PROMPTS_DIR } from '../src/paths.js';
import { loadReleaseGate } from '../src/reports/release-gate.js';

const REF = join(PACKAGE_ROOT, 'results', 'reference');
const JUDGE = 'openai:gpt-test';

/** A reference run as if judged by a language model with the given prompts. */
function asJudged(file: string, promptsDir: string): RunResult {
  const r = RunResultSchema.parse(JSON.parse(readFileSync(join(REF, file), 'utf8')));
  r.summary.judge = {
    ...r.summary.judge!,
    judge: JUDGE,
    offline: false,
    prompt_versions: judgePromptVersions(promptsDir),
  };
  return r;
}

/** A work dir with the two runs, a copy of the prompts, a label dir and a gate file. */
function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-calib-'));
  const prompts = join(dir, 'prompts');
  cpSync(PROMPTS_DIR, prompts, { recursive: true });
  const base = asJudged('20261204-233647-demo.json', prompts);
  const cand = asJudged('20261204-233650-demo-weak1.json', prompts);
  writeFileSync(join(dir, 'base.json'), JSON.stringify(base));
  writeFileSync(join(dir, 'cand.json'), JSON.stringify(cand));
  writeFileSync(
    join(dir, 'gate.yml'),
    // The demo's judge says "not faithful" twice in 99 answers: no labelling of it reaches 30 per
    // class, so these calibrations are forced and the gate asks 1 per class (the floors below are
    // what is tested here; the per-class minimum has its own test).
    '# judge figures rest on the calibration\nfaithfulness: {min: 0.1}\njudge_calibration: {file: calibration.json, min_kappa: 0.6, min_n: 20, min_n_per_class: 1}\n',
  );
  return { dir, prompts, base, cand };
}

/** Labels of the candidate's answers by one labeller: the judge's faithful verdict, one flipped. */
function label(dir: string, run: RunResult, count: number): void {
  const judged = run.cases.filter(
    (c) => c.status === 'ok' && typeof findScore(c.scores, 'faithfulness')?.value === 'number',
  );
  judged.slice(0, count).forEach((c, i) => {
    const yes = findScore(c.scores, 'faithfulness')!.value === 1;
    appendLabel(join(dir, 'labels'), {
      v: 1,
      queue: 'answer',
      labeller: 'ann',
      at: '2026-12-03T12:00:00.000Z',
      case_id: c.id,
      results: 'test',
      answer_digest: answerDigest(c),
      faithful: (i === 0 ? !yes : yes) ? 'yes' : 'no',
    });
  });
}

function compare(w: ReturnType<typeof setup>) {
  const gate = loadReleaseGate(join(w.dir, 'gate.yml'));
  return compareAndWrite({
    files: [join(w.dir, 'base.json'), join(w.dir, 'cand.json')],
    labels: ['base', 'cand'],
    baseline: 0,
    seed: 1,
    gate: { ...gate, file: join(w.dir, 'gate.yml') },
    minShare: 1,
    allowPartial: false,
    outDir: join(w.dir, 'out'),
    inputs: [],
    cwd: w.dir,
    promptsDir: w.prompts,
  });
}

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as Error).message;
  }
  throw new Error('expected the gate to be refused');
}

describe('a gate on judge figures bound to the judge calibration', () => {
  it('is refused without a calibration, passes with a fresh one, and is refused after a prompt changes', () => {
    const w = setup();
    expect(refusal(() => compare(w))).toMatch(/cand: faithfulness rest on judge openai:gpt-test: no judge calibration/);

    label(w.dir, w.cand, 30);
    // Calibrated on the candidate (the baseline's answers differ): both runs share judge and prompts.
    const o = runAgreement({
      results: join(w.dir, 'cand.json'),
      labels: join(w.dir, 'labels'),
      caseYaml: false,
      calibration: join(w.dir, 'calibration.json'),
      cwd: w.dir,
      promptsDir: w.prompts,
      force: true,
    });
    const p = judgeVersusPeople(o.report, 'faithful')!;
    expect(p.n).toBe(30);
    expect(p.disagreements).toHaveLength(1);
    expect(o.calibration!.fields.faithful!.kappa).toBe(p.kappa);
    expect(p.kappa!).toBeGreaterThan(0.6);
    expect(o.calibration!.fields.faithful!.prompt).toMatchObject({ name: 'judge-faithfulness', version: '2' });
    expect(compare(w).verdict!.passed).toBe(true);

    // The faithfulness prompt edited on disk (no version bump): the calibration is stale.
    const pf = join(w.prompts, 'judge-faithfulness.md');
    writeFileSync(pf, `${readFileSync(pf, 'utf8')}\nBe strict.\n`);
    expect(refusal(() => compare(w))).toMatch(/judge-faithfulness changed since the calibration .*stale/);
  });

  it('is refused for a run judged with another prompt version, and below the floors', () => {
    const w = setup();
    label(w.dir, w.cand, 12);
    runAgreement({
      results: join(w.dir, 'cand.json'),
      labels: join(w.dir, 'labels'),
      caseYaml: false,
      calibration: join(w.dir, 'calibration.json'),
      cwd: w.dir,
      promptsDir: w.prompts,
      force: true,
    });
    const msg = refusal(() => compare(w));
    expect(msg).toMatch(/'faithful' calibrated on n=12, the gate asks at least 20/);
    const bumped = {
      ...w.cand,
      summary: {
        ...w.cand.summary,
        judge: {
          ...w.cand.summary.judge!,
          prompt_versions: { ...w.cand.summary.judge!.prompt_versions, 'judge-faithfulness': '3' },
        },
      },
    };
    writeFileSync(join(w.dir, 'cand.json'), JSON.stringify(bumped));
    expect(refusal(() => compare(w))).toMatch(
      /calibrated with judge-faithfulness version 2, the run was judged with version 3/,
    );
  });

  it('a gate file without judge_calibration is refused on an LLM judge, judged on the offline stand-in; a bad block is a file:line error', () => {
    const w = setup();
    writeFileSync(join(w.dir, 'gate.yml'), 'faithfulness: {min: 0.1}\n');
    expect(refusal(() => compare(w))).toMatch(/faithfulness rest on an LLM judge that .*gate.yml names no calibration/);
    // The reference runs as written: judged by the offline stand-in, which no calibration could be about.
    for (const [name, file] of [
      ['base.json', '20261204-233647-demo.json'],
      ['cand.json', '20261204-233650-demo-weak1.json'],
    ] as const)
      writeFileSync(join(w.dir, name), readFileSync(join(REF, file), 'utf8'));
    expect(compare(w).verdict!.passed).toBe(true);
    // A gate on figures no judge gives needs no calibration.
    writeFileSync(join(w.dir, 'cand.json'), JSON.stringify(w.cand));
    writeFileSync(join(w.dir, 'gate.yml'), 'citation_validity: {min: 0.1}\n');
    expect(compare(w).verdict).toBeDefined();
    writeFileSync(join(w.dir, 'gate.yml'), 'faithfulness: {min: 0.1}\njudge_calibration: {file: c.json, min_n: 5}\n');
    expect(() => loadReleaseGate(join(w.dir, 'gate.yml'))).toThrow(/judge_calibration needs a floor/);
  });

  it('the agreement command prints the figures and writes markdown, JSON and the calibration', async () => {
    const w = setup();
    label(w.dir, w.cand, 25);
    let out = '';
    const io: CliIO = { out: (t) => void (out += t), err: () => {}, isTTY: false, cwd: w.dir, env: {} };
    const code = await main(
      ['agreement', 'cand.json', '--labels', 'labels', '--out', 'out', '--calibration', 'calibration.json', '--force'],
      io,
    );
    expect(code).toBe(0);
    expect(out).toMatch(/^faithful +ann × judge +25 /m);
    expect(out).toMatch(/faithful, ann × judge: 1 disagreement/);
    const md = /written: (out\/.*-agreement\.md)/.exec(out)![1]!;
    expect(readFileSync(join(w.dir, md), 'utf8')).toMatch(/## Disagreements/);
    const json = JSON.parse(readFileSync(join(w.dir, md.replace(/\.md$/, '.json')), 'utf8')) as { kind: string };
    expect(json.kind).toBe('agreement');
    expect(JSON.parse(readFileSync(join(w.dir, 'calibration.json'), 'utf8'))).toMatchObject({
      kind: 'judge-calibration',
      judge: JUDGE,
      provider: 'openai',
      model: 'gpt-test',
      fields: { faithful: { rater: 'ann', n: 25 } },
    });
  });

  it('is refused below 30 labels per class unless forced, and a forced one fails a gate that asks 30 per class', async () => {
    const w = setup();
    // Four answers the judge calls faithful: three labelled yes, one no → people: yes 3, no 1.
    const yes = w.cand.cases.filter((c) => c.status === 'ok' && findScore(c.scores, 'faithfulness')?.value === 1);
    yes.slice(0, 4).forEach((c, i) =>
      appendLabel(join(w.dir, 'labels'), {
        v: 1,
        queue: 'answer',
        labeller: 'ann',
        at: '2026-12-03T12:00:00.000Z',
        case_id: c.id,
        results: 'test',
        answer_digest: answerDigest(c),
        faithful: i === 3 ? 'no' : 'yes',
      }),
    );
    let out = '';
    let err = '';
    const io: CliIO = { out: (t) => void (out += t), err: (t) => void (err += t), isTTY: false, cwd: w.dir, env: {} };
    const args = ['agreement', 'cand.json', '--labels', 'labels', '--calibration', 'calibration.json'];
    expect(await main(args, io)).toBe(2);
    expect(err).toContain('too few labels to calibrate the judge: at least 30 per class are needed');
    expect(err).toContain(`'faithful' class "no" has n=1, below 30`);
    expect(err).toContain(`'faithful' class "yes" has n=3, below 30`);
    expect(existsSync(join(w.dir, 'calibration.json'))).toBe(false);

    err = '';
    expect(await main([...args, '--force'], io)).toBe(0);
    expect(err).toContain(`warning: calibration written with --force: 'faithful' class "no" has n=1, below 30`);
    const written = JSON.parse(readFileSync(join(w.dir, 'calibration.json'), 'utf8')) as Record<string, unknown>;
    expect(written).toMatchObject({
      min_n_per_class: 30,
      forced_below_min: [`'faithful' class "no" has n=1, below 30`, `'faithful' class "yes" has n=3, below 30`],
    });
    // A smaller minimum, stated: 3 labels per class still leaves "no" short.
    err = '';
    expect(await main([...args, '--min-n-per-class', '3'], io)).toBe(2);
    expect(err).toContain(`'faithful' class "no" has n=1, below 3`);
    expect(err).not.toContain('class "yes"');

    // The gate's own per-class minimum, 30 by default, refuses the forced calibration.
    writeFileSync(
      join(w.dir, 'gate.yml'),
      'faithfulness: {min: 0.1}\njudge_calibration: {file: calibration.json, min_per_class: 0, min_n: 4}\n',
    );
    expect(await main([...args, '--force'], io)).toBe(0);
    expect(refusal(() => compare(w))).toMatch(
      /'faithful' class "no" has n=1, below 30: the gate asks at least 30 per class \(min_n_per_class\)/,
    );
  });

  it('the CLI exits 2 and prints the reason', async () => {
    const w = setup();
    let out = '';
    let err = '';
    const io: CliIO = { out: (t) => void (out += t), err: (t) => void (err += t), isTTY: false, cwd: w.dir, env: {} };
    const code = await main(['compare', 'base.json', 'cand.json', '--gate', 'gate.yml', '--out', 'out'], io);
    expect({ code, out }).toEqual({ code: 2, out: '' });
    expect(err).toMatch(
      /judge is not calibrated[\s\S]*cand: faithfulness rest on judge openai:gpt-test: no judge calibration/,
    );
  });
});

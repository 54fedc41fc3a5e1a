/**
 * The judge's drift canary (src/judge/canary.ts): the shipped demo canary judged again by the
 * offline judge moves no verdict; a stored verdict changed by hand is found moved and blocks a
 * gated run (exit 1) with the reason, recorded in the summary; a tolerance lets a share of
 * moved verdicts pass; `judge RESULTS --make-canary` writes a canary of the stored verdicts; a bad
 * canary file is exit 2 naming file:line and the field.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canaryText, canaryVerdicts, checkCanary, readCanary } from '../src/judge/canary.js';
import { HeuristicJudge } from '../src/judge/heuristic-judge.js';
import { InputError } from '../src/errors.js';
import { CASES, removeWorkDirs, resultsOf, runCli, workDir, type CliRun } from './fixtures/audit/harness.js';

const DEMO_CANARY = resolve(import.meta.dirname, '../cases/demo/judge-canary.jsonl');
const lines = () => readFileSync(DEMO_CANARY, 'utf8').trimEnd().split('\n');

/** The demo canary with the stance of its item `id` replaced. */
function withStance(dir: string, id: string, stance: string): string {
  const out = lines().map((l, i) => {
    if (i === 0) return l;
    const item = JSON.parse(l) as { id: string; verdicts: Record<string, unknown> };
    if (item.id === id) item.verdicts.stance = stance;
    return JSON.stringify(item);
  });
  const file = join(dir, `moved-${id}.jsonl`);
  writeFileSync(file, `${out.join('\n')}\n`);
  return file;
}

/** Verdicts the demo canary stores: one per criterion an item names. */
const storedVerdicts = () =>
  lines()
    .slice(1)
    .reduce((a, l) => a + Object.keys((JSON.parse(l) as { verdicts: object }).verdicts).length, 0);

describe('the drift canary, judged again', () => {
  const dir = workDir('canary-unit');
  const judge = new HeuristicJudge();
  afterAll(() => removeWorkDirs());

  it('ships a demo canary labelled as the offline judge, whose verdicts the offline judge gives again', async () => {
    const canary = readCanary(DEMO_CANARY);
    expect(canary.header).toMatchObject({ judge: 'offline:heuristic', offline: true });
    expect(canary.header.note).toContain('OFFLINE heuristic judge');
    expect(canary.items).toHaveLength(12);
    const c = await checkCanary(canary, judge, { tolerance: 0, file: 'demo' });
    expect(c).toMatchObject({ n: storedVerdicts(), moved: 0, tolerance: 0, passed: true, items: [] });
  });

  it('finds a changed verdict moved, blocks at tolerance 0 and names it', async () => {
    const file = withStance(dir, 'loake-vs-cj-price-gap', 'hedged');
    const c = await checkCanary(readCanary(file), judge, { tolerance: 0, file: 'moved.jsonl' });
    expect(c.moved).toBe(1);
    expect(c.passed).toBe(false);
    expect(c.items).toEqual([{ id: 'loake-vs-cj-price-gap', criterion: 'stance', stored: 'hedged', now: 'answered' }]);
    expect(canaryText(c)).toBe(
      `judge model or prompt changed behaviour: 1 of ${c.n} canary verdicts moved (tolerance 0.0 %): ` +
        'loake-vs-cj-price-gap stance hedged → answered',
    );
  });

  it('lets a share of moved verdicts up to the tolerance pass', async () => {
    const canary = readCanary(withStance(dir, 'loake-vs-cj-price-gap', 'hedged'));
    const n = storedVerdicts();
    // 1 of n moved: passes when 1 ≤ tolerance × n.
    expect((await checkCanary(canary, judge, { tolerance: 1 / n, file: 'x' })).passed).toBe(true);
    expect((await checkCanary(canary, judge, { tolerance: 0.5 / n, file: 'x' })).passed).toBe(false);
  });

  it('refuses a bad canary file naming file:line and the field', () => {
    const bad = join(dir, 'bad.jsonl');
    const [header, first] = lines();
    const item = JSON.parse(first!) as Record<string, unknown>;
    writeFileSync(bad, `${header}\n${JSON.stringify({ ...item, verdicts: { stance: true } })}\nnot json\n`);
    try {
      readCanary(bad);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      const problems = (e as InputError).problems;
      expect(problems[0]).toMatch(new RegExp(`^${bad.replace(/[.]/g, '\\.')}:2: an item: verdicts\\.stance: `));
      expect(problems[1]).toBe(`${bad}:3: not a JSON line`);
    }
  });
});

describe('run --gate --canary, judge --make-canary', { timeout: 180_000 }, () => {
  let cwd = '';
  let pass: CliRun;
  let moved: CliRun;
  let made: CliRun;
  beforeAll(async () => {
    cwd = workDir('canary-cli');
    const subset = CASES.filter((c) => ['loake-vs-cj-price-gap', 'off-gazpacho-recipe'].includes(c.id));
    writeFileSync(join(cwd, 'cases.yml'), stringify(subset));
    writeFileSync(join(cwd, 'gate.yml'), 'errors: {max: 0}\n');
    const run = (canary: string, name: string) =>
      runCli(['run', '--cases', 'cases.yml', '--name', name, '--no-report', '--gate', 'gate.yml', '--canary', canary], {
        cwd,
        env: {},
      });
    pass = await run(DEMO_CANARY, 'pass');
    moved = await run(withStance(cwd, 'off-index-fund', 'answered'), 'moved');
    made = await runCli(
      ['judge', resultsOf(pass).file, '--make-canary', join(cwd, 'made.jsonl'), '--canary-size', '1'],
      { cwd, env: {} },
    );
  });
  afterAll(() => removeWorkDirs());

  it('passes the gate when no canary verdict moved, recording the canary in the summary', () => {
    expect(pass.code, pass.out + pass.err).toBe(0);
    expect(pass.out).toMatch(/^judge canary .*judge-canary\.jsonl: 0 of \d+ canary verdicts moved/m);
    expect(pass.out).toMatch(/pass {2}\S+: judge_canary: 0 of \d+ canary verdicts moved \(tolerance 0\.0 %\)/);
    expect(resultsOf(pass).summary.canary).toMatchObject({ moved: 0, tolerance: 0, passed: true, items: [] });
  });

  it('fails the gate (exit 1) with the reason when a verdict moved', () => {
    expect(moved.code).toBe(1);
    const reason = 'judge model or prompt changed behaviour: 1 of';
    expect(moved.out).toContain(`judge_canary: ${reason}`);
    expect(moved.out).toContain('off-index-fund stance answered → abstained');
    const summary = resultsOf(moved).summary.canary!;
    expect(summary).toMatchObject({ n: storedVerdicts(), moved: 1, passed: false, judge: 'offline:heuristic' });
    expect(summary.items).toEqual([
      { id: 'off-index-fund', criterion: 'stance', stored: 'answered', now: 'abstained' },
    ]);
  });

  it('writes a canary of the stored verdicts, labelled with the judge that gave them', () => {
    expect(made.code, made.err).toBe(0);
    const canary = readCanary(join(cwd, 'made.jsonl'));
    expect(canary.header).toMatchObject({ judge: 'offline:heuristic', offline: true });
    expect(canary.items).toHaveLength(1);
    const record = resultsOf(pass).cases.find((c) => c.id === canary.items[0]!.id)!;
    expect(canary.items[0]!.verdicts).toEqual(canaryVerdicts(record.scores));
    expect(canary.items[0]!.answer).toBe(record.answer);
  });

  it('exit 2 for --canary without --gate', async () => {
    const r = await runCli(['run', '--cases', 'cases.yml', '--canary', DEMO_CANARY], { cwd, env: {} });
    expect(r.code).toBe(2);
    expect(r.err).toContain('--canary gates the run: it needs --gate FILE');
  });
});

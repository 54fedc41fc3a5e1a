/**
 * The gate on one run (`ragaudit gate`, src/reports/release-gate.ts evaluateRunGate): absolute
 * rules and pass_rate judged on the run alone; relative rules fail, saying they need a baseline,
 * and are judged once one is given; `min_lower_ci` reads the figure's 95 % interval (Wilson for a
 * share, the bootstrap for a mean); a rule on a figure the run did not measure fails; the CLI
 * exits 0 / 1 / 2 and writes JUnit with a testcase per rule and per case.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/errors.js';
import { RunResultSchema, type CaseRecord, type RunResult } from '../src/model/results.js';
import { evaluateReleaseGate, evaluateRunGate, loadReleaseGate } from '../src/reports/release-gate.js';
import { compareRuns } from '../src/reports/compare.js';
import { summariseGeneration } from '../src/summary/generation-summary.js';
import { summariseRetrieval } from '../src/summary/retrieval-summary.js';
import { FIGURE_BOOTSTRAP } from '../src/scoring/figure-interval.js';
import { bootstrapMeanCI } from '../src/scoring/statistics.js';
import { verdictConsole } from '../src/reports/verdict-digest.js';
import { summariseVerdicts, verdictSettings, withVerdict } from '../src/scoring/verdict.js';
import { runCli } from './helpers/cli.js';

const SETTINGS = verdictSettings({});

/** A run of in-domain cases: hit@5 and MRR@10 per case, and whether its one citation is valid. */
function run(name: string, cases: { id: string; hit: number; mrr?: number; valid?: boolean }[], verdicts = true) {
  const records: CaseRecord[] = cases.map((c) =>
    withVerdict(
      {
        id: c.id,
        question: `q ${c.id}`,
        kind: 'in_domain',
        difficulty: 'easy',
        tags: [],
        expected_topic_ids: [1],
        expected_post_ids: [],
        expected_content: [],
        status: 'ok',
        retrieval: { rerank: { items: [], metrics: { hit_at_5: c.hit, mrr_at_10: c.mrr ?? c.hit }, latency_ms: 1 } },
        zone: 'normal',
        answer: 'a [[1]]',
        citations: [
          c.valid === false ? { n: 1, valid: false, reason: 'the post is not public' } : { n: 1, valid: true },
        ],
        scores: [
          { name: 'citation_validity', value: c.valid === false ? 0 : 1 },
          { name: 'stance_pattern', value: null, details: { stance: 'answered' } },
          { name: 'correct_abstention_pattern', value: 1 },
        ],
      },
      SETTINGS,
    ),
  );
  const kept = verdicts ? records : records.map(({ verdict: _v, ...r }) => r);
  return RunResultSchema.parse({
    schema_version: 1,
    tool: { name: 'ragaudit', version: '0' },
    kind: 'run',
    name,
    note: '',
    created_at: '2026-01-01T00:00:00Z',
    config_source: 't',
    config: {},
    config_digest: 'd',
    database: 'db',
    components: {},
    warnings: [],
    nodes: [{ name: 'rerank', kind: 'rerank', grain: 'post' }],
    summary: {
      retrieval: summariseRetrieval(kept, ['rerank']),
      generation: summariseGeneration(kept),
      ...(verdicts ? { verdicts: summariseVerdicts(kept, SETTINGS) } : {}),
    },
    cases: kept,
  });
}

const dir = mkdtempSync(join(tmpdir(), 'ragaudit-gate1-'));
const file = (name: string, text: string) => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const loaded = (label: string, result: RunResult) => ({ label, file: `${label}.json`, result });

const ids = ['a', 'b', 'c', 'd', 'e'];
// Every case hits; case e cites a source that is no longer public, so 4 of 5 verdicts pass.
const good = run(
  'good',
  ids.map((id, i) => ({ id, hit: 1, mrr: i % 2 ? 0.5 : 1, valid: id !== 'e' })),
);
const base = run(
  'base',
  ids.map((id) => ({ id, hit: 1 })),
);

describe('evaluateRunGate: one run, no baseline', () => {
  const rules = loadReleaseGate(
    file(
      'one.yml',
      'citation_validity: {min: 1}\npass_rate: {min: 0.8, min_lower_ci: 0.5}\nhit_at_5: {min_lower_ci: 0.5, max_drop: 0.02}\nmax_regressions: 0\n',
    ),
  );

  it('judges absolute rules on the run, and fails each relative rule saying it needs a baseline', () => {
    const g = evaluateRunGate(rules, loaded('good', good), 'rerank');
    expect(g.passed).toBe(false);
    expect(g.checks.map((c) => [c.message, c.passed])).toEqual([
      // Wilson 5/5: 1 / (1 + 1.95996² / 5) = 0.566.
      ['good: hit_at_5.min_lower_ci: lower 95 % bound 0.566 (Wilson, 5/5; value 1), limit 0.500', true],
      ['good: hit_at_5.max_drop: needs a baseline to compare with (--baseline FILE), limit 0.020', false],
      // 4 of 5 markers valid: 0.8 < 1.
      ['good: citation_validity.min: value 0.800, limit 1', false],
      ['good: pass_rate.min: value 0.800, limit 0.800', true],
      // Wilson 4/5: (0.8 + z²/10 − z·√(0.032 + z²/100)) / (1 + z²/5) = 0.376.
      ['good: pass_rate.min_lower_ci: lower 95 % bound 0.376 (Wilson, 4/5; value 0.800), limit 0.500', false],
      ['good: max_regressions: needs a baseline to compare with (--baseline FILE), limit 0', false],
    ]);
    expect(g.checks[4]!.value).toBeCloseTo(0.375535, 5);
  });

  it('with a baseline, the relative rules are judged against it', () => {
    const g = evaluateReleaseGate(rules, compareRuns([loaded('base', base), loaded('good', good)]), [
      loaded('good', good),
    ]);
    const byRule = Object.fromEntries(g.checks.map((c) => [c.rule, c.message]));
    expect(byRule['hit_at_5.max_drop']).toBe('good: hit_at_5.max_drop: drop 0 (1 → 1), limit 0.020');
    // b and d fell to MRR@10 0.5 (base: 1); e's citation is now invalid.
    expect(byRule['max_regressions']).toBe('good: max_regressions: 3 regressed questions (b, d, e), limit 0');
  });

  it('min_lower_ci on a mean is the bootstrap over its per-case values', () => {
    const g = evaluateRunGate(
      loadReleaseGate(file('mrr.yml', 'mrr_at_10: {min_lower_ci: 0.5}\n')),
      loaded('good', good),
      'rerank',
    );
    const ci = bootstrapMeanCI([1, 0.5, 1, 0.5, 1], FIGURE_BOOTSTRAP);
    expect(g.checks[0]).toMatchObject({ value: ci.low, interval: { method: 'bootstrap', high: ci.high } });
    expect(ci.low).toBeLessThan(0.8);
    expect(g.checks[0]!.message).toContain('(bootstrap over 5 cases; value 0.800)');
  });

  it('a rule on pass_rate of a run without verdicts fails: not measured', () => {
    const old = run('old', [{ id: 'a', hit: 1 }], false);
    const g = evaluateRunGate(loadReleaseGate(file('pr.yml', 'pass_rate: {min: 0.9}\n')), loaded('old', old), 'rerank');
    expect(g.checks.map((c) => [c.message, c.passed])).toEqual([
      ['old: pass_rate.min: not measured in old, limit 0.900', false],
    ]);
  });

  it('min_lower_ci on a count or a lower-is-better figure is refused at load, file:line named', () => {
    const f = file('ci.yml', 'hit_at_5: {min: 0.5}\nofftopic_hallucinations:\n  min_lower_ci: 0\nerrors: {max: 0}\n');
    try {
      loadReleaseGate(f);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).problems).toEqual([
        `${f}:3: offtopic_hallucinations.min_lower_ci: offtopic_hallucinations has no 95 % interval (a count, or lower is better): use max`,
      ]);
    }
  });
});

describe('the verdicts on the console', () => {
  it('name the first failing cases, then how many more and where they are', () => {
    const three = run(
      'three',
      ['a', 'b', 'c', 'd'].map((id) => ({ id, hit: 1, valid: id === 'a' })),
    );
    expect(verdictConsole(three, 'results/three.md', 1)).toBe(
      [
        'verdicts: 1 of 4 cases passed · pass rate 25.0 %',
        'failed checks: valid_citations 3',
        'FAIL b: valid_citations: 1 invalid: [[1]] the post is not public',
        'and 2 more (see results/three.md)',
        '',
      ].join('\n'),
    );
    expect(verdictConsole(three, 'x', 2)).toContain('and 1 more (see x)\n');
  });
});

describe('ragaudit gate RESULTS.json --rules FILE', () => {
  const goodFile = file('good.json', JSON.stringify(good));
  const baseFile = file('base.json', JSON.stringify(base));
  const cli = (args: string[]) => runCli(dir, args);

  it('exit 0 when every rule passes, printing the verdicts; 1 when one fails, naming it', async () => {
    const pass = await cli(['gate', goodFile, '--rules', file('p.yml', 'pass_rate: {min: 0.8}\n')]);
    expect(pass.code, pass.err).toBe(0);
    expect(pass.out).toContain('verdicts: 4 of 5 cases passed · pass rate 80.0 %\nfailed checks: valid_citations 1\n');
    expect(pass.out).toContain('FAIL e: valid_citations: 1 invalid: [[1]] the post is not public\n');
    expect(pass.out).toContain('Gate p.yml: PASSED (0 of 1 rules failed)');
    const fail = await cli(['gate', goodFile, '--rules', file('f.yml', 'citation_validity: {min: 1}\n')]);
    expect(fail.code).toBe(1);
    expect(fail.out).toContain('FAIL  good: citation_validity.min: value 0.800, limit 1');
  });

  it('exit 2 without --rules, on a bad rules file, on a second results file', async () => {
    expect((await cli(['gate', goodFile])).err).toContain('--rules FILE is required');
    const bad = await cli(['gate', goodFile, '--rules', file('b.yml', 'pass_rat: {min: 1}\n')]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('b.yml:1: pass_rat: unknown metric');
    expect((await cli(['gate', goodFile, baseFile, '--rules', file('p2.yml', 'errors: {max: 0}\n')])).code).toBe(2);
  });

  it('--baseline judges the relative rules and prints the pairing', async () => {
    const rules = file('rel.yml', 'hit_at_5: {max_drop: 0}\n');
    const alone = await cli(['gate', goodFile, '--rules', rules]);
    expect(alone.code).toBe(1);
    expect(alone.out).toContain('FAIL  good: hit_at_5.max_drop: needs a baseline to compare with (--baseline FILE)');
    const paired = await cli(['gate', goodFile, '--rules', rules, '--baseline', baseFile]);
    expect(paired.code, paired.out).toBe(0);
    expect(paired.out).toContain('pairing (by case id): good vs base: 5 of 5 baseline cases paired by id (100.0 %)');
  });

  it('JUnit: a testcase per rule and per case; a failed verdict is a failure only when the gate fails', async () => {
    const junit = join(dir, 'gate.xml');
    const count = (xml: string, tag: string) => (xml.match(new RegExp(`<${tag} `, 'g')) ?? []).length;
    expect(
      (await cli(['gate', goodFile, '--rules', file('j1.yml', 'errors: {max: 0}\n'), '--junit', junit])).code,
    ).toBe(0);
    let xml = readFileSync(junit, 'utf8');
    expect(xml).toContain('<testsuites name="ragaudit gate" tests="6" failures="0" errors="0">');
    expect(xml).toContain('<testsuite name="case verdicts" tests="5" failures="0"');
    expect(xml).toContain(
      '<system-out>e failed valid_citations\nvalid_citations: 1 invalid: [[1]] the post is not public',
    );
    expect(
      (await cli(['gate', goodFile, '--rules', file('j2.yml', 'pass_rate: {min: 1}\n'), '--junit', junit])).code,
    ).toBe(1);
    xml = readFileSync(junit, 'utf8');
    expect(count(xml, 'testcase')).toBe(6);
    expect(xml).toContain('<testsuites name="ragaudit gate" tests="6" failures="2" errors="0">');
    expect(xml).toContain('<failure message="e failed valid_citations" type="gate">');
    expect(xml).not.toContain('regressed questions');
  });
});

/**
 * The release gate: the YAML is validated with file:line problems (unknown metrics are errors);
 * rules pass and fail with the rule, value and limit named; the CLI exits 0 / 1 / 2; and the
 * JUnit XML is well-formed (parsed by Chromium's XML parser), escaped, and counts right.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/errors.js';
import { compareRuns } from '../src/reports/compare.js';
import { runsTable } from '../src/reports/compare-format.js';
import { evaluateReleaseGate, loadReleaseGate } from '../src/reports/release-gate.js';
import { junitXml, xmlText } from '../src/reports/junit.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { CHROMIUM_PATH } from './helpers/chromium.js';
import { runCli } from './helpers/cli.js';
import { summariseGeneration } from '../src/summary/generation-summary.js';
import { RunResultSchema, type CaseRecord, type RunResult } from '../src/model/results.js';
import { summariseRetrieval } from '../src/summary/retrieval-summary.js';

/** A run of in-domain cases with the given hit@5 and citation validity (1 valid marker or 1 invalid). */
function run(name: string, cases: { id: string; hit: number; valid?: boolean }[]): RunResult {
  const records: CaseRecord[] = cases.map((c) => ({
    id: c.id,
    question: `q ${c.id}`,
    kind: 'in_domain',
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: [1],
    expected_post_ids: [],
    expected_content: [],
    status: 'ok',
    retrieval: { rerank: { items: [], metrics: { hit_at_5: c.hit, mrr_at_10: c.hit }, latency_ms: 1 } },
    zone: 'normal',
    answer: 'a [[1]]',
    citations: [{ n: 1, valid: c.valid ?? true }],
    scores: [
      { name: 'citation_validity', value: c.valid === false ? 0 : 1 },
      { name: 'correct_abstention_pattern', value: 1 },
    ],
  }));
  return RunResultSchema.parse({
    schema_version: 1,
    tool: { name: 'ragaudit', version: '0' },
    kind: 'run',
    name,
    note: '',
    created_at: '2026-01-01T00:00:00Z',
    config_source: 't',
    config: { zones: { weak_below: 0 } },
    config_digest: 'd',
    database: 'db',
    components: {},
    warnings: [],
    nodes: [{ name: 'rerank', kind: 'rerank', grain: 'post' }],
    summary: { retrieval: summariseRetrieval(records, ['rerank']), generation: summariseGeneration(records) },
    cases: records,
  });
}

const dir = mkdtempSync(join(tmpdir(), 'ragaudit-gate-'));
const gateFile = (name: string, text: string) => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const problemsOf = (f: () => unknown): string[] => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as InputError).problems.length ? (e as InputError).problems : [(e as Error).message];
  }
  throw new Error('expected an InputError');
};

const ids = ['a', 'b', 'c', 'd', 'e'];
const base = run(
  'base',
  ids.map((id) => ({ id, hit: 1 })),
);
const same = run(
  'same',
  ids.map((id) => ({ id, hit: 1 })),
);
// Two questions lose their hit, one answer cites a source that is not shown.
const worse = run(
  'worse',
  ids.map((id, i) => ({ id, hit: i < 2 ? 0 : 1, valid: i !== 4 })),
);

describe('gate file validation', () => {
  it('accepts the shipped example', () => {
    const g = loadReleaseGate(join(PACKAGE_ROOT, 'cases', 'demo', 'gate.yml'));
    expect(g.metrics.hit_at_5).toEqual({ max_drop: 0.02 });
    expect(g.max_regressions).toBe(10);
  });

  it('names file:line for unknown metrics, unknown keys and bad values', () => {
    const f = gateFile(
      'bad.yml',
      'hit_at_5: {max_drop: 0.02}\nhit5: {min: 1}\ncitation_validity:\n  min: high\nfaithfulness: {minimum: 0.8}\nmax_regressions: -1\nmrr_at_10: {}\n',
    );
    expect(problemsOf(() => loadReleaseGate(f))).toEqual([
      `${f}:2: hit5: unknown metric; did you mean 'hit_at_5'? (known: hit_at_5, post_hit_at_5, mrr_at_10, content_mrr_at_10, citation_validity, faithfulness, correct_abstention, offtopic_hallucinations, wrong_abstentions, judge_errors, errors, forbidden_hits, forbidden, pass_rate, fully_faithful_ppi, fully_faithful_ppi_low, correct_abstention_ppi, correct_abstention_ppi_low, relevant_citation_ppi, relevant_citation_ppi_low, nugget_recall, nugget_recall_vital, nugget_recall_weighted, max_regressions)`,
      `${f}:4: citation_validity.min: Invalid input: expected number, received string`,
      `${f}:5: faithfulness: unknown key 'minimum'`,
      `${f}:6: max_regressions: Too small: expected number to be >=0`,
      `${f}:7: mrr_at_10: a rule needs at least one of min, max, min_lower_ci, max_drop, max_increase`,
    ]);
  });

  it('refuses an empty file and invalid YAML', () => {
    expect(problemsOf(() => loadReleaseGate(gateFile('empty.yml', '# nothing\n')))).toEqual([
      expect.stringContaining('has no rules'),
    ]);
    expect(problemsOf(() => loadReleaseGate(gateFile('syntax.yml', 'hit_at_5: {max_drop: 0.02\n')))[0]).toMatch(
      /syntax\.yml:\d+: /,
    );
  });
});

describe('gate verdicts', () => {
  const rules = loadReleaseGate(
    gateFile('rules.yml', 'hit_at_5: {max_drop: 0.02}\ncitation_validity: {min: 1.0}\nmax_regressions: 1\n'),
  );

  it('pass on an identical run', () => {
    const g = evaluateReleaseGate(
      rules,
      compareRuns([
        { label: 'base', file: '', result: base },
        { label: 'same', file: '', result: same },
      ]),
    );
    expect(g.passed).toBe(true);
    expect(g.checks.map((c) => [c.rule, c.passed])).toEqual([
      ['hit_at_5.max_drop', true],
      ['citation_validity.min', true],
      ['max_regressions', true],
    ]);
  });

  it('fail on a degraded run, naming rule, value and limit', () => {
    const g = evaluateReleaseGate(
      rules,
      compareRuns([
        { label: 'base', file: '', result: base },
        { label: 'worse', file: '', result: worse },
      ]),
    );
    expect(g.passed).toBe(false);
    expect(g.checks.map((c) => c.message)).toEqual([
      'worse: hit_at_5.max_drop: drop 0.400 (1 → 0.600), limit 0.020',
      'worse: citation_validity.min: value 0.800, limit 1',
      'worse: max_regressions: 3 regressed questions (a, b, e), limit 1',
    ]);
    expect(g.checks.every((c) => !c.passed)).toBe(true);
  });

  it('fail a rule on a figure the run does not measure (no judge: no faithfulness)', () => {
    const g = evaluateReleaseGate(
      loadReleaseGate(gateFile('faith.yml', 'faithfulness: {min: 0.8}\n')),
      compareRuns([{ label: 'base', file: '', result: base }]),
    );
    expect(g.checks).toMatchObject([
      { rule: 'faithfulness.min', passed: false, message: 'base: faithfulness.min: not measured in base, limit 0.800' },
    ]);
  });

  it('says post hit@5 does not apply on a topic-grain node (n/a), rather than scoring it 0 or "not measured"', () => {
    const topic = RunResultSchema.parse({ ...base, nodes: [{ name: 'rerank', kind: 'rerank', grain: 'topic' }] });
    const cmp = compareRuns([{ label: 'base', file: '', result: topic }]);
    expect(cmp.rows[0]!.post_hit_applies).toBe(false);
    expect(cmp.rows[0]!.post_hit_at_5).toEqual({ mean: null, n: 0 });
    const g = evaluateReleaseGate(loadReleaseGate(gateFile('posthit.yml', 'post_hit_at_5: {min: 0.5}\n')), cmp);
    expect(g.checks).toMatchObject([
      {
        rule: 'post_hit_at_5.min',
        passed: false,
        message:
          'base: post_hit_at_5.min: not applicable: node rerank is topic-grain (pick a post-grain node with --node), limit 0.500',
      },
    ]);
    expect(runsTable(cmp.rows).rows[0]![5]).toBe('n/a');
  });
});

/** Runs in Chromium (the test's TypeScript has no DOM types): parses XML, returns its shape. */
const PARSE_JUNIT = `(text) => {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length) return { error: doc.documentElement.textContent };
  const suites = [...doc.querySelectorAll('testsuite')].map((s) => ({
    name: s.getAttribute('name'),
    tests: Number(s.getAttribute('tests')),
    failures: Number(s.getAttribute('failures')),
    cases: [...s.querySelectorAll('testcase')].map((c) => c.getAttribute('classname') + ' ' + c.getAttribute('name') + (c.querySelector('failure') ? ' FAIL' : '')),
  }));
  const root = doc.documentElement;
  return { root: root.nodeName, tests: Number(root.getAttribute('tests')), failures: Number(root.getAttribute('failures')), suites };
}`;

describe('ragaudit compare --gate --junit', () => {
  const files = Object.fromEntries(
    [base, same, worse].map((r) => [r.name, gateFile(`${r.name}.json`, JSON.stringify(r))]),
  );
  const rules = gateFile('cli.yml', 'hit_at_5: {max_drop: 0.02}\ncitation_validity: {min: 1.0}\nmax_regressions: 1\n');
  const cli = (args: string[]) => runCli(dir, args);

  it('exits 0 when every rule passes, 1 when one fails, 2 on a bad gate file', async () => {
    expect((await cli(['compare', files.base!, files.same!, '--gate', rules, '--out', 'o'])).code).toBe(0);
    const failed = await cli(['compare', files.base!, files.worse!, '--gate', rules, '--out', 'o']);
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('FAIL  worse: citation_validity.min: value 0.800, limit 1');
    const bad = await cli([
      'compare',
      files.base!,
      files.same!,
      '--gate',
      gateFile('x.yml', 'hit_at_six: {min: 1}\n'),
      '--out',
      'o',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('x.yml:1: hit_at_six: unknown metric');
  });

  it('writes well-formed JUnit XML: a testcase per rule and run and per regressed question, failures counted', async () => {
    const junit = join(dir, 'junit.xml');
    expect(
      (await cli(['compare', files.base!, files.same!, files.worse!, '--gate', rules, '--out', 'o', '--junit', junit]))
        .code,
    ).toBe(1);
    const xml = readFileSync(junit, 'utf8');
    const browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage();
      const parsed = await page.evaluate(`(${PARSE_JUNIT})(${JSON.stringify(xml)})`);
      expect(parsed).toEqual({
        root: 'testsuites',
        tests: 9,
        failures: 6,
        suites: [
          {
            name: 'gate rules',
            tests: 6,
            failures: 3,
            cases: [
              'ragaudit.gate.same hit_at_5.max_drop',
              'ragaudit.gate.same citation_validity.min',
              'ragaudit.gate.same max_regressions',
              'ragaudit.gate.worse hit_at_5.max_drop FAIL',
              'ragaudit.gate.worse citation_validity.min FAIL',
              'ragaudit.gate.worse max_regressions FAIL',
            ],
          },
          {
            name: 'regressed questions',
            tests: 3,
            failures: 3,
            cases: [
              'ragaudit.regressions.worse a FAIL',
              'ragaudit.regressions.worse b FAIL',
              'ragaudit.regressions.worse e FAIL',
            ],
          },
        ],
      });
    } finally {
      await browser.close();
    }
  });

  it('escapes markup and drops characters XML cannot carry', () => {
    expect(xmlText('a<b>&"c\'\u0001d\uD800')).toBe('a&lt;b&gt;&amp;&quot;c&apos;\uFFFDd\uFFFD');
    const evil = run('evil', [{ id: 'x<y>&"\u0007', hit: 0 }]);
    const clean = run('clean', [{ id: 'x<y>&"\u0007', hit: 1 }]);
    const cmp = compareRuns([
      { label: 'clean', file: '', result: clean },
      { label: 'evil', file: '', result: evil },
    ]);
    const xml = junitXml(cmp, evaluateReleaseGate(loadReleaseGate(gateFile('r.yml', 'max_regressions: 0\n')), cmp));
    expect(xml).toContain('name="x&lt;y&gt;&amp;&quot;\uFFFD"');
    expect(xml).not.toMatch(/<y>/);
  });
});

describe('a gate that would mean nothing is refused (exit 2), the pairing is printed', () => {
  const files = Object.fromEntries([base, same].map((r) => [r.name, gateFile(`p-${r.name}.json`, JSON.stringify(r))]));
  // Shares 0 case ids with base; and a run of 3 of base's 5 cases.
  const other = gateFile(
    'p-other.json',
    JSON.stringify(
      run(
        'other',
        ['v', 'w', 'x'].map((id) => ({ id, hit: 1 })),
      ),
    ),
  );
  const subset = gateFile(
    'p-subset.json',
    JSON.stringify(
      run(
        'subset',
        ['a', 'b', 'c'].map((id) => ({ id, hit: 1 })),
      ),
    ),
  );
  const rules = gateFile('p-rules.yml', 'hit_at_5: {max_drop: 0.02}\n');
  const cli = (args: string[]) => runCli(dir, args);

  it('one file (the baseline gated against itself) or the same file twice: exit 2', async () => {
    const one = await cli(['compare', files.base!, '--gate', rules, '--out', 'p']);
    expect(one.code).toBe(2);
    expect(one.err).toContain('a gate needs two or more distinct results files');
    const twice = await cli(['compare', files.base!, files.base!, '--gate', rules, '--out', 'p']);
    expect(twice.code).toBe(2);
    expect(twice.err).toContain('got the same file twice');
  });

  it('two runs sharing no case: exit 2, even with --allow-partial', async () => {
    for (const extra of [[], ['--allow-partial']]) {
      const r = await cli(['compare', files.base!, other, '--gate', rules, '--out', 'p', ...extra]);
      expect(r.code).toBe(2);
      expect(r.err).toContain('p-other shares no case id with the baseline');
      expect(r.err).toContain(
        'p-other vs p-base: 0 of 5 baseline cases paired by id (0.0 %), 5 only in p-base, 3 only in p-other',
      );
    }
  });

  it('a subset: exit 2 by default, gated on the overlap with --allow-partial or a lower --min-overlap', async () => {
    const refused = await cli(['compare', files.base!, subset, '--gate', rules, '--out', 'p']);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(
      'p-subset pairs 3 of 5 baseline cases: below the required share 100.0 % (--min-overlap); pass --allow-partial',
    );
    const partial = await cli(['compare', files.base!, subset, '--gate', rules, '--out', 'p', '--allow-partial']);
    expect(partial.code).toBe(0);
    expect(partial.out).toContain(
      'pairing (by case id):\n  p-subset vs p-base: 3 of 5 baseline cases paired by id (60.0 %), 2 only in p-base, 0 only in p-subset',
    );
    expect(
      (await cli(['compare', files.base!, subset, '--gate', rules, '--out', 'p', '--min-overlap', '0.6'])).code,
    ).toBe(0);
    expect(
      (await cli(['compare', files.base!, subset, '--gate', rules, '--out', 'p', '--min-overlap', '0.61'])).code,
    ).toBe(2);
  });

  it('a full pairing passes as before and says so', async () => {
    const r = await cli(['compare', files.base!, files.same!, '--gate', rules, '--out', 'p']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('p-same vs p-base: 5 of 5 baseline cases paired by id (100.0 %)');
  });
});

describe('compare outputs never clobber inputs', () => {
  const a = gateFile('c-base.json', JSON.stringify(base));
  const b = gateFile('c-same.json', JSON.stringify(same));
  const rules = gateFile('c-rules.yml', 'hit_at_5: {max_drop: 0.02}\n');
  const cli = (args: string[]) => runCli(dir, args);

  it('--junit naming an input results file or the gate file: exit 2, the file unchanged', async () => {
    for (const target of [b, rules, a]) {
      const before = readFileSync(target, 'utf8');
      const r = await cli(['compare', a, b, '--gate', rules, '--out', 'c', '--junit', target]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`--junit: ${target} is an input of this command`);
      expect(readFileSync(target, 'utf8')).toBe(before);
    }
  });

  it('--out or --junit on a kernel file system or a non-directory: exit 2 at once, the path named', async () => {
    const r1 = await cli(['compare', a, b, '--out', '/proc/ragaudit-test/out']);
    expect(r1.code).toBe(2);
    expect(r1.err).toContain('--out: /proc/ragaudit-test/out: cannot write under /proc');
    const r2 = await cli(['compare', a, b, '--junit', '/proc/ragaudit-test.xml', '--out', 'c']);
    expect(r2.code).toBe(2);
    expect(r2.err).toContain('--junit: /proc/ragaudit-test.xml');
    const r3 = await cli(['compare', a, b, '--out', join(a, 'sub')]);
    expect(r3.code).toBe(2);
    expect(r3.err).toContain(`${a} is not a directory`);
    const r4 = await cli(['compare', a, b, '--junit', dir, '--out', 'c']);
    expect(r4.code).toBe(2);
    expect(r4.err).toContain(`--junit: ${dir} is not a regular file`);
  });
});

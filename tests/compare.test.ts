/**
 * compare on hand-made runs (validated with RunResultSchema): the statistics wiring against
 * values computed by hand (McNemar b01 = 0, b10 = 5 → p = 0.0625; a constant difference gives a
 * degenerate interval), determinism, configuration differences as dotted paths, per-question
 * changes named, cases in one run only, optional judge figures, and the CLI's exit codes.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { configDiff, flatten } from '../src/reports/compare-config.js';
import { compareRuns, type LoadedRun } from '../src/reports/compare.js';
import { comparisonMarkdown, comparisonText } from '../src/reports/compare-format.js';
import { summariseGeneration } from '../src/summary/generation-summary.js';
import { RunResultSchema, type CaseRecord, type RunResult } from '../src/model/results.js';
import { summariseRetrieval } from '../src/summary/retrieval-summary.js';
import { summariseJudge } from '../src/summary/judge-summary.js';
import type { RunSummary } from '../src/model/summary.js';
import { mcnemarExact, pairedBootstrapCI } from '../src/scoring/statistics.js';

interface Spec {
  id: string;
  kind?: string;
  hit?: number;
  mrr?: number;
  zone?: 'empty' | 'weak' | 'normal';
  correct?: number;
  faith?: number | null;
  status?: 'ok' | 'error';
}

const CONFIG = {
  name: 'x',
  zones: { abstain_below: -4, weak_below: 0 },
  retrieval: {
    channels: [
      { name: 'posts', title_gate: false },
      { name: 'keyword', title_gate: false },
    ],
  },
  output_dir: 'results',
};

/** A run whose every case is described by a spec; the summary is computed as the runner does. */
function makeRun(
  name: string,
  specs: Spec[],
  opts: { config?: Record<string, unknown>; judge?: boolean; kind?: 'run' | 'retrieval' } = {},
): RunResult {
  const kind = opts.kind ?? 'run';
  const cases: CaseRecord[] = specs.map((s) => ({
    id: s.id,
    question: `question ${s.id}?`,
    kind: s.kind ?? 'in_domain',
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: [1],
    expected_post_ids: [],
    expected_content: [],
    status: s.status ?? 'ok',
    retrieval: {
      rerank: {
        items: [{ post_id: 10, topic_id: s.hit === 0 ? 2 : 1, post_number: 1, score: 1 }],
        metrics: { hit_at_5: s.hit ?? 1, mrr_at_10: s.mrr ?? s.hit ?? 1, post_hit_at_5: null, content_mrr_at_10: null },
        latency_ms: 1,
      },
    },
    ...(kind === 'run'
      ? {
          zone: s.zone ?? 'normal',
          top1_score: 1,
          answer: 'An answer [[1]].',
          citations: [{ n: 1, valid: true }],
          scores: [
            { name: 'citation_validity' as const, value: 1 },
            { name: 'stance_pattern' as const, value: null, details: { stance: 'answered' } },
            { name: 'correct_abstention_pattern' as const, value: s.correct ?? 1 },
            ...(opts.judge
              ? [
                  { name: 'faithfulness' as const, value: s.faith ?? 1 },
                  { name: 'correct_abstention' as const, value: s.correct ?? 1 },
                ]
              : []),
          ],
        }
      : { scores: [] }),
  }));
  const summary: RunSummary = { retrieval: summariseRetrieval(cases, ['rerank']) };
  if (kind === 'run') summary.generation = summariseGeneration(cases);
  if (opts.judge) {
    const faith = cases.map((c) => c.scores.find((s) => s.name === 'faithfulness')!.value!);
    summary.judge = {
      ...summariseJudge(cases, { judge: { id: 'offline:heuristic', offline: true, promptVersions: {} } }),
      faithfulness: { mean: faith.reduce((a, b) => a + b, 0) / faith.length, n: faith.length, judge_errors: 0 },
      correct_abstention: {
        ...(summary.generation?.correct_abstention_pattern ?? { mean: null, n: 0 }),
        judge_errors: 0,
      },
      judge_errors: 0,
    };
  }
  return RunResultSchema.parse({
    schema_version: 1,
    tool: { name: 'ragaudit', version: '0.0.0' },
    kind,
    name,
    note: `note of ${name}`,
    created_at: '2026-01-01T00:00:00.000Z',
    config_source: 'test',
    config: { ...CONFIG, name, ...opts.config },
    config_digest: name,
    database: 'test db',
    components: {},
    warnings: [],
    nodes: [
      { name: 'posts', kind: 'semantic', grain: 'post' },
      { name: 'rerank', kind: 'rerank', grain: 'post' },
    ],
    summary,
    cases,
  });
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `q${i + 1}`);
const loaded = (...runs: RunResult[]): LoadedRun[] =>
  runs.map((r) => ({ label: r.name, file: `${r.name}.json`, result: r }));

describe('statistics wiring, checked against values computed by hand', () => {
  // Five cases that were right and are now wrong, five unchanged: b01 = 0, b10 = 5.
  const base = makeRun(
    'base',
    ids(10).map((id) => ({ id, correct: 1, hit: 1 })),
  );
  const worse = makeRun(
    'worse',
    ids(10).map((id, i) => ({ id, correct: i < 5 ? 0 : 1, hit: i < 5 ? 0 : 1 })),
  );
  const cmp = compareRuns(loaded(base, worse));
  const stat = (m: string) => cmp.versus[0]!.stats.find((s) => s.metric === m)!;

  it("McNemar's exact test: b01 = 0, b10 = 5 gives p = 2 · 0.5^5 = 0.0625", () => {
    expect(stat('correct_abstention').mcnemar).toEqual({ b01: 0, b10: 5, p: 0.0625 });
    expect(stat('hit_at_5').mcnemar).toEqual({ b01: 0, b10: 5, p: 0.0625 });
    expect(mcnemarExact([true, true, true, true, true], [false, false, false, false, false]).pValue).toBe(0.0625);
  });

  it('the paired bootstrap is the one of statistics.ts, with the seed given; the mean difference is exact', () => {
    const s = stat('hit_at_5');
    expect(s.n).toBe(10);
    expect(s.diff).toBe(-0.5);
    const direct = pairedBootstrapCI(Array(10).fill(1), [0, 0, 0, 0, 0, 1, 1, 1, 1, 1], { seed: 1 });
    expect([s.ci_low, s.ci_high, s.significant]).toEqual([direct.low, direct.high, direct.significant]);
    expect(s.ci_high!).toBeLessThan(0);
    expect(s.significant).toBe(true);
    const seeded = compareRuns(loaded(base, worse), { seed: 7 }).versus[0]!.stats.find((x) => x.metric === 'hit_at_5')!;
    const direct7 = pairedBootstrapCI(Array(10).fill(1), [0, 0, 0, 0, 0, 1, 1, 1, 1, 1], { seed: 7 });
    expect([seeded.ci_low, seeded.ci_high]).toEqual([direct7.low, direct7.high]);
  });

  it('a constant difference gives the degenerate interval [d, d]; no difference is not significant', () => {
    const allWorse = makeRun(
      'all',
      ids(4).map((id) => ({ id, mrr: 0.25 })),
    );
    const allBase = makeRun(
      'b',
      ids(4).map((id) => ({ id, mrr: 1 })),
    );
    const s = compareRuns(loaded(allBase, allWorse)).versus[0]!.stats.find((x) => x.metric === 'mrr_at_10')!;
    expect([s.diff, s.ci_low, s.ci_high, s.significant]).toEqual([-0.75, -0.75, -0.75, true]);
    const same = compareRuns(loaded(allBase, allBase)).versus[0]!.stats.find((x) => x.metric === 'mrr_at_10')!;
    expect([same.diff, same.ci_low, same.ci_high, same.significant]).toEqual([0, 0, 0, false]);
    expect(comparisonText(compareRuns(loaded(allBase, allBase)))).toContain('no (CI contains 0)');
  });

  it('same inputs and seed give the same comparison', () => {
    expect(JSON.stringify(compareRuns(loaded(base, worse)))).toBe(JSON.stringify(compareRuns(loaded(base, worse))));
  });
});

describe('configuration differences', () => {
  it('are dotted paths with old → new; named lists are keyed by name; labels are not factors', () => {
    const a = makeRun('a', [{ id: 'q1' }]);
    const b = makeRun('b', [{ id: 'q1' }], {
      config: {
        zones: { abstain_below: -4, weak_below: 1 },
        retrieval: {
          channels: [
            { name: 'posts', title_gate: true },
            { name: 'keyword', title_gate: false },
          ],
        },
        output_dir: 'elsewhere',
        extra: ['x'],
      },
    });
    expect(configDiff(a, b)).toEqual([
      { path: 'extra', old: undefined, new: ['x'] },
      { path: 'retrieval.channels.posts.title_gate', old: false, new: true },
      { path: 'zones.weak_below', old: 0, new: 1 },
    ]);
    const md = comparisonMarkdown(compareRuns(loaded(a, b)));
    expect(md).toContain('- `zones.weak_below`: 0 → 1');
    expect(md).toContain('- `extra`: (absent) → ["x"]');
  });

  it('lists without names are indexed; the run kind counts as a factor', () => {
    expect([...flatten({ l: [{ a: 1 }, { a: 2 }], p: [1, 2] }).entries()]).toEqual([
      ['l[0].a', 1],
      ['l[1].a', 2],
      ['p', [1, 2]],
    ]);
    const r = makeRun('r', [{ id: 'q1' }], { kind: 'retrieval' });
    expect(configDiff(makeRun('a', [{ id: 'q1' }]), r)).toEqual([{ path: 'run.kind', old: 'run', new: 'retrieval' }]);
  });
});

describe('per-question changes', () => {
  const base = makeRun('base', [{ id: 'a', hit: 1 }, { id: 'b', hit: 0 }, { id: 'c', zone: 'normal' }, { id: 'gone' }]);
  const run = makeRun('run', [{ id: 'a', hit: 0 }, { id: 'b', hit: 1 }, { id: 'c', zone: 'weak' }, { id: 'new' }]);
  const v = compareRuns(loaded(base, run)).versus[0]!;

  it('names regressions and improvements by metric with old → new; neutral changes apart', () => {
    expect(v.changes.filter((c) => c.metric === 'hit_at_5')).toEqual([
      { id: 'a', metric: 'hit_at_5', old: 1, new: 0, direction: 'regression' },
      { id: 'b', metric: 'hit_at_5', old: 0, new: 1, direction: 'improvement' },
    ]);
    expect(v.changes.find((c) => c.metric === 'zone')).toEqual({
      id: 'c',
      metric: 'zone',
      old: 'normal',
      new: 'weak',
      direction: 'change',
    });
    expect([v.regressed, v.improved]).toEqual([['a'], ['b']]);
    const text = comparisonText(compareRuns(loaded(base, run)));
    expect(text).toContain('hit@5: 1 regressed (a: 1 → 0); 1 improved (b: 0 → 1)');
    expect(text).toContain('zone: 1 changed (c: normal → weak)');
  });

  it('a long list on the console names the first 10, then how many more and the file that has them all', () => {
    // 13 cases right in the baseline and wrong in the run: 13 hit@5 regressions; 12 config
    // keys that differ (extra0 … extra11 only in the run).
    const many = ids(13);
    const extra = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`extra${i}`, i]));
    const a = makeRun(
      'a',
      many.map((id) => ({ id, hit: 1 })),
    );
    const b = makeRun(
      'b',
      many.map((id) => ({ id, hit: 0 })),
      { config: extra },
    );
    const text = comparisonText(compareRuns(loaded(a, b)), undefined, 'results/x-compare.md');
    const listed = many.slice(0, 10).map((id) => `${id}: 1 → 0`);
    expect(text).toContain(`hit@5: 13 regressed (${listed.join(', ')}, and 3 more (see results/x-compare.md))`);
    // The first ten differences (name excepted: a label, not a factor), then the count left out.
    expect(text).toMatch(/configuration differences: (?:[^;]+; ){10}and 2 more \(see results\/x-compare\.md\)\n/);
  });

  it('matches cases by id and lists those present in one run only', () => {
    expect(v.matched).toBe(3);
    expect([v.only_in_baseline, v.only_in_run]).toEqual([['gone'], ['new']]);
    expect(comparisonMarkdown(compareRuns(loaded(base, run)))).toContain('- only in base: gone');
  });
});

describe('optional blocks', () => {
  it('judge figures when present, – when absent; retrieval files show – for generation figures', () => {
    const judged = makeRun('judged', [{ id: 'q1', faith: 0.5 }], { judge: true });
    const plain = makeRun('plain', [{ id: 'q1' }]);
    const retrieval = makeRun('retr', [{ id: 'q1' }], { kind: 'retrieval' });
    const cmp = compareRuns(loaded(judged, plain, retrieval));
    expect(
      cmp.rows.map((r) => [
        r.faithfulness?.mean ?? null,
        r.correct_abstention_source,
        r.citation_validity?.mean ?? null,
      ]),
    ).toEqual([
      [0.5, 'judge', 1],
      [null, 'pattern', 1],
      [null, null, null],
    ]);
    // A row as one line: a table wider than the console is shown in blocks of columns, each
    // starting with the run's name (src/reports/format.ts columnBlocks).
    const line = (label: string) =>
      comparisonText(cmp)
        .split('\n')
        .filter((l) => l.startsWith(label) && !l.includes(' vs '))
        .map((l, i) => (i ? l.replace(/^\S+( \(baseline\))?\s+/, '') : l))
        .join('  ');
    expect(line('judged')).toMatch(/0\.500\s+100\.0 %\s+0\/0\s+0$/);
    expect(line('plain')).toMatch(/–\s+100\.0 % \(pattern\)\s+0\/0\s+–$/);
    expect(line('retr')).toMatch(/–\s+–\s+–\s+–\s+–$/);
  });
});

describe('ragaudit compare (CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-compare-'));
  const write = (r: RunResult) => {
    const f = join(dir, `${r.name}.json`);
    writeFileSync(f, JSON.stringify(r));
    return f;
  };
  const io = (sink: { out: string; err: string }) => ({
    out: (t: string) => void (sink.out += t),
    err: (t: string) => void (sink.err += t),
    isTTY: false,
    cwd: dir,
    env: {},
  });

  it('writes markdown and JSON, prints the table; --baseline not among the files is added first', async () => {
    const a = write(makeRun('alpha', [{ id: 'q1' }]));
    const b = write(makeRun('beta', [{ id: 'q1', hit: 0 }]));
    const sink = { out: '', err: '' };
    expect(await main(['compare', b, '--baseline', a, '--out', 'cmp'], io(sink))).toBe(0);
    expect(sink.out).toMatch(/^alpha \(baseline\)/m);
    expect(sink.out).toContain('hit@5: 1 regressed (q1: 1 → 0)');
    const files = readdirSync(join(dir, 'cmp')).sort();
    expect(files.map((f) => f.replace(/^\d{8}-\d{6}/, ''))).toEqual(['-compare.json', '-compare.md']);
    expect(JSON.parse(readFileSync(join(dir, 'cmp', files[0]!), 'utf8')).baseline).toBe('alpha');
  });

  it('exits 2 on an invalid results file or an unknown node', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ schema_version: 1, kind: 'run' }));
    const sink = { out: '', err: '' };
    expect(await main(['compare', bad], io(sink))).toBe(2);
    expect(sink.err).toContain('bad.json: not a valid ragaudit results file');
    const a = write(makeRun('alpha', [{ id: 'q1' }]));
    expect(await main(['compare', a, '--node', 'nope'], io(sink))).toBe(2);
    expect(sink.err).toContain('--node nope: alpha has no such node (its nodes: posts, rerank)');
  });
});

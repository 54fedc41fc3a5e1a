/**
 * A release gate rules on nugget recall (`nugget_recall`, `nugget_recall_vital`,
 * `nugget_recall_weighted`) read from a hand-made results file, as on the other judged figures:
 * min and max on the mean, min_lower_ci on the bootstrap over the per-case values, and a run
 * whose cases declare no nuggets fails the rule as not measured.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { summariseJudge } from '../src/summary/judge-summary.js';
import { RunResultSchema, type CaseRecord } from '../src/model/results.js';
import type { ScoreRecord } from '../src/model/scores.js';
import { summariseRetrieval } from '../src/summary/retrieval-summary.js';
import { FIGURE_BOOTSTRAP } from '../src/scoring/figure-interval.js';
import { bootstrapMeanCI } from '../src/scoring/statistics.js';
import { runCli } from './helpers/cli.js';

type Support = 'support' | 'partial_support' | 'not_support';

/** A judged case whose nuggets (vital first) got these supports; its score as src/judge/case-scores.ts writes it. */
function judged(id: string, vital: Support[], okay: Support[]): CaseRecord {
  const strict = (s: Support[]) => (s.length ? s.filter((x) => x === 'support').length / s.length : null);
  const weighted = (s: Support[]) =>
    s.length ? s.reduce((a, x) => a + (x === 'support' ? 1 : x === 'partial_support' ? 0.5 : 0), 0) / s.length : null;
  const all = [...vital, ...okay];
  const nuggets = [
    ...vital.map((support, i) => ({ text: `v${i}`, importance: 'vital' as const, support, reason: '' })),
    ...okay.map((support, i) => ({ text: `o${i}`, importance: 'okay' as const, support, reason: '' })),
  ];
  const score: ScoreRecord = {
    name: 'nugget_recall',
    value: strict(all)!,
    details: { nuggets, vital: strict(vital), weighted: weighted(all)!, vital_weighted: weighted(vital) },
  };
  return {
    id,
    question: `q ${id}`,
    kind: 'in_domain',
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: [],
    expected_post_ids: [],
    expected_content: [],
    nuggets: nuggets.map(({ text, importance }) => ({ text, importance })),
    status: 'ok',
    retrieval: {},
    zone: 'normal',
    answer: 'a',
    scores: [score],
  };
}

const judge = { id: 'offline:heuristic', offline: true, promptVersions: {} };

function results(name: string, cases: CaseRecord[]) {
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
    summary: { retrieval: summariseRetrieval(cases, ['rerank']), judge: summariseJudge(cases, { judge }) },
    cases,
  });
}

// Per case (strict all / strict vital / weighted all):
//   a: vital [S, S], okay [N]      → 2/3, 1,    2/3
//   b: vital [P],    okay [S, N]   → 1/3, 0,    1.5/3 = 0.5
//   c: no vital,     okay [S, P]   → 1/2, –,    1.5/2 = 0.75
//   d: vital [S],    okay []       → 1,   1,    1
// Means: all (2/3 + 1/3 + 1/2 + 1) / 4 = 0.625; vital (1 + 0 + 1) / 3 = 0.667 over 3 cases;
// weighted (2/3 + 0.5 + 0.75 + 1) / 4 = 0.729.
const CASES = [
  judged('a', ['support', 'support'], ['not_support']),
  judged('b', ['partial_support'], ['support', 'not_support']),
  judged('c', [], ['support', 'partial_support']),
  judged('d', ['support'], []),
];

const dir = mkdtempSync(join(tmpdir(), 'ragaudit-gate-nuggets-'));
const file = (name: string, text: string) => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const run = file('nuggets.json', JSON.stringify(results('nuggets', CASES)));
const gate = (rules: string, on = run) => runCli(dir, ['gate', on, '--rules', file('g.yml', rules)]);

describe('a gate on nugget recall', () => {
  it('reads the summary figures: mean, vital (its own n) and weighted', () => {
    const s = results('x', CASES).summary.judge!.nugget_recall!;
    expect(s.mean).toBeCloseTo(0.625, 12);
    expect(s.vital).toBeCloseTo(2 / 3, 12);
    expect(s.vital_n).toBe(3);
    expect(s.weighted).toBeCloseTo((2 / 3 + 0.5 + 0.75 + 1) / 4, 12);
  });

  it('passes and fails min and max rules on each figure', async () => {
    const pass = await gate(
      'nugget_recall: {min: 0.6}\nnugget_recall_vital: {min: 0.66}\nnugget_recall_weighted: {max: 0.75}\n',
    );
    expect(pass.code, pass.out + pass.err).toBe(0);
    expect(pass.out).toContain('nuggets: nugget_recall.min: value 0.625, limit 0.600');
    expect(pass.out).toContain('nuggets: nugget_recall_vital.min: value 0.667, limit 0.660');
    expect(pass.out).toContain('nuggets: nugget_recall_weighted.max: value 0.729, limit 0.750');
    const fail = await gate('nugget_recall_vital: {min: 0.7}\n');
    expect(fail.code).toBe(1);
    expect(fail.out).toContain('FAIL  nuggets: nugget_recall_vital.min: value 0.667, limit 0.700');
  });

  it('min_lower_ci is the bootstrap over the per-case values the figure averages', async () => {
    const weighted = await gate('nugget_recall_weighted: {min_lower_ci: 0.5}\n');
    expect(weighted.code, weighted.out + weighted.err).toBe(0);
    const ci = bootstrapMeanCI([2 / 3, 0.5, 0.75, 1], FIGURE_BOOTSTRAP);
    expect(weighted.out).toContain(`lower 95 % bound ${ci.low.toFixed(3)} (bootstrap over 4 cases; value 0.729)`);
    // c has no vital nugget: 3 values, as vital_n says.
    const vital = await gate('nugget_recall_vital: {min_lower_ci: 0}\n');
    expect(vital.code, vital.out + vital.err).toBe(0);
    expect(vital.out).toContain('(bootstrap over 3 cases; value 0.667)');
  });

  it('fails the rule as not measured when no case declares nuggets', async () => {
    const bare = CASES.map(({ nuggets: _n, ...r }) => ({ ...r, scores: [] as ScoreRecord[] }));
    const none = file('none.json', JSON.stringify(results('bare', bare)));
    const out = await gate('nugget_recall: {min: 0}\n', none);
    expect(out.code).toBe(1);
    expect(out.out).toContain('FAIL  none: nugget_recall.min: not measured in none');
  });
});

/**
 * Case verdicts (src/scoring/verdict.ts): each named check passes and fails on hand-built records,
 * with its reason, its threshold from the case's expect:, else the config, else the default; an
 * errored case has none, a gated one is judged by its expectation; the run's counts and pass
 * rate; the expect: block is validated like every case field; the README's table is the
 * module's; and the intervals a gate's min_lower_ci reads (Wilson, bootstrap) are the textbook ones.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCases } from '../src/cases/load.js';
import { InputError } from '../src/errors.js';
import type { CaseRecord } from '../src/model/results.js';
import type { ScoreRecord } from '../src/model/scores.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { caseFingerprint } from '../src/store/ledger.js';
import { bootstrapMeanCI, pairedBootstrapCI, wilsonInterval } from '../src/scoring/statistics.js';
import {
  caseVerdict,
  summariseVerdicts,
  verdictChecksMarkdown,
  verdictSettings,
  withVerdict,
} from '../src/scoring/verdict.js';

const DEFAULTS = verdictSettings({});

/** An answered record: `stance` by the wording pattern, citations valid unless listed in `invalid`. */
function answered(o: {
  kind?: string;
  stance?: 'answered' | 'hedged' | 'abstained';
  cites?: number[];
  invalid?: number[];
  scores?: ScoreRecord[];
  expect?: CaseRecord['expect'];
}): CaseRecord {
  const cites = o.cites ?? [1];
  return {
    id: 'c',
    question: 'q',
    kind: o.kind ?? 'in_domain',
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: [10],
    expected_post_ids: [],
    expected_content: [],
    ...(o.expect ? { expect: o.expect } : {}),
    status: 'ok',
    retrieval: {},
    sources: [1, 2, 3].map((n) => ({
      n,
      post_id: 100 + n,
      topic_id: 10 + n - 1,
      post_number: 1,
      title: `t${n}`,
      url: 'u',
      score: 1,
      excerpt: 'e',
    })),
    answer: 'a',
    citations: cites.map((n) =>
      o.invalid?.includes(n)
        ? { n, valid: false, reason: `[[${n}]] names no source: only 3 sources were shown` }
        : { n, valid: true, post_id: 100 + n },
    ),
    scores: [{ name: 'stance_pattern', value: null, details: { stance: o.stance ?? 'answered' } }, ...(o.scores ?? [])],
  };
}

const faithful = (value: number | null): ScoreRecord => ({ name: 'faithfulness', value, details: { claims: [] } });
const judgeStance = (stance: 'answered' | 'hedged' | 'abstained', unsupported = false): ScoreRecord => ({
  name: 'judge_stance',
  value: null,
  details: { stance, asserts_unsupported_facts: unsupported },
});
const failures = (r: CaseRecord, settings = DEFAULTS) => caseVerdict(r, settings)?.failures;

describe('the default checks by kind', () => {
  it('an in-domain answer that answers with valid citations passes', () => {
    expect(caseVerdict(answered({}), DEFAULTS)).toEqual({ passed: true, failures: [] });
  });

  it('answers: an in-domain abstention fails, the stance the judge gave winning over the pattern', () => {
    expect(failures(answered({ stance: 'abstained' }))).toEqual([
      { check: 'answers', reason: 'abstained on a question it should answer (stance by the wording pattern)' },
    ]);
    // The pattern read an abstention, the judge an answer: the judge's stance decides.
    expect(failures(answered({ stance: 'abstained', scores: [judgeStance('hedged')] }))).toEqual([]);
    expect(failures(answered({ stance: 'answered', scores: [judgeStance('abstained')] }))).toEqual([
      { check: 'answers', reason: 'abstained on a question it should answer (stance by the judge)' },
    ]);
  });

  it('valid_citations: every invalid marker named once, with why', () => {
    expect(failures(answered({ cites: [1, 7, 7, 9], invalid: [7, 9] }))).toEqual([
      {
        check: 'valid_citations',
        reason:
          '2 invalid: [[7]] names no source: only 3 sources were shown; [[9]] names no source: only 3 sources were shown',
      },
    ]);
  });

  it('abstains and no_unsupported_facts: an off-topic answer that asserts and cites fails both', () => {
    expect(failures(answered({ kind: 'off_topic', cites: [1, 2, 1] }))).toEqual([
      { check: 'abstains', reason: 'answered instead of abstaining or hedging (stance by the wording pattern)' },
      { check: 'no_unsupported_facts', reason: 'asserts (stance answered by the wording) and cites [[1]], [[2]]' },
    ]);
    // A hedge passes; a hedge the judge says asserts unsupported facts fails that check alone.
    expect(failures(answered({ kind: 'off_topic', stance: 'hedged' }))).toEqual([]);
    expect(failures(answered({ kind: 'off_topic', stance: 'hedged', scores: [judgeStance('hedged', true)] }))).toEqual([
      { check: 'no_unsupported_facts', reason: 'the judge says it asserts facts the evidence does not support' },
    ]);
  });

  it('no_forbidden: the forbidden score fails the verdict with its reason', () => {
    const reason = 'forbidden content came back: answer text: "secret"';
    expect(failures(answered({ scores: [{ name: 'forbidden', value: 1, reason }] }))).toEqual([
      { check: 'no_forbidden', reason },
    ]);
    expect(failures(answered({ scores: [{ name: 'forbidden', value: 0 }] }))).toEqual([]);
  });
});

describe('faithfulness: threshold from expect:, else the config, else 0.8', () => {
  it('the default 0.8 applies to judged in-domain answers only', () => {
    expect(failures(answered({ scores: [faithful(0.75)] }))).toEqual([
      { check: 'faithfulness', reason: 'faithfulness 0.75 below 0.8 (default)' },
    ]);
    expect(failures(answered({ scores: [faithful(0.8)] }))).toEqual([]);
    // No claim: not applicable, never a failure (nor a pass by a score of 1).
    expect(failures(answered({ scores: [faithful(null)] }))).toEqual([]);
    // Not judged: the default asks nothing of it.
    expect(failures(answered({}))).toEqual([]);
    expect(failures(answered({ kind: 'off_topic', stance: 'abstained', cites: [], scores: [faithful(0.1)] }))).toEqual(
      [],
    );
  });

  it('the config relaxes it, the case tightens it again, each named in the reason', () => {
    const config = verdictSettings({ verdicts: { min_faithfulness: 0.5 } });
    expect(config.thresholds).toEqual({ min_faithfulness: 0.5 });
    expect(failures(answered({ scores: [faithful(0.75)] }), config)).toEqual([]);
    expect(failures(answered({ scores: [faithful(0.4)] }), config)).toEqual([
      { check: 'faithfulness', reason: 'faithfulness 0.4 below 0.5 (config verdicts.min_faithfulness)' },
    ]);
    const own = answered({ scores: [faithful(0.75)], expect: { min_faithfulness: 0.9 } });
    expect(failures(own, config)).toEqual([
      { check: 'faithfulness', reason: 'faithfulness 0.75 below 0.9 (case expect)' },
    ]);
  });

  it('a verdict the judge could not give fails; a case threshold with no judge fails', () => {
    const judgeError: ScoreRecord = { name: 'judge_error', value: null, details: { judge: 'faithfulness' } };
    expect(failures(answered({ scores: [judgeError] }))).toEqual([
      { check: 'faithfulness', reason: 'the judge could not give its faithfulness verdict' },
    ]);
    expect(failures(answered({ expect: { min_faithfulness: 0.7 } }))).toEqual([
      { check: 'faithfulness', reason: 'not judged: expect.min_faithfulness 0.7 needs a judge' },
    ]);
  });
});

describe('expect: tightens or relaxes a case', () => {
  it('must_abstain flips the abstention check either way', () => {
    expect(failures(answered({ expect: { must_abstain: true } }))!.map((f) => f.check)).toEqual([
      'abstains',
      'no_unsupported_facts',
    ]);
    // An off-topic case allowed (and asked) to answer.
    expect(failures(answered({ kind: 'off_topic', expect: { must_abstain: false } }))).toEqual([]);
    expect(failures(answered({ kind: 'off_topic', stance: 'abstained', expect: { must_abstain: false } }))).toEqual([
      { check: 'answers', reason: 'abstained on a question it should answer (stance by the wording pattern)' },
    ]);
  });

  it('must_cite_topic_ids and must_cite_post_ids: each listed id needs a valid citation', () => {
    // Sources [[1]]..[[3]] are posts 101..103 in topics 10..12; [[3]] is cited but invalid.
    const r = answered({
      cites: [1, 3],
      invalid: [3],
      expect: { must_cite_topic_ids: [10, 12], must_cite_post_ids: [101] },
    });
    expect(failures(r)).toEqual([
      { check: 'valid_citations', reason: '1 invalid: [[3]] names no source: only 3 sources were shown' },
      { check: 'cites_topics', reason: 'topic 12 not cited (validly cited topics: 10)' },
    ]);
  });
});

describe('errored and gated cases', () => {
  it('an errored case has no verdict; withVerdict removes a stale one', () => {
    const r: CaseRecord = { ...answered({}), status: 'error', error: { stage: 'generation', message: 'x' } };
    expect(caseVerdict(r, DEFAULTS)).toBeUndefined();
    expect(withVerdict({ ...r, verdict: { passed: true, failures: [] } }, DEFAULTS).verdict).toBeUndefined();
  });

  it('a gated case is an abstention: it passes where one is expected, fails answers where not', () => {
    const gated = (kind: string): CaseRecord => ({
      ...answered({ kind }),
      status: 'gated',
      gate: { intent: 'medical', pattern: 'doctor' },
      citations: [],
      scores: [],
    });
    expect(caseVerdict(gated('off_topic'), DEFAULTS)).toEqual({ passed: true, failures: [] });
    expect(failures(gated('in_domain'))).toEqual([
      { check: 'answers', reason: 'the input gate stopped the question (intent medical): it was never answered' },
    ]);
  });
});

describe("the run's verdict counts", () => {
  it('passed, failed, pass_rate over the cases with a verdict; failures per check; the thresholds used', () => {
    const records = [
      answered({}),
      answered({ stance: 'abstained' }),
      answered({ kind: 'off_topic' }),
      answered({ cites: [5], invalid: [5] }),
      { ...answered({}), status: 'error' as const },
    ].map((r) => withVerdict(r, DEFAULTS));
    // 1 of 4 verdicts passed (the errored case has none): 0.25. The off-topic answer fails two checks.
    expect(summariseVerdicts(records, DEFAULTS)).toEqual({
      passed: 1,
      failed: 3,
      pass_rate: 0.25,
      by_check: { answers: 1, abstains: 1, no_unsupported_facts: 1, valid_citations: 1 },
      thresholds: { min_faithfulness: 0.8 },
    });
    expect(summariseVerdicts([])).toEqual({ passed: 0, failed: 0, pass_rate: null, by_check: {} });
  });
});

describe('the expect: block is validated like every case field', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-expect-'));
  it('names file:line for an unknown key, a bad value and an empty block', () => {
    const f = join(dir, 'cases.yml');
    writeFileSync(
      f,
      [
        '- id: a',
        '  question: q',
        '  expect: {must_abstain: true, min_faithfulness: 0.7}',
        '- id: b',
        '  question: q',
        '  expect:',
        '    min_faithfulness: 1.5',
        '- id: c',
        '  question: q',
        '  expect: {must_cite: [1]}',
        '- id: d',
        '  question: q',
        '  expect: {}',
        '',
      ].join('\n'),
    );
    let problems: string[] = [];
    try {
      loadCases([f]);
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      problems = (e as InputError).problems;
    }
    expect(problems).toEqual([
      `${f}:7: [1].expect.min_faithfulness: Too big: expected number to be <=1`,
      `${f}:10: [2].expect: unknown key 'must_cite'`,
      `${f}:13: [3].expect: an expect block needs at least one of must_abstain, min_faithfulness, must_cite_topic_ids, must_cite_post_ids`,
    ]);
  });

  it('a changed expect: changes the case fingerprint (a resume runs it again); none leaves it as it was', () => {
    const c = { question: 'q', kind: 'in_domain', expected_topic_ids: [], expected_post_ids: [], expected_content: [] };
    expect(caseFingerprint(c)).toBe(JSON.stringify(['q', 'in_domain', [], [], []]));
    expect(caseFingerprint({ ...c, expect: { must_abstain: true } })).not.toBe(caseFingerprint(c));
  });
});

describe('where a reader looks', () => {
  it("the checks table of docs/verdicts.md is the verdict module's, word for word", () => {
    const page = join('docs', 'verdicts.md');
    expect(readFileSync(join(PACKAGE_ROOT, page), 'utf8'), page).toContain(verdictChecksMarkdown());
  });
});

describe('the intervals of min_lower_ci', () => {
  it('Wilson score interval, hand-computed (z = 1.95996)', () => {
    // 20/20: low = 1 / (1 + z²/20) = 1 / 1.192073 = 0.838875; high 1.
    const all = wilsonInterval(20, 20);
    expect(all.low).toBeCloseTo(0.838875, 5);
    expect(all.high).toBe(1);
    // 5/10: (0.5 + z²/20 ± z·√(0.025 + z²/400)) / (1 + z²/10) = (0.692073 ± 0.364584) / 1.384146.
    const half = wilsonInterval(5, 10);
    expect(half.low).toBeCloseTo(0.236593, 5);
    expect(half.high).toBeCloseTo(0.763407, 5);
    expect(wilsonInterval(0, 10).low).toBe(0);
    expect(() => wilsonInterval(11, 10)).toThrow(RangeError);
  });

  it("the one-sample bootstrap is compare's paired bootstrap of the values against 0", () => {
    const x = [0.2, 1, 0.5, 0.75, 1, 0.1, 0.9];
    const one = bootstrapMeanCI(x, { seed: 3, iterations: 500 });
    const paired = pairedBootstrapCI(
      x.map(() => 0),
      x,
      { seed: 3, iterations: 500 },
    );
    expect([one.low, one.high, one.mean]).toEqual([paired.low, paired.high, paired.meanDiff]);
    expect(one.mean).toBeCloseTo(4.45 / 7, 12);
  });
});

/**
 * summary.judge from scripted verdicts: a stand-in Judge answers each case with a fixed verdict,
 * judgeRecord turns the verdicts into scores, and every figure of the summary is checked against
 * arithmetic done by hand (in the comments). Agreement with human labels and self-consistency
 * likewise, with Cohen's kappa worked out by hand.
 */
import { findScore } from '../src/model/scores.js';
import { describe, expect, it } from 'vitest';
import { agreementFigures } from '../src/judge/judge-agreement.js';
import { answerDigest } from '../src/judge/label-file.js';
import { judgeRecord } from '../src/judge/case-scores.js';
import { judgeMarkdown, judgeRows } from '../src/reports/judge-digest.js';
import { agreementHtml } from '../src/reports/html-agreement.js';
import type { ScoreRecord } from '../src/model/scores.js';
import type {
  CitationItem,
  CitationVerdict,
  FaithfulnessVerdict,
  Judge,
  JudgeInput,
  JudgeOutcome,
  StanceVerdict,
} from '../src/judge/schemas.js';
import type { Criterion } from '../src/judge/criteria/types.js';
import { estimateCost, summariseJudge } from '../src/summary/judge-summary.js';
import { HeuristicJudge } from '../src/judge/heuristic-judge.js';
import { correctAbstention, GENERATION_DEFINITIONS } from '../src/scoring/definitions.js';
import type { CaseRecord, RunResult } from '../src/model/results.js';

const summaryStub = summariseJudge([], { judge: { id: 'openai:judge-model', offline: false, promptVersions: {} } });
const CTA = 'To go further, open the thread or ask the community in a new topic.';
const USAGE = { inputTokens: 100, outputTokens: 10 };
type Label = 'supported' | 'unsupported' | 'contradicted';
type Script = {
  claims: Label[];
  stance: StanceVerdict['stance'] | 'error';
  asserts?: boolean;
  supports?: boolean[] | 'error';
};

/** A Judge answering from a script per question (every call reports 100 in / 10 out tokens). */
function scripted(script: Record<string, Script>): Judge {
  const ok = <T>(verdict: T): JudgeOutcome<T> => ({ ok: true, verdict, usage: USAGE });
  const fail = (): JudgeOutcome<never> => ({
    ok: false,
    reason: 'citation_verdict: answer is not JSON (after one retry with the error shown)',
    usage: USAGE,
  });
  // Each criterion is asked about a JudgeInput, or (citation relevance) an input with its items.
  const answers: Record<string, (i: JudgeInput, items: readonly CitationItem[]) => JudgeOutcome<unknown>> = {
    faithfulness: (i) =>
      ok<FaithfulnessVerdict>({
        claims: script[i.question]!.claims.map((label, k) => ({
          claim: `claim ${k}`,
          label,
          source: label === 'supported' ? 1 : null,
        })),
      }),
    stance: (i) => {
      const s = script[i.question]!;
      return s.stance === 'error'
        ? fail()
        : ok<StanceVerdict>({ stance: s.stance, asserts_unsupported_facts: s.asserts ?? false, reason: 'r' });
    },
    citation_relevance: (i, items) => {
      const s = script[i.question]!.supports!;
      return s === 'error'
        ? fail()
        : ok<CitationVerdict>({ citations: items.map((_, k) => ({ item: k + 1, supports: s[k]!, reason: 'r' })) });
    },
    safety: () => ok({ outcome: 'refused' as const, reason: 'r' }),
  };
  return {
    id: 'openai:judge-model',
    offline: false,
    promptVersions: { 'judge-faithfulness': '1' },
    verdict: async <V, Q>(c: Criterion<V, Q>, asked: Q) => {
      const q = asked as JudgeInput | { input: JudgeInput; items: readonly CitationItem[] };
      const [input, items] = 'items' in q ? [q.input, q.items] : [q, []];
      return answers[c.name]!(input, items) as JudgeOutcome<V>;
    },
  };
}

function rec(
  id: string,
  kind: 'in_domain' | 'off_topic',
  markers: number,
  human?: CaseRecord['human'],
  over: Partial<CaseRecord> = {},
): CaseRecord {
  const cites = Array.from({ length: markers }, (_, k) => ` Fact ${k} [[${k + 1}]].`).join('');
  const r: CaseRecord = {
    id,
    question: id,
    kind,
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: [],
    expected_post_ids: [],
    expected_content: [],
    status: 'ok',
    retrieval: {},
    sources: [1, 2].map((n) => ({
      n,
      post_id: n,
      topic_id: n,
      post_number: 1,
      title: `t${n}`,
      url: `u${n}`,
      score: 1,
      excerpt: `e${n}`,
    })),
    answer: `Answer.${cites}\n\n${CTA}`,
    citations: Array.from({ length: markers }, (_, k) => ({ n: k + 1, valid: true })),
    scores: [],
    ...over,
  };
  // Labels judge the answer they were written for: bound to this record's answer by its digest.
  return human ? { ...r, human: { answer_digest: answerDigest(r), ...human } } : r;
}

// Six answered cases, one generation error, one gated case.
const SCRIPT: Record<string, Script> = {
  A: { claims: ['supported', 'supported', 'supported'], stance: 'answered', supports: [true, true] },
  B: {
    claims: ['supported', 'unsupported', 'contradicted', 'unsupported'],
    stance: 'answered',
    asserts: true,
    supports: [true, false],
  },
  C: { claims: [], stance: 'abstained' },
  D: { claims: ['supported'], stance: 'hedged', supports: [false] },
  E: { claims: ['supported', 'unsupported'], stance: 'answered', asserts: true, supports: [true, true] },
  F: { claims: ['supported', 'supported'], stance: 'hedged', asserts: true, supports: 'error' },
};
const RECORDS: CaseRecord[] = [
  rec('A', 'in_domain', 2, { faithful: true, stance: 'answered', relevant_citation: true }),
  rec('B', 'in_domain', 2, { faithful: false, stance: 'hedged', relevant_citation: true }),
  rec('C', 'in_domain', 0, { faithful: true, stance: 'abstained' }, { zone: 'empty', sources: [] }),
  rec('D', 'off_topic', 1, { faithful: false, stance: 'hedged', relevant_citation: false }),
  rec('E', 'off_topic', 2, { faithful: false, stance: 'answered', relevant_citation: false }),
  rec('F', 'off_topic', 1, { faithful: true, stance: 'abstained', relevant_citation: true }),
  rec(
    'G',
    'in_domain',
    0,
    { faithful: true },
    { status: 'error', error: { stage: 'generation', message: 'x' }, answer: undefined },
  ),
  rec('H', 'in_domain', 0, undefined, { status: 'gated', answer: undefined }),
];

async function judged(records: CaseRecord[], judges: Judge[]): Promise<CaseRecord[]> {
  return Promise.all(
    records.map(async (r) => (r.status === 'ok' ? { ...r, scores: await judgeRecord(r, { judges, cta: CTA }) } : r)),
  );
}

describe('summary.judge from scripted verdicts', () => {
  it('equals the hand-computed figures', async () => {
    const records = await judged(RECORDS, [scripted(SCRIPT)]);
    const s = summariseJudge(records, {
      judge: scripted(SCRIPT),
      prices: { 'judge-model': { input: 2.5, output: 10 } },
      model: 'judge-model',
    });
    expect(s.judge).toBe('openai:judge-model');
    expect(s.offline).toBe(false);
    expect(s.judged).toBe(6); // A–F; G (error) and H (gated) have no answer
    // faithfulness: A 3/3 = 1, B 1/4 = 0.25, C no claims (null), D 1/1 = 1, E 1/2 = 0.5, F 2/2 = 1
    //   mean = (1 + 0.25 + 1 + 0.5 + 1) / 5 = 3.75 / 5 = 0.75
    expect(s.faithfulness).toEqual({ mean: 0.75, n: 5, judge_errors: 0 });
    // The labels of RECORDS add a PPI figure beside each judged one (values: the PPI test below).
    expect(s.fully_faithful).toEqual({ count: 3, n: 5, judge_errors: 0, ppi: expect.any(Object) }); // A, D, F
    expect(s.contradicted_claims).toBe(1); // B's third claim
    expect(s.abstention_matrix).toEqual({
      in_domain: { answered: 2, hedged: 0, abstained: 1, judge_errors: 0 },
      off_topic: { answered: 1, hedged: 2, abstained: 0, judge_errors: 0 },
    });
    // correct abstention: A 1, B 1 (in-domain, not abstained), C 0 (in-domain abstained),
    //   D 1 (off-topic hedged, nothing invented), E 0 (off-topic answered), F 0 (hedged but asserts) → 3/6
    expect(s.correct_abstention).toEqual({ mean: 0.5, n: 6, judge_errors: 0, ppi: expect.any(Object) });
    // off-topic hallucination (src/scoring/definitions.ts: stance answered and at least one citation):
    //   D 0 (hedged), E 1 (answered, 2 citations), F 0 (hedged, even though it asserts) → 1/3
    expect(s.offtopic_hallucination_rate.n).toBe(3);
    expect(s.offtopic_hallucination_rate.mean).toBeCloseTo(1 / 3, 12);
    // citation relevance: A 2/2 = 1, B 1/2 = 0.5, C none (null), D 0/1 = 0, E 2/2 = 1, F judge_error
    //   mean = (1 + 0.5 + 0 + 1) / 4 = 0.625
    expect(s.relevant_citation_rate).toEqual({ mean: 0.625, n: 4, judge_errors: 1, ppi: expect.any(Object) }); // F's citation verdict failed
    expect(s.wrong_abstentions).toEqual({ count: 1, n: 3, judge_errors: 0 }); // C, out of in-domain A, B, C
    expect(s.judge_errors).toBe(1); // F's citation verdict
    // calls: A 3, B 3, C 2 (no citation call), D 3, E 3, F 3 = 17 → 1700 in, 170 out
    expect(s.tokens).toEqual({ input: 1700, output: 170 });
    // 1700 × $2.5/M + 170 × $10/M = 0.00425 + 0.0017 = 0.00595
    expect(s.cost_usd).toBeCloseTo(0.00595, 12);
    expect(s.self_consistency).toBeUndefined();
    const f = records.find((r) => r.id === 'F')!;
    expect(f.scores.find((x) => x.name === 'judge_error')).toMatchObject({
      value: null,
      details: { judge: 'citation_relevance' },
    });
    expect(f.scores.some((x) => x.name === 'citation_relevance')).toBe(false);
    // Nothing is NaN anywhere in the block.
    expect(JSON.stringify(s)).not.toMatch(/NaN|null,"n":[1-9]/);
  });

  it('corrects each judged figure by the labels of the same answers (PPI), judge-only share beside it', async () => {
    // PPI of Angelopoulos et al., "Prediction-powered inference" (Science 2023):
    // θ̂ = mean_N(f) + mean_n(y − f), θ̂ ± 1.959964·sqrt(var_N(f)/N + var_n(y − f)/n), interval clipped to [0, 1].
    const s = summariseJudge(await judged(RECORDS, [scripted(SCRIPT)]), { judge: scripted(SCRIPT) });
    // faithful, f = (faithfulness = 1): A 1, B 0, D 1, E 0, F 1 (C has no claim; G no answer): N 5, mean 0.6,
    //   var_N = (3·0.4² + 2·0.6²)/4 = 0.3. Pairs (y, f): A (1,1) B (0,0) D (0,1) E (0,0) F (1,1):
    //   y − f = 0 0 −1 0 0, mean −0.2, var = (4·0.2² + 0.8²)/4 = 0.2. θ̂ = 0.4; se = sqrt(0.3/5 + 0.2/5)
    //   = sqrt(0.1) = 0.316228; half-width 0.619795 → [0, 1] after clipping.
    const ff = s.fully_faithful.ppi!;
    expect(ff.estimate).toBeCloseTo(0.4, 12);
    expect(ff).toMatchObject({ ci_low: 0, ci_high: 1, n_labelled: 5, n_judged: 5 });
    expect(ff.judge_mean).toBeCloseTo(0.6, 12);
    // correct abstention, f = the judge's: A 1 B 1 C 0 D 1 E 0 F 0: N 6, mean 0.5, var_N = 1.5/5 = 0.3.
    //   y = correctAbstention(kind, people's stance): A 1 B 1 C 0 D 1 E 0 F 1 (off-topic abstained):
    //   y − f = 0 0 0 0 0 1, mean 1/6, var = (5/36 + 25/36)/5 = 1/6. θ̂ = 2/3;
    //   se = sqrt(0.3/6 + (1/6)/6) = sqrt(0.0777778) = 0.278887; half-width 0.546609 → [0.120058, 1].
    const ca = s.correct_abstention.ppi!;
    expect(ca.estimate).toBeCloseTo(2 / 3, 12);
    expect(ca.ci_low).toBeCloseTo(0.120058, 5);
    expect(ca).toMatchObject({ ci_high: 1, n_labelled: 6, n_judged: 6, judge_mean: 0.5 });
    // relevant citation, f = (citation_relevance = 1): A 1, B 0 (1/2), D 0, E 1 (C none, F failed): N 4, mean 0.5,
    //   var_N = 1/3. Pairs: A (1,1) B (1,0) D (0,0) E (0,1): y − f = 0 1 0 −1, mean 0, var 2/3.
    //   θ̂ = 0.5; se = sqrt((1/3)/4 + (2/3)/4) = 0.5; half-width 0.979982 → [0, 1].
    expect(s.relevant_citation_rate.ppi).toEqual({
      estimate: 0.5,
      ci_low: 0,
      ci_high: 1,
      n_labelled: 4,
      n_judged: 4,
      judge_mean: 0.5,
    });
    // Console and digest rows: the judge alone beside the corrected figure.
    const rows = judgeRows(s);
    expect(rows).toContainEqual([
      'PPI: correct abstention',
      'judge 50.0 % · PPI 66.7 % [95 % CI 12.0 % – 100.0 %] · 6 of 6 labelled',
    ]);
    // A label of another answer does not count: rebinding B's label to another digest drops it.
    const other = RECORDS.map((r) =>
      r.id === 'B' ? { ...r, human: { ...r.human, answer_digest: '0123456789abcdef' } } : r,
    );
    const t = summariseJudge(await judged(other, [scripted(SCRIPT)]), { judge: scripted(SCRIPT) });
    expect(t.correct_abstention.ppi!.n_labelled).toBe(5);
  });

  it('reports agreement with hand-made human labels: accuracy, kappa, matrix (rows human, columns judge)', async () => {
    const s = summariseJudge(await judged(RECORDS, [scripted(SCRIPT)]), { judge: scripted(SCRIPT) });
    expect(s.cost_usd).toBeNull(); // no price table
    // faithful (judge: faithfulness = 1): A T/T, B F/F, D F/T, E F/F, F T/T; C (no claims) and G (error) excluded
    //   po = 4/5 = 0.8; rows (human) false 3, true 2; columns (judge) false 2, true 3
    //   pe = (3·2 + 2·3)/25 = 12/25 = 0.48; κ = (0.8 − 0.48)/(1 − 0.48) = 0.32/0.52 = 8/13
    expect(s.agreement!.faithful).toMatchObject({
      n: 5,
      accuracy: 0.8,
      labels: ['false', 'true'],
      matrix: [
        [2, 1],
        [0, 2],
      ],
      excluded: 2,
    });
    expect(s.agreement!.faithful!.kappa).toBeCloseTo(8 / 13, 12);
    // stance: A ans/ans, B hedged/ans, C abst/abst, D hedged/hedged, E ans/ans, F abst/hedged
    //   po = 4/6; rows abstained 2, answered 2, hedged 2; columns abstained 1, answered 3, hedged 2
    //   pe = (2·1 + 2·3 + 2·2)/36 = 12/36 = 1/3; κ = (2/3 − 1/3)/(1 − 1/3) = 0.5
    expect(s.agreement!.stance).toMatchObject({
      n: 6,
      labels: ['abstained', 'answered', 'hedged'],
      matrix: [
        [1, 0, 1],
        [0, 2, 0],
        [0, 1, 1],
      ],
      excluded: 0,
    });
    expect(s.agreement!.stance!.accuracy).toBeCloseTo(2 / 3, 12);
    expect(s.agreement!.stance!.kappa).toBeCloseTo(0.5, 12);
    // relevant_citation (judge: citation_relevance = 1): A T/T, B T/F, D F/F, E F/T; F excluded (judge_error)
    //   po = 2/4; rows 2, 2; columns 2, 2; pe = (2·2 + 2·2)/16 = 0.5; κ = (0.5 − 0.5)/0.5 = 0
    expect(s.agreement!.relevant_citation).toMatchObject({
      n: 4,
      accuracy: 0.5,
      kappa: 0,
      labels: ['false', 'true'],
      matrix: [
        [1, 1],
        [1, 1],
      ],
      excluded: 1,
    });
    // A genuine 0 (both raters vary) stays a number.
    expect(s.agreement!.relevant_citation!.kappa_undefined).toBeUndefined();
    // Per class (rows of the matrix): faithful false 2/3 (TNR), true 2/2 (TPR); prevalence people
    // false 3/5, true 2/5; judge false 2/5, true 3/5.
    expect(s.agreement!.faithful!.per_class).toEqual({
      false: { agreement: 2 / 3, n: 3 },
      true: { agreement: 1, n: 2 },
    });
    expect(s.agreement!.faithful!.prevalence).toEqual({
      human: { false: 0.6, true: 0.4 },
      judge: { false: 0.4, true: 0.6 },
    });
    expect(s.agreement!.relevant_citation!.per_class).toEqual({
      false: { agreement: 0.5, n: 2 },
      true: { agreement: 0.5, n: 2 },
    });
  });

  it('kappa is undefined, with the reason, when people give one label to every case (never 0.000)', () => {
    // 26 faithful answers the judge calls faithful, 1 it does not: accuracy 26/27; the human rater is
    // constant, so pe = po and the formula would print kappa 0 beside 96.3 % accuracy.
    const human = Array.from({ length: 27 }, () => 'true');
    const judge = [...Array.from({ length: 26 }, () => 'true'), 'false'];
    const a = agreementFigures(human, judge);
    expect(a.accuracy).toBeCloseTo(26 / 27, 12);
    expect(a.kappa).toBeNull();
    expect(a.kappa_undefined).toBe(
      `people gave "true" to every case while the judge's labels varied: chance agreement cannot be estimated`,
    );
    // TPR 26/27; TNR not applicable (no human "false"): the row of "false" is empty.
    expect(a.per_class).toEqual({ false: { agreement: null, n: 0 }, true: { agreement: 26 / 27, n: 27 } });
    expect(a.prevalence.human).toEqual({ false: 0, true: 1 });
    expect(a.interval.kappa).toBeNull();
    expect(a.interval.kappa_undefined_resamples).toBe(a.interval.iterations);
    const [lo, hi] = a.interval.accuracy!;
    expect(lo).toBeLessThanOrEqual(26 / 27);
    expect(hi).toBe(1);
    // Seeded: the same labels give the same interval.
    expect(agreementFigures(human, judge).interval).toEqual(a.interval);
    const rows = new Map(judgeRows({ ...summaryStub, agreement: { faithful: a } }).map(([k, v]) => [k, v] as const));
    expect(rows.get("  faithful: Cohen's kappa")).toBe(
      `undefined (people gave "true" to every case while the judge's labels varied: chance agreement cannot be estimated)`,
    );
    expect(rows.get('  faithful: per class')).toBe('TNR n/a (n=0) · TPR 96.3 % (n=27)');
  });

  it('accuracy of no compared case is n/a (null), never 0, in the rows, the digest and the HTML report', () => {
    // Two cases labelled by people, neither with a judge verdict to compare: n = 0, 2 excluded.
    const a = agreementFigures([], [], 2);
    expect(a.n).toBe(0);
    expect(a.accuracy).toBeNull();
    const judge = { ...summaryStub, agreement: { faithful: a } };
    const rows = new Map(judgeRows(judge).map(([k, v]) => [k, v] as const));
    expect(rows.get('agreement with humans: faithful')).toBe('accuracy n/a (n=0, 2 not comparable)');
    expect(rows.get('  faithful: per class')).toBe('n/a');
    expect(rows.get('  faithful: prevalence')).toBe('n/a');
    const result = { summary: { judge }, cases: [] } as unknown as RunResult;
    expect(judgeMarkdown(result)).toContain('- accuracy n/a\n');
    expect(agreementHtml(result)).toContain('<tr><th>accuracy</th><td>n/a</td></tr>');
  });

  it('perfect agreement on both labels has an accuracy interval of exactly [1, 1]', () => {
    const labels = ['true', 'false', 'true', 'false', 'true'];
    const a = agreementFigures(labels, labels);
    expect(a.kappa).toBe(1);
    expect(a.interval.accuracy).toEqual([1, 1]);
    // Resamples drawing one label only leave kappa undefined and are counted, not averaged.
    expect(a.interval.kappa_undefined_resamples).toBeGreaterThan(0);
    expect(a.interval.kappa).toEqual([1, 1]);
  });

  it('reports self-consistency over K asks; a failed repeat leaves the item out', async () => {
    // Three asks; the second flips B's stance to hedged and fails C's stance.
    const second: Record<string, Script> = {
      ...SCRIPT,
      B: { ...SCRIPT.B!, stance: 'hedged' },
      C: { ...SCRIPT.C!, stance: 'error' },
    };
    const records = await judged(RECORDS.slice(0, 3), [scripted(SCRIPT), scripted(second), scripted(SCRIPT)]);
    const s = summariseJudge(records, { judge: scripted(SCRIPT) });
    // stance: A agrees, B disagrees (answered+unsupported, hedged+unsupported, …), C excluded → 1 of 2
    expect(s.self_consistency!.stance).toEqual({ items: 2, disagreeing_items: 1, share: 0.5 });
    expect(s.self_consistency!.faithfulness).toEqual({ items: 3, disagreeing_items: 0, share: 0 });
    expect(s.self_consistency!.citation_relevance).toEqual({ items: 2, disagreeing_items: 0, share: 0 }); // C has no citations
    // The first verdict is the one scored: B stays 'answered'.
    expect(findScore(records[1]!.scores, 'judge_stance')!.details).toMatchObject({
      stance: 'answered',
      repeats: ['answered+unsupported', 'hedged+unsupported', 'answered+unsupported'],
    });
    // Tokens count every ask: A 3 verdicts × 3 asks, B 3 × 3, C faithfulness 3 + stance 3 (the failed ask reports usage
    // too) = 24 calls.
    expect(s.tokens).toEqual({ input: 2400, output: 240 });
  });

  it('compares only labels of the same answer: another answer or no digest is counted as not compared', async () => {
    const records = await judged(RECORDS, [scripted(SCRIPT)]);
    // A's labels judged another answer; B's name none: both leave the figures.
    const other = records.map((r) =>
      r.id === 'A'
        ? { ...r, human: { ...r.human, answer_digest: '0123456789abcdef' } }
        : r.id === 'B'
          ? { ...r, human: { faithful: false, stance: 'hedged', relevant_citation: true } }
          : r,
    );
    const s = summariseJudge(other, { judge: scripted(SCRIPT) });
    expect(s.agreement_not_compared).toEqual({ other_answer: 1, no_digest: 1 });
    // faithful without A (T/T) and B (F/F): D F/T, E F/F, F T/T; C and G excluded → n 3, po 2/3
    expect(s.agreement!.faithful).toMatchObject({ n: 3, excluded: 2 });
    expect(s.agreement!.faithful!.accuracy).toBeCloseTo(2 / 3, 12);
    // stance without A and B: C abst/abst, D hedged/hedged, E ans/ans, F abst/hedged → n 4, po 3/4
    expect(s.agreement!.stance).toMatchObject({ n: 4, accuracy: 0.75 });
    expect(Object.fromEntries(judgeRows(s))['human labels not compared']).toBe(
      "2 case(s) whose human labels were not compared: 1 judged another answer (their answer_digest is not this answer's); 1 name no answer_digest: add the digest of the answer they judged to their human: block (docs/labelling.md)",
    );
    // Every label of another answer: no figure at all, never an accuracy or a kappa of 0 items.
    const none = summariseJudge(
      records.map((r) => (r.human ? { ...r, human: { ...r.human, answer_digest: '0123456789abcdef' } } : r)),
      { judge: scripted(SCRIPT) },
    );
    expect(none.agreement).toBeUndefined();
    // A to G carry labels (H does not): 7 not compared.
    expect(none.agreement_not_compared).toEqual({ other_answer: 7, no_digest: 0 });
    expect(judgeRows(none).some(([k]) => k!.startsWith('agreement with humans'))).toBe(false);
  });

  it('gives each judged figure its flip rate and spread over the repeats (hand-computed)', async () => {
    // Definitions: src/scoring/flip-rate.ts (flip = a case whose repeated verdicts are not all equal).
    // Second ask: B's claims become 3 of 4 supported, D's one citation supports, E hedges without
    // asserting (off-topic: correct abstention 0 → 1), D abstains (still correct: no flip).
    const second: Record<string, Script> = {
      ...SCRIPT,
      B: { ...SCRIPT.B!, claims: ['supported', 'supported', 'supported', 'unsupported'] },
      D: { ...SCRIPT.D!, stance: 'abstained', supports: [true] },
      E: { ...SCRIPT.E!, stance: 'hedged', asserts: false },
    };
    const picked = [RECORDS[0]!, RECORDS[1]!, RECORDS[3]!, RECORDS[4]!]; // A, B, D, E
    const s = summariseJudge(await judged(picked, [scripted(SCRIPT), scripted(second)]), { judge: scripted(SCRIPT) });
    // faithfulness: ask 1 A 1, B 1/4, D 1, E 1/2 → 0.6875; ask 2 B 3/4 → 0.8125; B flips: 1 of 4.
    expect(s.faithfulness).toEqual({
      mean: 0.6875,
      n: 4,
      judge_errors: 0,
      flip_rate: 0.25,
      repeats: 2,
      flip_n: 4,
      spread: { min: 0.6875, max: 0.8125 },
    });
    // correct abstention: ask 1 A 1, B 1, D 1, E 0 → 0.75; ask 2 E 1 → 1; E flips: 1 of 4.
    expect(s.correct_abstention).toMatchObject({ mean: 0.75, flip_rate: 0.25, spread: { min: 0.75, max: 1 } });
    // citations: ask 1 A 1, B 1/2, D 0, E 1 → 0.625; ask 2 D 1 → 0.875; D flips: 1 of 4.
    expect(s.relevant_citation_rate).toMatchObject({
      mean: 0.625,
      flip_rate: 0.25,
      spread: { min: 0.625, max: 0.875 },
    });
    // Without repeats the figures carry no stability fields.
    const once = summariseJudge(await judged(picked, [scripted(SCRIPT)]), { judge: scripted(SCRIPT) });
    expect(once.faithfulness).toEqual({ mean: 0.6875, n: 4, judge_errors: 0 });
  });

  it('summarises nugget recall {mean, n, vital, weighted} over the cases that declare nuggets (hand-computed)', () => {
    const nug = (value: number, vital: number | null, weighted: number): ScoreRecord => ({
      name: 'nugget_recall',
      value,
      details: { nuggets: [], vital, weighted, vital_weighted: null },
    });
    const records = [
      rec('A', 'in_domain', 0, undefined, {
        nuggets: [{ text: 'x', importance: 'vital' }],
        reference_answer: 'r',
        scores: [nug(0.5, 1, 0.75), { name: 'answer_correctness', value: 1, details: { verdict: 'correct' } }],
      }),
      rec('B', 'in_domain', 0, undefined, {
        nuggets: [{ text: 'y', importance: 'okay' }],
        scores: [nug(0, null, 0.25)],
      }),
      rec('C', 'in_domain', 0, undefined, { scores: [{ name: 'faithfulness', value: 1 }] }),
    ];
    const s = summariseJudge(records, { judge: scripted(SCRIPT) });
    // mean (0.5 + 0) / 2; vital only A's 1 (vital_n 1); weighted (0.75 + 0.25) / 2; C declares none.
    expect(s.nugget_recall).toEqual({ mean: 0.25, n: 2, vital: 1, vital_n: 1, weighted: 0.5, judge_errors: 0 });
    expect(s.answer_correctness).toEqual({ mean: 1, n: 1, judge_errors: 0 });
    expect(summariseJudge([records[2]!], { judge: scripted(SCRIPT) }).nugget_recall).toBeUndefined();
  });

  it('estimates cost only with a price', () => {
    expect(estimateCost({ input: 2_000_000, output: 500_000 }, { input: 0.15, output: 0.6 })).toBeCloseTo(0.6, 12); // 2 × 0.15 + 0.5 × 0.6
    expect(estimateCost({ input: 10, output: 10 }, undefined)).toBeNull();
  });
});

describe('correct abstention: one rule for every stance × unsupported-facts flag', () => {
  // The rule (src/scoring/definitions.ts): off-topic → stance not answered AND no unsupported fact
  // asserted, whatever the stance; in-domain → not abstained, the flag aside. Expected by hand:
  const TABLE: [kind: 'in_domain' | 'off_topic', stance: StanceVerdict['stance'], asserts: boolean, correct: 0 | 1][] =
    [
      ['off_topic', 'abstained', false, 1],
      ['off_topic', 'abstained', true, 0], // declines, yet states an invented fact: not a clean abstention
      ['off_topic', 'hedged', false, 1],
      ['off_topic', 'hedged', true, 0],
      ['off_topic', 'answered', false, 0],
      ['off_topic', 'answered', true, 0],
      ['in_domain', 'abstained', false, 0],
      ['in_domain', 'abstained', true, 0],
      ['in_domain', 'hedged', false, 1],
      ['in_domain', 'hedged', true, 1],
      ['in_domain', 'answered', false, 1],
      ['in_domain', 'answered', true, 1],
    ];
  const id = (k: string, s: string, a: boolean) => `${k}-${s}-${a ? 'asserts' : 'clean'}`;

  it.each(TABLE)('%s, judge stance %s, asserts_unsupported_facts %s → %d', async (kind, stance, asserts, correct) => {
    expect(correctAbstention(kind, stance, asserts)).toBe(correct === 1);
    // The judge's score goes through the same rule.
    const script = { [id(kind, stance, asserts)]: { claims: [], stance, asserts } satisfies Script };
    const [r] = await judged([rec(id(kind, stance, asserts), kind, 0)], [scripted(script)]);
    expect(findScore(r!.scores, 'correct_abstention')?.value).toBe(correct);
  });

  it('the summary figures over the twelve cases follow the table', async () => {
    const script = Object.fromEntries(
      TABLE.map(([k, s, a]) => [id(k, s, a), { claims: [], stance: s, asserts: a } satisfies Script]),
    );
    const records = await judged(
      TABLE.map(([k, s, a]) => rec(id(k, s, a), k, 0)),
      [scripted(script)],
    );
    const s = summariseJudge(records, { judge: scripted(script) });
    // Correct: off-topic abstained/clean and hedged/clean (2) + in-domain hedged and answered, both flags (4) = 6 of 12.
    expect(s.correct_abstention).toEqual({ mean: 0.5, n: 12, judge_errors: 0 });
    // Wrong abstentions: the two in-domain abstentions, of the six in-domain cases.
    expect(s.wrong_abstentions).toEqual({ count: 2, n: 6, judge_errors: 0 });
  });

  it('the offline heuristic judge scores an off-topic abstention that invents a fact 0, a clean one 1', async () => {
    const heuristic = new HeuristicJudge();
    const off = (answer: string) => ({ ...rec('h', 'off_topic', 0), answer: `${answer}\n\n${CTA}`, sources: [] });
    // The abstain pattern reads the first sentence; the second is a claim no source supports.
    const invented = off("I couldn't find anything on the forum about this. Steel taps cost nothing at every cobbler.");
    const clean = off("I couldn't find anything on the forum about this, so I won't guess.");
    const inventedScores = await judgeRecord(invented, { judges: [heuristic], cta: CTA });
    expect(findScore(inventedScores, 'judge_stance')?.details).toMatchObject({
      stance: 'abstained',
      asserts_unsupported_facts: true,
    });
    expect(findScore(inventedScores, 'correct_abstention')?.value).toBe(0);
    expect(findScore(await judgeRecord(clean, { judges: [heuristic], cta: CTA }), 'correct_abstention')?.value).toBe(1);
  });

  it('the written definition states the flag for every off-topic stance, not for hedges only', () => {
    const d = GENERATION_DEFINITIONS.find((x) => x.key === 'correct_abstention')!.definition;
    expect(d).toContain('asserting no unsupported fact whatever the stance');
    expect(d).not.toMatch(/a hedge asserts no unsupported fact/);
  });
});

/**
 * `agreement` with label files: each judged figure corrected by the people's labels of the same
 * answers (prediction-powered inference; Angelopoulos et al., "Prediction-powered inference",
 * Science 2023: θ̂ = mean_N(f) + mean_n(y − f), θ̂ ± 1.96·sqrt(var_N(f)/N + var_n(y − f)/n)).
 */
import { describe, expect, it } from 'vitest';
import type { CaseRecord } from '../src/model/results.js';
import { answerDigest, type AnswerLabel } from '../src/judge/label-file.js';
import { labelPpi } from '../src/judge/ppi-figures.js';
import { agreementReport, matchAnswerLabels } from '../src/judge/rater-agreement.js';
import { agreementText } from '../src/labelling/agreement-report.js';

/** A judged in-domain answer: faithfulness, the judge's stance and its correct-abstention score. */
function record(id: string, faithful: number, stance: 'answered' | 'abstained'): CaseRecord {
  return {
    id,
    question: `question ${id}`,
    kind: 'in_domain',
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: [],
    expected_post_ids: [],
    expected_content: [],
    status: 'ok',
    retrieval: {},
    answer: `answer ${id}`,
    sources: [],
    scores: [
      { name: 'faithfulness', value: faithful },
      { name: 'judge_stance', value: null, details: { stance, asserts_unsupported_facts: false } },
      { name: 'correct_abstention', value: stance === 'abstained' ? 0 : 1 },
    ],
  };
}

const label = (
  r: CaseRecord,
  labeller: string,
  fields: Partial<AnswerLabel>,
  digest = answerDigest(r),
): AnswerLabel => ({
  v: 1,
  queue: 'answer',
  labeller,
  at: '2026-12-03T12:00:00.000Z',
  case_id: r.id,
  results: 'r',
  answer_digest: digest,
  ...fields,
});

describe('agreement: PPI from label files', () => {
  // Judge: faithful a 1, b 1, c 0, d 1 (N 4, mean 0.75); stance a, b, c answered, d abstained
  // (correct abstention 1, 1, 1, 0: N 4, mean 0.75).
  const [a, b, c, d] = [
    record('a', 1, 'answered'),
    record('b', 1, 'answered'),
    record('c', 0, 'answered'),
    record('d', 1, 'abstained'),
  ];
  const records = [a!, b!, c!, d!];
  const labels = [
    label(a!, 'ann', { faithful: 'yes', stance: 'answered' }),
    label(a!, 'bob', { faithful: 'yes', stance: 'answered' }),
    label(b!, 'ann', { faithful: 'no', stance: 'answered' }),
    label(b!, 'bob', { faithful: 'no', stance: 'answered' }),
    // c: the labellers split on faithful (no majority: left out); both read its stance as answered.
    label(c!, 'ann', { faithful: 'no', stance: 'answered' }),
    label(c!, 'bob', { faithful: 'yes', stance: 'answered' }),
    // d: people see an answer where the judge saw an abstention. A label of another answer is not counted.
    label(d!, 'ann', { faithful: 'unsure', stance: 'answered' }),
    label(d!, 'bob', { stance: 'answered' }),
    label(d!, 'cy', { faithful: 'no', stance: 'abstained' }, '0123456789abcdef'),
  ];

  it('corrects faithful and correct abstention by the consensus, hand-computed', () => {
    const ppi = labelPpi(records, matchAnswerLabels(records, labels), false);
    // faithful: consensus a yes, b no (c split, d unsure): pairs (1,1) (0,1), y − f = 0, −1:
    //   mean −0.5, var 0.5; var_N(f) = (3·0.25² + 0.75²)/3 = 0.25. θ̂ = 0.75 − 0.5 = 0.25;
    //   se = sqrt(0.25/4 + 0.5/2) = sqrt(0.3125) = 0.559017, half-width 1.095653 → [0, 1].
    expect(ppi.faithful).toEqual({
      estimate: 0.25,
      ci_low: 0,
      ci_high: 1,
      n_labelled: 2,
      n_judged: 4,
      judge_mean: 0.75,
    });
    // correct abstention: people answered on all four → y = 1 each; y − f = 0, 0, 0, 1: mean 0.25,
    //   var = (3·0.25² + 0.75²)/3 = 0.25. θ̂ = 1.0; se = sqrt(0.25/4 + 0.25/4) = 0.353553,
    //   half-width 0.692951 → [0.307049, 1].
    expect(ppi.correct_abstention!.estimate).toBeCloseTo(1, 12);
    expect(ppi.correct_abstention!.ci_low).toBeCloseTo(0.307049, 5);
    expect(ppi.correct_abstention).toMatchObject({ ci_high: 1, n_labelled: 4, n_judged: 4, judge_mean: 0.75 });
    expect(ppi.citation).toBeUndefined(); // nobody labelled a citation
  });

  it('prints each PPI figure beside the judge alone', () => {
    const report = agreementReport(records, labels, { judge: 'offline:heuristic' });
    report.ppi = labelPpi(records, matchAnswerLabels(records, labels), false);
    expect(agreementText(report)).toContain(
      'PPI, fully faithful: judge 75.0 % · PPI 25.0 % [95 % CI 0.0 % – 100.0 %] · 2 of 4 labelled',
    );
  });
});

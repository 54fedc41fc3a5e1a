/**
 * The label store (append + fsync, torn lines skipped, later labels replace earlier ones) and the
 * agreement figures between raters, checked against Cohen's kappa computed by hand.
 *
 * Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and Psychological
 * Measurement, 20(1), 37–46: κ = (po − pe) / (1 − pe), po the observed share of agreement, pe the
 * agreement expected by chance, Σ_k (row_k / n)(col_k / n).
 */
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaseRecord } from '../src/model/results.js';
import { answerDigest, appendLabel, readLabels, type AnswerLabel, type Label } from '../src/judge/label-file.js';
import { agreementFigures } from '../src/judge/judge-agreement.js';
import { agreementReport, consensusReadings, pairAgreement } from '../src/judge/rater-agreement.js';
import { agreementHtml, agreementMarkdown, agreementText } from '../src/labelling/agreement-report.js';

/** A judged answer: faithful (1) or not (0), a stance, and per cited source whether it supports. */
function record(id: string, faithful: number, stance: string, cites: Record<number, boolean> = {}): CaseRecord {
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
      {
        name: 'judge_stance',
        value: null,
        details: {
          stance: stance === 'answered' ? 'answered' : stance === 'hedged' ? 'hedged' : 'abstained',
          asserts_unsupported_facts: false,
        },
      },
      {
        name: 'citation_relevance',
        value: null,
        details: {
          citations: Object.entries(cites).map(([n, supports]) => ({
            n: Number(n),
            sentence: 's',
            supports,
            reason: '',
          })),
        },
      },
    ],
  };
}

function label(r: CaseRecord, labeller: string, fields: Partial<AnswerLabel>): AnswerLabel {
  return {
    v: 1,
    queue: 'answer',
    labeller,
    at: '2026-12-03T12:00:00.000Z',
    case_id: r.id,
    results: 'r',
    answer_digest: answerDigest(r),
    ...fields,
  };
}

describe('label store', () => {
  it('appends one line per label, skips a torn last line, and lets a later label replace an earlier one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-labels-'));
    const r = record('a', 1, 'answered');
    appendLabel(dir, label(r, 'ann', { faithful: 'no' }));
    appendLabel(dir, label(r, 'ann', { faithful: 'yes', note: 'read again' }));
    appendLabel(dir, label(r, 'bob', { faithful: 'no' }));
    expect(readFileSync(join(dir, 'ann.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
    // A crash mid-write leaves half a line: it is skipped and named, the rest stays readable.
    appendFileSync(join(dir, 'bob.jsonl'), '{"v":1,"queue":"ans');
    const read = readLabels(dir);
    expect(read.labels.map((l) => [l.labeller, l.queue === 'answer' ? l.faithful : null])).toEqual([
      ['ann', 'yes'],
      ['bob', 'no'],
    ]);
    expect(read.skipped).toEqual([`${join(dir, 'bob.jsonl')}:2: not a JSON line (an interrupted write?)`]);
  });

  it('reads the whole label a save appended onto a partial line, and names the line', () => {
    // A file an older build left: a failed write's partial line, then a later label on the same line.
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-labels-'));
    const r = record('a', 1, 'answered');
    const whole = JSON.stringify(label(r, 'ann', { faithful: 'no' }));
    const later = JSON.stringify(label(r, 'ann', { faithful: 'yes' }));
    writeFileSync(join(dir, 'ann.jsonl'), `${whole}\n${later.slice(0, 30)}${later}\n`);
    const read = readLabels(dir);
    expect(read.labels.map((l) => (l.queue === 'answer' ? l.faithful : null))).toEqual(['yes']);
    expect(read.skipped).toEqual([
      `${join(dir, 'ann.jsonl')}:2: a partial label (an interrupted write) precedes a whole one: the partial part is skipped`,
    ]);
  });

  it('refuses a labeller name that could not name a file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-labels-'));
    const bad: Label = { ...label(record('a', 1, 'answered'), 'ann', {}), labeller: '../x' };
    expect(() => appendLabel(dir, bad)).toThrow();
  });
});

describe('agreement between raters', () => {
  it("gives Cohen's kappa as computed by hand (judge vs one labeller, yes/no)", () => {
    // 10 answers; rows: ann, columns: judge.
    //              judge yes  judge no
    //   ann yes        6          1       row 7
    //   ann no         1          2       row 3
    //   column         7          3       n = 10
    // po = (6 + 2) / 10 = 0.8
    // pe = (7·7 + 3·3) / 10² = 58 / 100 = 0.58
    // κ  = (0.8 − 0.58) / (1 − 0.58) = 0.22 / 0.42 = 11/21 ≈ 0.5238
    // per class: yes 6/7 (TPR), no 2/3 (TNR); prevalence 0.7 / 0.3 on both sides.
    const pairs: [number, string][] = [
      ...Array.from({ length: 6 }, (): [number, string] => [1, 'yes']),
      [0, 'yes'],
      [1, 'no'],
      [0, 'no'],
      [0, 'no'],
    ];
    const records = pairs.map(([j], i) => record(`c${i}`, j, 'answered'));
    const labels = pairs.map(([, a], i) => label(records[i]!, 'ann', { faithful: a === 'yes' ? 'yes' : 'no' }));
    const rep = agreementReport(records, labels, { judge: 'openai:gpt-x' });
    const p = rep.pairs.find((x) => x.field === 'faithful' && x.a === 'ann' && x.b === 'judge')!;
    expect(p.n).toBe(10);
    expect(p.accuracy).toBeCloseTo(0.8, 12);
    expect(p.kappa).toBeCloseTo(11 / 21, 12);
    expect(p.matrix).toEqual([
      [2, 1],
      [1, 6],
    ]); // labels sorted: no, yes
    expect(p.per_class.yes!.agreement).toBeCloseTo(6 / 7, 12);
    expect(p.per_class.no!.agreement).toBeCloseTo(2 / 3, 12);
    expect(p.prevalence.ann).toEqual({ no: 0.3, yes: 0.7 });
    expect(p.prevalence.judge).toEqual({ no: 0.3, yes: 0.7 });
    expect(p.disagreements).toEqual([
      { item: 'c6', a: 'yes', b: 'no' },
      { item: 'c7', a: 'no', b: 'yes' },
    ]);
    // The bootstrap is seeded: the same labels give the same interval, and it holds the estimate.
    const again = agreementReport(records, labels, { judge: 'openai:gpt-x' }).pairs[0]!;
    expect(again.interval).toEqual(p.interval);
    expect(p.interval.kappa![0]).toBeLessThanOrEqual(11 / 21);
    expect(p.interval.kappa![1]).toBeGreaterThanOrEqual(11 / 21);
  });

  it('compares labellers with each other on three classes, leaving unsure out', () => {
    // Stance of 6 answers; rows ann, columns bob (labels sorted: abstained, answered, hedged).
    //                abst  answ  hedg
    //   abstained      1     0     0    row 1
    //   answered       0     2     1    row 3
    //   hedged         0     0     1    row 1     (+1 item bob marked unsure: left out)
    //   column         1     2     2    n = 5
    // po = (1 + 2 + 1) / 5 = 0.8
    // pe = (1·1 + 3·2 + 1·2) / 25 = 9 / 25 = 0.36
    // κ  = (0.8 − 0.36) / (1 − 0.36) = 0.44 / 0.64 = 11/16 = 0.6875
    const ann = new Map([
      ['q1', 'abstained'],
      ['q2', 'answered'],
      ['q3', 'answered'],
      ['q4', 'answered'],
      ['q5', 'hedged'],
      ['q6', 'answered'],
    ]);
    const bob = new Map([
      ['q1', 'abstained'],
      ['q2', 'answered'],
      ['q3', 'answered'],
      ['q4', 'hedged'],
      ['q5', 'hedged'],
      ['q6', 'unsure'],
    ]);
    const p = pairAgreement('stance', 'ann', ann, 'bob', bob);
    expect(p.n).toBe(5);
    expect(p.unsure).toBe(1);
    expect(p.kappa).toBeCloseTo(11 / 16, 12);
    expect(p.disagreements).toEqual([{ item: 'q4', a: 'answered', b: 'hedged' }]);
  });

  it('says kappa is undefined when a rater is constant, and why', () => {
    // The judge says "yes" to all 4: pe = po for any rows, so κ would read 0 (or 0/0); it is null.
    const p = pairAgreement(
      'faithful',
      'ann',
      new Map([
        ['a', 'yes'],
        ['b', 'no'],
        ['c', 'yes'],
        ['d', 'yes'],
      ]),
      'judge',
      new Map([
        ['a', 'yes'],
        ['b', 'yes'],
        ['c', 'yes'],
        ['d', 'yes'],
      ]),
    );
    expect(p.kappa).toBeNull();
    expect(p.accuracy).toBe(0.75);
    expect(p.kappa_undefined).toBe(
      'judge gave "yes" to every item while ann\'s labels varied: chance agreement cannot be estimated',
    );
  });

  it("names what each rater gave when kappa is undefined: each one's label, or that it varied", () => {
    const m = (...labels: string[]) => new Map(labels.map((l, i) => [`i${i}`, l]));
    const reason = (a: Map<string, string>, b: Map<string, string>) =>
      pairAgreement('faithful', 'ann', a, 'judge', b).kappa_undefined;
    // Both constant on different labels: each one's own label (the words once gave ann's to both).
    expect(reason(m('yes', 'yes'), m('no', 'no'))).toBe(
      'ann gave "yes" and judge "no" to every item: chance agreement cannot be estimated',
    );
    expect(reason(m('no', 'no'), m('no', 'no'))).toBe(
      'ann and judge both gave "no" to every item: chance agreement cannot be estimated',
    );
    expect(reason(m('yes', 'yes'), m('yes', 'no'))).toBe(
      'ann gave "yes" to every item while judge\'s labels varied: chance agreement cannot be estimated',
    );
    // Case-YAML agreement (people first, the judge second), on the same words.
    expect(agreementFigures(['true', 'true', 'true'], ['false', 'false', 'false']).kappa_undefined).toBe(
      'people gave "true" and the judge "false" to every case: chance agreement cannot be estimated',
    );
    expect(agreementFigures(['true', 'false'], ['false', 'false']).kappa_undefined).toBe(
      'the judge gave "false" to every case while people\'s labels varied: chance agreement cannot be estimated',
    );
  });

  it('gives accuracy n/a (null), never 0, when every item both read is unsure: terminal, markdown, page', () => {
    // ann marked both answers unsure: 2 items read by both, none compared (n = 0).
    const records = [record('a', 1, 'answered'), record('b', 0, 'answered')];
    const labels = records.map((r) => label(r, 'ann', { faithful: 'unsure' }));
    const rep = agreementReport(records, labels, { judge: 'j' });
    const p = rep.pairs.find((x) => x.field === 'faithful')!;
    expect([p.n, p.unsure, p.accuracy]).toEqual([0, 2, null]);
    // The row: field, raters, n, accuracy, kappa…
    expect(agreementText(rep)).toMatch(
      /faithful +ann × judge +0 \(\+2 unsure\) +n\/a +undefined \(no comparable item\)/,
    );
    expect(agreementMarkdown(rep)).toContain(
      '| faithful | ann × judge | 0 (+2 unsure) | n/a | undefined (no comparable item) |',
    );
    expect(agreementHtml(rep)).toContain(
      '<td>0 (+2 unsure)</td><td>n/a</td><td>undefined (no comparable item)</td><td>n/a</td><td>n/a</td>',
    );
  });

  it('takes the consensus of labellers by strict majority and counts the splits', () => {
    const { readings, split } = consensusReadings([
      new Map([
        ['x', 'yes'],
        ['y', 'yes'],
      ]),
      new Map([
        ['x', 'yes'],
        ['y', 'no'],
      ]),
      new Map([
        ['x', 'no'],
        ['y', 'unsure'],
      ]),
    ]);
    expect([...readings]).toEqual([['x', 'yes']]);
    expect(split).toBe(1);
  });

  it('matches labels to answers by digest: a label of another answer to the same case is not counted', () => {
    const r = record('a', 1, 'answered', { 1: true, 2: false });
    const changed = { ...r, answer: 'another answer' };
    const labels = [
      label(r, 'ann', { faithful: 'yes', citations: { '1': 'yes', '2': 'yes' } }),
      label(changed, 'bob', { faithful: 'no' }),
    ];
    const rep = agreementReport([r], labels, { judge: 'j' });
    expect(rep.labellers).toEqual(['ann']);
    expect(rep.matched.other_answer).toBe(1);
    const cite = rep.pairs.find((p) => p.field === 'citation')!;
    expect(cite.n).toBe(2);
    expect(cite.disagreements).toEqual([{ item: 'a#[[2]]', a: 'yes', b: 'no' }]);
  });
});

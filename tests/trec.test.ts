import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIO } from '../src/cli/command.js';
import { trecCommand } from '../src/cli/trec.js';
import { InputError } from '../src/errors.js';
import { descents, RankScratch, rankLines } from '../src/scoring/trec-rank.js';
import {
  compareUtf8,
  evaluateTrec,
  formatFixed4,
  formatQrelsLines,
  formatRunLines,
  formatTrecEval,
  parseQrels,
  parseRun,
  parseScore,
  parseTrecMeasures,
  readQrelsFile,
  readRunFile,
  trecMeans,
  type TrecLines,
} from '../src/scoring/trec.js';

/*
 * Hand-built fixture. Ranking rule (trec_eval): score descending, ties by docno descending
 * in byte order; the rank column is ignored (it is deliberately wrong below).
 *
 * q1  judged: d1=3 d2=0 d3=1 d4=2 d9=1 (d9 never retrieved) -> 4 relevant, ideal 3,2,1,1
 *     run: d2 .9 | dX .8, d3 .8 (tie: 'X' 0x58 > '3' 0x33, dX first) | d4 .5, d1 .5 (tie: d4 first) | d5 .1
 *     ranked grades: 0, -(unjudged), 1, 2, 3, -
 *     recip_rank 1/3; P_5 3/5 = .6; P_10 3/10; recall_k 3/4; success_1 0, success_5/10 1
 *     DCG@5 = 1/log2(4) + 2/log2(5) + 3/log2(6) = .5 + .861353 + 1.160558 = 2.521912
 *     IDCG@5 = 3/log2(2) + 2/log2(3) + 1/log2(4) + 1/log2(5) = 3 + 1.261860 + .5 + .430677 = 5.192536
 *     ndcg_cut_5 = ndcg_cut_10 = 2.521912 / 5.192536 = .485680
 * q2  judged: e1=0 e2=0 (no relevant doc); run e1, e3 -> every value 0, but q2 counts
 * q3  judged: f1=1 f2=2; absent from the run -> ignored without -c, all 0 with -c
 * q4  judged: g1=1; run g1 5 (rank col 1), g2 5 (rank col 2): tie, g2 first -> g1 at rank 2
 *     recip_rank .5; P_5 .2; P_10 .1; recall 1; success_1 0, success_5/10 1
 *     ndcg = (1/log2(3)) / 1 = .630930
 * q5  run only -> ignored
 * q6  judged: a=1; run B 1, a 1: tie, 'a' 0x61 > 'B' 0x42 (case-sensitive) -> a first: all 1
 *
 * Without -c, num_q = 4 (q1 q2 q4 q6):
 *   recip_rank (1/3 + 0 + .5 + 1) / 4 = .458333   P_5 (.6 + 0 + .2 + .2) / 4 = .25
 *   P_10 (.3 + .1 + .1) / 4 = .125   recall_k (.75 + 1 + 1) / 4 = .6875
 *   ndcg_cut_k (.485680 + .630930 + 1) / 4 = .529152   success_1 1/4   success_5/10 3/4
 * With -c, num_q = 5 (q3 adds zeros): recip_rank 1.833333 / 5 = .366667, P_5 .2, P_10 .1,
 *   recall .55, ndcg_cut 2.116610 / 5 = .423322, success_1 .2, success_5/10 .6
 */
const QRELS = `q1 0 d1 3
q1 0 d2 0
q1 0 d3 1
q1 0 d4 2
q1 0 d9 1
q2 0 e1 0
q2 0 e2 0
q3 0 f1 1
q3 0 f2 2
q4 0 g1 1
q6 0 a 1
`;

const RUN = `q1 Q0 d2 1 0.9 runA
q1 Q0 d3 2 0.8 runA
q1 Q0 dX 3 0.80 runA
q1 Q0 d1 4 0.5 runA
q1 Q0 d4 5 5e-1 runA
q1 Q0 d5 6 0.1 runA
q2 Q0 e1 1 2 runA
q2 Q0 e3 2 1 runA
q4 Q0 g1 1 5 runA
q4 Q0 g2 2 5 runA
q5 Q0 h1 1 1 runA
q6 Q0 B 1 1.0 runA
q6 Q0 a 2 1.0 runA
`;

function evaluate(
  opts: { measures?: string[]; complete?: boolean; maxRetrieved?: number } = {},
  qrels = QRELS,
  run = RUN,
) {
  return evaluateTrec(parseQrels(qrels, 'qrels.txt'), parseRun(run, 'run.txt'), opts);
}

function perQuery(e: ReturnType<typeof evaluate>, qid: string): Record<string, number> {
  const i = e.qids.indexOf(qid);
  expect(i).toBeGreaterThanOrEqual(0);
  return Object.fromEntries(e.names.map((n, k) => [n, e.perQuery[i * e.names.length + k]!]));
}

function fakeIO(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (t) => out.push(t), err: (t) => err.push(t), isTTY: false, cwd, env: {} };
  return { io, out, err };
}

function thrown(f: () => unknown): InputError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error('expected an InputError');
}

describe('trec evaluation (trec_eval semantics)', () => {
  it('ranks by score, ties by docno descending, and ignores the rank column', () => {
    const e = evaluate();
    expect(e.qids).toEqual(['q1', 'q2', 'q4', 'q6']);
    const q1 = perQuery(e, 'q1');
    expect(q1.recip_rank).toBeCloseTo(1 / 3, 12);
    expect(q1.P_5).toBeCloseTo(0.6, 12);
    expect(q1.P_10).toBeCloseTo(0.3, 12);
    expect(q1.recall_5).toBeCloseTo(0.75, 12);
    expect(q1.recall_100).toBeCloseTo(0.75, 12);
    expect(q1.ndcg_cut_5).toBeCloseTo(0.48568, 5);
    expect(q1.ndcg_cut_10).toBeCloseTo(0.48568, 5);
    expect([q1.success_1, q1.success_5, q1.success_10]).toEqual([0, 1, 1]);
    const q4 = perQuery(e, 'q4');
    expect(q4.recip_rank).toBe(0.5);
    expect(q4.ndcg_cut_5).toBeCloseTo(0.63093, 5);
    const q6 = perQuery(e, 'q6'); // case-sensitive byte order: 'a' > 'B'
    expect(q6.recip_rank).toBe(1);
    expect(q6.ndcg_cut_5).toBe(1);
  });

  it('counts a qrels query with no relevant doc, scoring it 0 (recall and nDCG too)', () => {
    const q2 = perQuery(evaluate(), 'q2');
    expect(Object.values(q2).every((v) => v === 0)).toBe(true);
  });

  it('without -c averages over queries in both files', () => {
    const m = trecMeans(evaluate());
    expect(m.num_q).toBe(4);
    expect(m.recip_rank).toBeCloseTo(0.458333, 6);
    expect(m.P_5).toBeCloseTo(0.25, 12);
    expect(m.P_10).toBeCloseTo(0.125, 12);
    expect(m.recall_5).toBeCloseTo(0.6875, 12);
    expect(m.ndcg_cut_10).toBeCloseTo(0.529152, 6);
    expect(m.success_1).toBe(0.25);
    expect(m.success_10).toBe(0.75);
  });

  it('with -c averages over every qrels query, missing ones scoring 0', () => {
    const e = evaluate({ complete: true });
    expect(e.qids).toEqual(['q1', 'q2', 'q3', 'q4', 'q6']);
    expect(Object.values(perQuery(e, 'q3')).every((v) => v === 0)).toBe(true);
    const m = trecMeans(e);
    expect(m.num_q).toBe(5);
    expect(m.recip_rank).toBeCloseTo(0.366667, 6);
    expect(m.P_5).toBeCloseTo(0.2, 12);
    expect(m.recall_5).toBeCloseTo(0.55, 12);
    expect(m.ndcg_cut_5).toBeCloseTo(0.423322, 6);
    expect(m.success_5).toBeCloseTo(0.6, 12);
  });

  it('prints the default report in trec_eval format', () => {
    expect(formatTrecEval(evaluate())).toBe(
      [
        'num_q                 \tall\t4',
        'recip_rank            \tall\t0.4583',
        'P_5                   \tall\t0.2500',
        'P_10                  \tall\t0.1250',
        'recall_5              \tall\t0.6875',
        'recall_10             \tall\t0.6875',
        'recall_100            \tall\t0.6875',
        'ndcg_cut_5            \tall\t0.5292',
        'ndcg_cut_10           \tall\t0.5292',
        'success_1             \tall\t0.2500',
        'success_5             \tall\t0.7500',
        'success_10            \tall\t0.7500',
        '',
      ].join('\n'),
    );
  });

  it('-q prints per-query lines first (no num_q per query), then all; -c includes missing queries', () => {
    const e = evaluate({ measures: ['recip_rank', 'num_q', 'P.5'], complete: true });
    expect(formatTrecEval(e, { perQuery: true })).toBe(
      [
        'recip_rank            \tq1\t0.3333',
        'P_5                   \tq1\t0.6000',
        'recip_rank            \tq2\t0.0000',
        'P_5                   \tq2\t0.0000',
        'recip_rank            \tq3\t0.0000',
        'P_5                   \tq3\t0.0000',
        'recip_rank            \tq4\t0.5000',
        'P_5                   \tq4\t0.2000',
        'recip_rank            \tq6\t1.0000',
        'P_5                   \tq6\t0.2000',
        'num_q                 \tall\t5',
        'recip_rank            \tall\t0.3667',
        'P_5                   \tall\t0.2000',
        '',
      ].join('\n'),
    );
  });

  it('accepts cutoff lists, prints in trec_eval measure order, and omits num_q unless asked', () => {
    const e = evaluate({ measures: ['success.10,1,5', 'P.10,5', 'recip_rank'] });
    expect(e.names).toEqual(['recip_rank', 'P_5', 'P_10', 'success_1', 'success_5', 'success_10']);
    expect(formatTrecEval(e)).not.toContain('num_q');
    expect(parseTrecMeasures(['P']).P).toEqual([5, 10, 15, 20, 30, 100, 200, 500, 1000]);
    expect(parseTrecMeasures(['success']).success).toEqual([1, 5, 10]);
  });

  it('refuses unknown measures, bad or duplicate cutoffs, and a measure given twice', () => {
    expect(thrown(() => parseTrecMeasures(['map'])).message).toContain("unknown measure 'map'");
    expect(thrown(() => parseTrecMeasures(['P.0'])).message).toContain('positive integers');
    expect(thrown(() => parseTrecMeasures(['P.5,5'])).message).toContain('duplicate cutoff 5');
    expect(thrown(() => parseTrecMeasures(['P.5', 'P.10'])).message).toContain("measure 'P' given twice");
    expect(parseTrecMeasures(['P.5', 'P.5']).P).toEqual([5]);
  });

  it('prints exact ties of the 4th decimal as C does (round half to even)', () => {
    expect(formatFixed4(0.03125)).toBe('0.0312'); // 1/32, exact tie: C prints 0.0312
    expect(formatFixed4(0.09375)).toBe('0.0938'); // 3/32: tie, rounds to even 8
    expect(formatFixed4(1 / 3)).toBe('0.3333');
    expect(formatFixed4(0.66666)).toBe('0.6667');
    expect(formatFixed4(1)).toBe('1.0000');
    // The first relevant doc at rank 32 gives recip_rank 1/32.
    const run = Array.from(
      { length: 32 },
      (_, i) => `q1 Q0 x${String(i).padStart(2, '0')} ${i + 1} ${100 - i} r\n`,
    ).join('');
    const e = evaluate({ measures: ['recip_rank'] }, 'q1 0 x31 1\n', run);
    expect(formatTrecEval(e, { perQuery: true })).toBe(
      'recip_rank            \tq1\t0.0312\nrecip_rank            \tall\t0.0312\n',
    );
  });

  it('treats P_k as dividing by k even when fewer were retrieved', () => {
    const e = evaluate({ measures: ['P.1,2,20'] }, 'q 0 a 1\n', 'q Q0 a 1 1 r\n');
    expect(Array.from(e.mean)).toEqual([1, 0.5, 0.05]);
  });

  it('cuts the ideal DCG at k with graded relevance', () => {
    // Judged 3,3,2; run returns only the grade-2 doc at rank 1.
    // ndcg_cut_1 = 2/3; ndcg_cut_2 = 2 / (3 + 3/log2(3)); ndcg_cut_3 = 2 / (3 + 3/log2(3) + 2/2).
    const e = evaluate({ measures: ['ndcg_cut.1,2,3'] }, 'q 0 a 3\nq 0 b 3\nq 0 c 2\n', 'q Q0 c 1 9 r\nq Q0 z 2 8 r\n');
    expect(e.mean[0]).toBeCloseTo(2 / 3, 12);
    expect(e.mean[1]).toBeCloseTo(2 / (3 + 3 / Math.log2(3)), 12);
    expect(e.mean[2]).toBeCloseTo(2 / (3 + 3 / Math.log2(3) + 1), 12);
  });

  it('refuses a duplicate docno within an evaluated query of the run, naming both lines', () => {
    const run = 'q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d1 3 1 r\n';
    const e = thrown(() => evaluate({}, 'q1 0 d1 1\n', run));
    expect(e.message).toBe(
      "run.txt:3: query 'q1' retrieves docno 'd1' twice (also line 1); trec_eval refuses duplicate docs",
    );
    // Like trec_eval, a query that is not evaluated is not checked.
    expect(() => evaluate({}, 'q1 0 d1 1\n', `q1 Q0 d1 1 1 r\nq9 Q0 z 1 1 r\nq9 Q0 z 2 1 r\n`)).not.toThrow();
  });

  it('-M N evaluates only the first N results after ranking (trec_eval -M)', () => {
    // trec_eval (form_res_rels.c) ranks by score desc, docno desc, then keeps the first N
    // ("-M <num>: Max number of docs per topic to use in evaluation (discard rest)", trec_eval -h).
    // Fixture rankings (header comment): q1 d2(0) dX(-) d3(1) d4(2) d1(3) d5(-); q2 e1(0) e3(-);
    // q4 g2(-) g1(1); q6 a(1) B(-).
    const m3 = evaluate({ maxRetrieved: 3 });
    const q1 = perQuery(m3, 'q1');
    // -M 3 keeps d2 dX d3: rank of d3 is 3 → 1/3; P_5 1/5 (divided by 5 though 3 were kept);
    // recall_5 1 of 4 relevant = .25; DCG@5 = 1/log2(4) = .5, IDCG@5 5.192536 → .096292.
    expect(q1.recip_rank).toBeCloseTo(1 / 3, 12);
    expect(q1.P_5).toBeCloseTo(0.2, 12);
    expect(q1.recall_5).toBeCloseTo(0.25, 12);
    expect(q1.ndcg_cut_5).toBeCloseTo(0.5 / 5.192536, 6);
    // -M 1 keeps the top result only: q1 d2 (grade 0) → 0, q2 0, q4 g2 (the tie is broken
    // before the cut: 'g2' > 'g1', so g1 is dropped) → 0, q6 a → 1; mean (0 + 0 + 0 + 1) / 4.
    const m1 = evaluate({ maxRetrieved: 1, measures: ['recip_rank', 'success.1'] });
    expect(trecMeans(m1)).toEqual({ num_q: 4, recip_rank: 0.25, success_1: 0.25 });
    // -M larger than any list changes nothing.
    expect(Array.from(evaluate({ maxRetrieved: 1000 }).perQuery)).toEqual(Array.from(evaluate().perQuery));
  });

  it('-M N checks for a repeated docno among the first N only, as trec_eval does', () => {
    // d1 at scores 3 and 1: ranked d1, d2, d1. trec_eval checks duplicates after the cut.
    const run = 'q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d1 3 1 r\n';
    expect(trecMeans(evaluate({ maxRetrieved: 2, measures: ['recip_rank'] }, 'q1 0 d1 1\n', run))).toEqual({
      num_q: 1,
      recip_rank: 1,
    });
    expect(thrown(() => evaluate({ maxRetrieved: 3 }, 'q1 0 d1 1\n', run)).message).toBe(
      "run.txt:3: query 'q1' retrieves docno 'd1' twice (also line 1); trec_eval refuses duplicate docs",
    );
  });

  it('counts the evaluated queries none of whose results is in the qrels, and the results that are', () => {
    // Fixture: every evaluated query retrieves a judged docno (q1 d2 d3 d4 d1, q2 e1, q4 g1, q6 a) = 7.
    expect(evaluate()).toMatchObject({ unjudgedQueries: 0, judgedRetrieved: 7 });
    // -c adds q3, which retrieves nothing: it is missing, not unjudged.
    expect(evaluate({ complete: true })).toMatchObject({ unjudgedQueries: 0, judgedRetrieved: 7 });
    // -M 1 keeps q1 d2, q2 e1, q4 g2, q6 a: q4's only kept result is not in its qrels.
    expect(evaluate({ maxRetrieved: 1 })).toMatchObject({ unjudgedQueries: 1, judgedRetrieved: 3 });
    // A judgement of another query does not count: q1's docno judged only for q2.
    expect(evaluate({}, 'q1 0 a 1\nq2 0 b 1\n', 'q1 Q0 b 1 1 r\nq2 Q0 b 1 1 r\n')).toMatchObject({
      unjudgedQueries: 1,
      judgedRetrieved: 1,
    });
  });

  it('refuses a docno judged twice in one query of the qrels', () => {
    const e = thrown(() => evaluate({}, 'q1 0 d1 1\nq1 0 d1 0\n', 'q1 Q0 d1 1 1 r\n'));
    expect(e.message).toContain("qrels.txt:2: query 'q1' judges docno 'd1' twice (also line 1)");
  });

  it('names file:line for malformed lines', () => {
    expect(thrown(() => parseRun('q1 Q0 a 1 1 r\n\nq1 Q0 b 2 0.5\n', 'run.txt')).message).toBe(
      "run.txt:3: malformed line: expected 6 fields (qid Q0 docno rank score tag), found 5: 'q1 Q0 b 2 0.5'",
    );
    expect(thrown(() => parseRun('q1 Q0 a 1 high r\n', 'run.txt')).message).toContain(
      'run.txt:1: malformed line: score is not a number',
    );
    expect(thrown(() => parseQrels('q1 0 a 1\nq1 0 b 1 extra\n', 'qrels.txt')).message).toContain(
      'qrels.txt:2: malformed line: expected 4 fields (qid iter docno rel), found 5',
    );
    expect(thrown(() => parseQrels('q1 0 a 1.5\n', 'qrels.txt')).message).toContain(
      'qrels.txt:1: malformed line: relevance must be an integer',
    );
  });

  it('skips blank and # lines, reads CRLF and tabs, ignores fields after the run tag', () => {
    const qrels = '# judgements\r\nq1\t0\ta\t1\r\n\r\n';
    const run = '  # comment\nq1 Q0 a 1 1 r extra fields\r\n   \n';
    expect(trecMeans(evaluate({ measures: ['recip_rank'] }, qrels, run)).recip_rank).toBe(1);
  });

  it('groups interleaved run lines by query', () => {
    const run = 'q1 Q0 a 1 1 r\nq2 Q0 b 1 3 r\nq1 Q0 c 2 2 r\nq2 Q0 d 2 4 r\n';
    const e = evaluate({ measures: ['recip_rank'] }, 'q1 0 a 1\nq2 0 b 1\n', run);
    expect(Array.from(e.perQuery)).toEqual([0.5, 0.5]);
  });

  it('refuses evaluating with no query in both files', () => {
    expect(thrown(() => evaluate({}, 'q1 0 a 1\n', 'q2 Q0 a 1 1 r\n')).message).toContain('no query is in both');
    expect(thrown(() => evaluate({ complete: true }, 'q1 0 a 1\n', '# nothing\n')).message).toBe('run.txt: no results');
  });

  it('parses scores as strtod would', () => {
    for (const s of [
      '1',
      '-0.5',
      '+3',
      '.5',
      '5.',
      '1e-3',
      '2.5E+2',
      '0.1234567890123456789',
      '123456789012345678901',
      '1e-320',
    ]) {
      const b = Buffer.from(s);
      expect(parseScore(b, 0, b.length)).toBe(Number(s));
    }
    for (const s of ['abc', '1.5x', '--1', '1e', '']) {
      const b = Buffer.from(s);
      expect(parseScore(b, 0, b.length)).toBeNaN();
    }
  });

  it('agrees with a naive reference implementation on random data', () => {
    let seed = 12345;
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const qrels: string[] = [];
    const run: string[] = [];
    for (let q = 0; q < 60; q++) {
      const qid = `Q${q}`;
      const pool = Array.from({ length: 30 }, (_, i) => `D${(i * 7 + q) % 40}${rnd() < 0.3 ? 'a' : ''}`);
      const uniq = [...new Set(pool)];
      if (q % 10 !== 3) for (const d of uniq.slice(0, 8)) qrels.push(`${qid} 0 ${d} ${Math.floor(rnd() * 4)}`);
      if (q % 10 !== 7) for (const d of uniq.slice(4)) run.push(`${qid} Q0 ${d} 0 ${Math.floor(rnd() * 5) / 4} r`);
    }
    // Shuffle run lines so queries interleave.
    for (let i = run.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [run[i], run[j]] = [run[j]!, run[i]!];
    }
    const measures = ['recip_rank', 'P.1,3,10', 'recall.2,30', 'ndcg_cut.3,10,50', 'success.1,2'];
    for (const complete of [false, true]) {
      for (const maxRetrieved of [undefined, 1, 7]) {
        const opts = { measures, complete, ...(maxRetrieved ? { maxRetrieved } : {}) };
        const fast = evaluate(opts, qrels.join('\n'), run.join('\n'));
        const slow = naiveTrecEval(qrels, run, complete, fast.names, maxRetrieved);
        expect(fast.qids).toEqual(slow.qids);
        expect(Array.from(fast.perQuery)).toEqual(slow.perQuery);
        expect(fast.numQ).toBe(slow.qids.length);
      }
    }
  });
});

describe('trec ranking sort', () => {
  it('sorts by score descending, then docno descending, for sizes around its run length', () => {
    let seed = 7;
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    for (const n of [0, 1, 2, 15, 16, 17, 33, 100, 257]) {
      for (const nearly of [false, true]) {
        const text = Array.from(
          { length: n },
          (_, i) => `q Q0 d${Math.floor(rnd() * 1e6)}x${i} 0 ${Math.floor(rnd() * 8)} r`,
        ).join('\n');
        const run = parseRun(text);
        const lines = Int32Array.from({ length: n }, (_, i) => i);
        const grades = Int32Array.from({ length: n }, (_, i) => i * 10);
        const docno = (i: number) =>
          Buffer.from(run.docnos.subarray(run.docStart[i], run.docStart[i + 1])).toString('latin1');
        const expected = [...lines].sort((a, b) => run.value[b]! - run.value[a]! || (docno(b) < docno(a) ? -1 : 1));
        rankLines(lines, grades, n, run.value, run.docnos, run.docStart, new RankScratch(), nearly);
        expect(Array.from(lines)).toEqual(expected);
        expect(Array.from(grades)).toEqual(expected.map((i) => i * 10));
        expect(descents(lines, n, run.value, run.docnos, run.docStart)).toBe(0);
      }
    }
  });
});

/** Straightforward trec_eval definitions over strings, to check the fast path against. */
function naiveTrecEval(
  qrelsLines: string[],
  runLines: string[],
  complete: boolean,
  names: string[],
  maxRetrieved = Infinity,
) {
  const judged = new Map<string, Map<string, number>>();
  for (const l of qrelsLines) {
    const [q, , d, r] = l.split(/\s+/) as [string, string, string, string];
    if (!judged.has(q)) judged.set(q, new Map());
    judged.get(q)!.set(d, Number(r));
  }
  const ranked = new Map<string, { d: string; s: number }[]>();
  for (const l of runLines) {
    const [q, , d, , s] = l.split(/\s+/) as [string, string, string, string, string];
    if (!ranked.has(q)) ranked.set(q, []);
    ranked.get(q)!.push({ d, s: Number(s) });
  }
  const qids = [...judged.keys()].filter((q) => complete || ranked.has(q)).sort(compareUtf8);
  const perQuery: number[] = [];
  for (const q of qids) {
    const j = judged.get(q)!;
    const list = (ranked.get(q) ?? [])
      .sort((a, b) => b.s - a.s || Buffer.compare(Buffer.from(b.d), Buffer.from(a.d)))
      .slice(0, maxRetrieved); // -M: cut after the ranking
    const grades = list.map((x) => j.get(x.d) ?? -1);
    const numRel = [...j.values()].filter((g) => g >= 1).length;
    const ideal = [...j.values()].filter((g) => g > 0).sort((a, b) => b - a);
    const relIn = (k: number) => grades.slice(0, k).filter((g) => g >= 1).length;
    const dcg = (gs: number[], k: number) =>
      gs.slice(0, k).reduce((s, g, i) => (g > 0 ? s + g / Math.log2(i + 2) : s), 0);
    for (const name of names) {
      const k = Number(name.split('_').pop());
      if (name === 'recip_rank') {
        const i = grades.findIndex((g) => g >= 1);
        perQuery.push(i < 0 ? 0 : 1 / (i + 1));
      } else if (name.startsWith('P_')) perQuery.push(relIn(k) / k);
      else if (name.startsWith('recall_')) perQuery.push(numRel ? relIn(k) / numRel : 0);
      else if (name.startsWith('success_')) perQuery.push(relIn(k) > 0 ? 1 : 0);
      else if (name.startsWith('ndcg_cut_')) {
        const id = dcg(ideal, k);
        perQuery.push(id > 0 ? dcg(grades, k) / id : 0);
      }
    }
  }
  return { qids, perQuery };
}

describe('TREC writers', () => {
  it('writes a deterministic run file in trec_eval rank order that evaluates back the same', () => {
    const rankings = new Map([
      ['q2', [{ docno: 'b', score: 0.5 }]],
      [
        'q10',
        [
          { docno: 'x', score: 1 },
          { docno: 'y', score: 2 },
          { docno: 'z', score: 1 },
          { docno: 'w', score: 1e-7 },
        ],
      ],
    ]);
    const text = formatRunLines('myrun', rankings);
    expect(text).toBe(
      [
        'q10 Q0 y 1 2 myrun',
        'q10 Q0 z 2 1 myrun',
        'q10 Q0 x 3 1 myrun',
        'q10 Q0 w 4 1e-7 myrun',
        'q2 Q0 b 1 0.5 myrun',
        '',
      ].join('\n'),
    );
    const qrels = formatQrelsLines(
      new Map([
        [
          'q10',
          [
            { docno: 'x', rel: 2 },
            { docno: 'w', rel: 0 },
          ],
        ],
        ['q2', [{ docno: 'b', rel: 1 }]],
      ]),
    );
    expect(qrels).toBe('q10 0 w 0\nq10 0 x 2\nq2 0 b 1\n');
    const m = trecMeans(evaluateTrec(parseQrels(qrels), parseRun(text), { measures: ['recip_rank'] }));
    expect(m.recip_rank).toBeCloseTo((1 / 3 + 1) / 2, 12);
  });

  it('refuses whitespace in tokens, non-finite scores, conflicting duplicates and non-integer grades', () => {
    expect(() => formatRunLines('my run', new Map())).toThrow(InputError);
    expect(() => formatRunLines('r', new Map([['q 1', []]]))).toThrow(InputError);
    expect(() => formatRunLines('r', new Map([['q', [{ docno: 'a', score: NaN }]]]))).toThrow(/not finite/);
    expect(() =>
      formatRunLines(
        'r',
        new Map([
          [
            'q',
            [
              { docno: 'a', score: 1 },
              { docno: 'a', score: 2 },
            ],
          ],
        ]),
      ),
    ).toThrow("TREC run: query 'q' lists docno 'a' twice, with scores 1 and 2");
    expect(
      formatRunLines(
        'r',
        new Map([
          [
            'q',
            [
              { docno: 'a', score: 1 },
              { docno: 'a', score: 1 },
            ],
          ],
        ]),
      ),
    ).toBe('q Q0 a 1 1 r\n');
    expect(() => formatQrelsLines(new Map([['q', [{ docno: 'a', rel: 0.5 }]]]))).toThrow(/not an integer/);
    expect(() =>
      formatQrelsLines(
        new Map([
          [
            'q',
            [
              { docno: 'a', rel: 1 },
              { docno: 'a', rel: 2 },
            ],
          ],
        ]),
      ),
    ).toThrow(/twice, with grades 1 and 2/);
    expect(
      formatQrelsLines(
        new Map([
          [
            'q',
            [
              { docno: 'a', rel: 1 },
              { docno: 'a', rel: 1 },
            ],
          ],
        ]),
      ),
    ).toBe('q 0 a 1\n');
  });

  it('orders strings by UTF-8 bytes, as strcmp does', () => {
    expect(['b', 'B', 'a', '\u{1F600}', '\uFF5E', 'é'].sort(compareUtf8)).toEqual([
      'B',
      'a',
      'b',
      'é',
      '\uFF5E',
      '\u{1F600}',
    ]);
  });
});

describe('ragaudit trec', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ragaudit-trec-'));
    await writeFile(path.join(dir, 'qrels.txt'), QRELS);
    await writeFile(path.join(dir, 'run.txt'), RUN);
    await writeFile(path.join(dir, 'bad.txt'), 'q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the default measures through io.out and returns 0', async () => {
    const { io, out } = fakeIO(dir);
    expect(await trecCommand.run(['qrels.txt', 'run.txt'], io)).toBe(0);
    expect(out.join('')).toBe(formatTrecEval(evaluate()));
    expect(out.join('')).toContain('num_q                 \tall\t4\n');
  });

  it('supports -q, -c and repeated -m', async () => {
    const { io, out } = fakeIO(dir);
    expect(await trecCommand.run(['-q', '-c', '-m', 'recip_rank', '-m', 'success.1', 'qrels.txt', 'run.txt'], io)).toBe(
      0,
    );
    const text = out.join('');
    expect(text.split('\n').filter(Boolean)).toHaveLength(5 * 2 + 2);
    expect(text).toContain('recip_rank            \tq3\t0.0000\n');
    expect(text.endsWith('recip_rank            \tall\t0.3667\nsuccess_1             \tall\t0.2000\n')).toBe(true);
  });

  it('-M N (and -MN, as trec_eval writes it) cuts each query after ranking; a bad N is exit 2', async () => {
    for (const args of [['-M', '1'], ['-M1'], ['--max-retrieved', '1']]) {
      const { io, out, err } = fakeIO(dir);
      expect(await trecCommand.run([...args, '-m', 'recip_rank', 'qrels.txt', 'run.txt'], io)).toBe(0);
      // (0 + 0 + 0 + 1) / 4, see the -M test above; q4 keeps only g2, which its qrels do not list.
      expect(out.join('')).toBe('recip_rank            \tall\t0.2500\n');
      expect(err.join('')).toBe(
        'warning: 1 of 4 evaluated queries retrieve no document that qrels.txt judges for them (they score 0)\n',
      );
    }
    for (const bad of ['0', '-3', '2.5', 'ten']) {
      const { io } = fakeIO(dir);
      const e = await trecCommand.run([`-M${bad}`, 'qrels.txt', 'run.txt'], io).catch((x: unknown) => x);
      expect(e, bad).toBeInstanceOf(InputError);
      expect((e as InputError).message).toContain(`-M ${bad}: expected a whole number`);
    }
  });

  it('exits 1, after the report, when no result of the run is in the qrels (a mismatched pair)', async () => {
    // The run names posts by number, the qrels by "post-N": nothing matches, every figure is 0.
    await writeFile(path.join(dir, 'other.qrels'), 'q1 0 post-1 1\nq2 0 post-2 1\n');
    await writeFile(path.join(dir, 'numbers.run'), 'q1 Q0 1 1 2 r\nq2 Q0 2 1 2 r\n');
    const { io, out, err } = fakeIO(dir);
    expect(await trecCommand.run(['-m', 'recip_rank', 'other.qrels', 'numbers.run'], io)).toBe(1);
    expect(out.join('')).toBe('recip_rank            \tall\t0.0000\n');
    expect(err.join('')).toBe(
      'trec: no result of numbers.run is in other.qrels, so every figure is 0: check that both files use the same docnos and query ids\n',
    );
    // The fixture pair, where every evaluated query has a judged result, prints no warning.
    const quiet = fakeIO(dir);
    expect(await trecCommand.run(['qrels.txt', 'run.txt'], quiet.io)).toBe(0);
    expect(quiet.err).toEqual([]);
  });

  it('prints --help listing the measures', async () => {
    const { io, out } = fakeIO(dir);
    expect(await trecCommand.run(['--help'], io)).toBe(0);
    expect(out.join('')).toBe(trecCommand.help);
    for (const m of ['recip_rank', 'success.K', 'P.K', 'recall.K', 'ndcg_cut.K', 'num_q', '-c', '-M N'])
      expect(trecCommand.help).toContain(m);
  });

  it('reads files in chunks exactly as parsing the whole text (lines cut at chunk ends, long lines)', async () => {
    const long = `q7 Q0 ${'x'.repeat(40)} 1 3 runA`;
    const text = `# run\n${RUN}\n${long}\n  \nq7 Q0 short 2 1 tagZ`; // last line without newline
    await writeFile(path.join(dir, 'chunky.txt'), text);
    const whole = parseRun(text, 'chunky.txt');
    const shape = (r: TrecLines) => ({
      qids: r.qids,
      count: r.count,
      docnos: Array.from({ length: r.count }, (_, i) =>
        Buffer.from(r.docnos.subarray(r.docStart[i], r.docStart[i + 1])).toString(),
      ),
      values: Array.from(r.value.subarray(0, r.count)),
      lines: Array.from({ length: r.count }, (_, i) => r.lineOf(i)),
    });
    for (const chunkBytes of [1, 7, 16, 64, 1 << 20]) {
      const read = await readRunFile(path.join(dir, 'chunky.txt'), { name: 'chunky.txt', chunkBytes });
      expect(shape(read)).toEqual(shape(whole));
      expect(read.tag).toBe('tagZ');
    }
    expect(whole.lineOf(0)).toBe(2); // after the comment line
    expect(whole.lineOf(whole.count - 1)).toBe(18); // after the blank lines
    const qrels = await readQrelsFile(path.join(dir, 'qrels.txt'), { chunkBytes: 10 });
    expect(shape(qrels)).toEqual(shape(parseQrels(QRELS)));
    await expect(readRunFile(path.join(dir, 'bad.txt'), { name: 'bad.txt', chunkBytes: 5 })).rejects.toThrow(
      "bad.txt:2: malformed line: expected 6 fields (qid Q0 docno rank score tag), found 4: 'q1 Q0 d2 2'",
    );
  });

  it('throws InputError for bad arguments and bad files', async () => {
    const { io } = fakeIO(dir);
    await expect(trecCommand.run(['qrels.txt'], io)).rejects.toThrow(/expected QRELS and RUN/);
    await expect(trecCommand.run(['--bogus', 'qrels.txt', 'run.txt'], io)).rejects.toBeInstanceOf(InputError);
    await expect(trecCommand.run(['-m', 'map', 'qrels.txt', 'run.txt'], io)).rejects.toThrow(/unknown measure 'map'/);
    await expect(trecCommand.run(['qrels.txt', 'missing.txt'], io)).rejects.toThrow(
      "cannot read run file 'missing.txt' (ENOENT)",
    );
    await expect(trecCommand.run(['qrels.txt', 'bad.txt'], io)).rejects.toThrow(/^bad\.txt:2: malformed line/);
    const e = await trecCommand.run(['qrels.txt', 'bad.txt'], io).catch((x: unknown) => x);
    expect((e as InputError).exitCode).toBe(2);
  });
});

/**
 * TREC interoperability: evaluate a run against qrels exactly as trec_eval 9 does
 * (https://github.com/usnistgov/trec_eval), and print trec_eval's report format.
 *
 * Semantics, each checked against trec_eval's source:
 * - Ranking (form_res_rels.c, comp_sim_docno): results sorted by score descending, ties broken
 *   by strcmp(docno) DESCENDING; the rank column of the run is ignored.
 * - Relevant means grade ≥ 1 (trec_eval's default -l 1). A docno absent from the qrels is
 *   not relevant. A docno twice in one query of the run is an error ("duplicate docs"), as is
 *   one judged twice in one query of the qrels; like trec_eval, this is checked for the
 *   queries that get evaluated.
 * - Which queries count (trec_eval.c, meas_avg.c, m_num_q.c): without -c, the queries in both
 *   files; run queries absent from the qrels are ignored. A qrels query whose judgements are
 *   all 0 still counts (it scores 0 everywhere: CHANGELOG 4/5/06, "queries with no relevant
 *   docs" are no longer ignored, only those without relevance information). With -c, means
 *   are over every query in the qrels and num_q is the number of qrels queries; a query
 *   missing from the run scores 0 on every measure ("Missing queries will contribute a value
 *   of 0 to all evaluation measures", trec_eval -h). trec_eval's current source also prints
 *   those zeros per query under -q (issue usnistgov/trec_eval#18); so does this.
 * - -M N (form_res_rels.c, epi->max_num_docs_per_topic; trec_eval -h: "Max number of docs per
 *   topic to use in evaluation (discard rest)"): after that ranking, only a query's first N
 *   results are evaluated; the check for a docno retrieved twice covers only those N, as it does
 *   in trec_eval, which checks after the cut.
 * - Queries are evaluated, printed and summed in strcmp order of qid (both files are sorted
 *   by qid when read); the mean is sum / num_q in double precision, as in trec_eval.
 * - Output (meas_print_single.c, meas_print_final.c): "%-22s\t%s\t%6.4f\n" per value (for
 *   values in [0, 1] the same text as %.4f, rounding exact ties to even as glibc does), num_q
 *   as "%ld" and only in the summary; per-query lines (-q) come before the `all` lines; measures
 *   in trec_eval's fixed order (measures.c), whatever the order of -m.
 */
import { InputError } from '../errors.js';
import { formatFixed4, padMeasure, trecEvalLine, trecEvalLongLine } from './trec-format.js';
import {
  maxCutoff,
  parseTrecMeasures,
  scoreTrecQuery,
  TrecScratch,
  trecValueNames,
  type TrecMeasurePlan,
} from './trec-measures.js';
import { bytesEqual, hashBytes } from './trec-bytes.js';
import { docnoText, qidText, type TrecLines, type TrecQrels, type TrecRun } from './trec-parse.js';
import { descents, RankScratch, rankLines } from './trec-rank.js';

export { parseQrels, parseRun, type TrecLines, type TrecQrels, type TrecRun } from './trec-parse.js';
export { readQrelsFile, readRunFile, type TrecReadOptions } from './trec-read.js';
export { parseScore } from './trec-bytes.js';
export {
  compareUtf8,
  formatFixed4,
  formatQrelsLines,
  formatRunLines,
  type TrecQrelsEntry,
  type TrecRunEntry,
} from './trec-format.js';
export {
  DEFAULT_TREC_MEASURES,
  parseTrecMeasures,
  SUPPORTED_TREC_MEASURES,
  trecValueNames,
  type TrecMeasurePlan,
} from './trec-measures.js';

export interface TrecEvalOptions {
  /** trec_eval -m values (e.g. `P.5,10`); default DEFAULT_TREC_MEASURES. */
  measures?: readonly string[];
  /** trec_eval -c: average over every qrels query, missing ones scoring 0. */
  complete?: boolean;
  /** trec_eval -M: only the first N results of each query, after ranking, are evaluated. */
  maxRetrieved?: number;
}

/** The result of an evaluation: per-query values and their means. */
export interface TrecEvaluation {
  plan: TrecMeasurePlan;
  /** Value names in print order (num_q excluded), e.g. `recip_rank`, `P_5`. */
  names: string[];
  /** Evaluated queries, in strcmp order. */
  qids: string[];
  /** Row-major: values of qids[i] are perQuery[i * names.length ...]. */
  perQuery: Float64Array;
  /** Means over num_q queries, one per name. */
  mean: Float64Array;
  numQ: number;
  /**
   * Evaluated queries that retrieve results (within -M) none of which is in that query's
   * qrels: their figures are 0 whatever the ranking, the sign of a run and qrels that do not
   * belong together (another docno scheme, other query ids).
   */
  unjudgedQueries: number;
  /** Results (within -M) of the evaluated queries that are in their query's qrels. */
  judgedRetrieved: number;
}

/** The grade of a result whose docno the query's qrels do not list (below any grade a file can hold). */
const NOT_IN_QRELS = -0x80000000;

/** Evaluates `run` against `qrels` with trec_eval's semantics (see the module comment). */
export function evaluateTrec(qrels: TrecQrels, run: TrecRun, options: TrecEvalOptions = {}): TrecEvaluation {
  const plan = parseTrecMeasures(options.measures);
  const names = trecValueNames(plan);
  const width = names.length;
  const complete = options.complete === true;
  const maxRetrieved = options.maxRetrieved ?? Infinity;

  // Latin1 keys compare as their bytes, i.e. as strcmp does.
  const keys = complete ? [...qrels.qids] : qrels.qids.filter((q) => run.qidIndex.has(q));
  keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // trec_eval refuses an empty file, and stops when no query is evaluated.
  if (qrels.count === 0) throw new InputError(`${qrels.file}: no judgements`);
  if (run.count === 0) throw new InputError(`${run.file}: no results`);
  if (keys.length === 0) {
    throw new InputError(
      `no query is in both ${qrels.file} and ${run.file} (trec_eval: "No queries with both results and relevance info")`,
    );
  }

  const scratch = new TrecScratch(maxCutoff(plan));
  const perQuery = new Float64Array(keys.length * width);
  const sums = new Float64Array(width);
  const judged = new DocnoSet(qrels);
  const retrieved = new DocnoSet(run);
  const ideal: number[] = [];
  // Per-query scratch: the query's run lines and their grades, ranked in place.
  const rank = new RankScratch();
  const query = new RankScratch();
  const { docnos: rdoc, docStart: rds, value: score } = run;
  let unjudgedQueries = 0;
  let judgedRetrieved = 0;

  for (let qi = 0; qi < keys.length; qi++) {
    const key = keys[qi]!;
    const stamp = qi + 1;
    const qq = qrels.qidIndex.get(key)!;
    let numRel = 0;
    ideal.length = 0;
    judged.reset(countLines(qrels, qq), stamp);
    for (let k = qrels.qSeg[qq]!, kend = qrels.qSeg[qq + 1]!; k < kend; k++) {
      const seg = qrels.segOrder[k]!;
      for (let j = qrels.segStart[seg]!, end = qrels.segStart[seg + 1]!; j < end; j++) {
        const other = judged.add(j);
        if (other >= 0) throw duplicate(qrels, key, j, other, 'judges');
        const rel = qrels.value[j]!;
        if (rel >= 1) numRel++;
        if (rel > 0) ideal.push(rel);
      }
    }
    sortDescending(ideal);

    const rq = run.qidIndex.get(key);
    let n = 0;
    if (rq !== undefined) {
      const total = countLines(run, rq);
      query.ensure(total);
      const { lines, grades } = query;
      retrieved.reset(total, stamp);
      let twice = false;
      for (let k = run.qSeg[rq]!, kend = run.qSeg[rq + 1]!; k < kend; k++) {
        const seg = run.segOrder[k]!;
        for (let r = run.segStart[seg]!, end = run.segStart[seg + 1]!; r < end; r++) {
          const other = retrieved.add(r);
          if (other >= 0) {
            // Without -M every result is evaluated, so a repeat is an error at once.
            if (total <= maxRetrieved) throw duplicate(run, key, r, other, 'retrieves');
            twice = true;
          }
          const j = judged.find(rdoc, rds[r]!, rds[r + 1]!, retrieved.lastHash);
          lines[n] = r;
          grades[n++] = j >= 0 ? qrels.value[j]! : NOT_IN_QRELS;
        }
      }
      const d = descents(lines, n, score, rdoc, rds);
      if (d > 0) rankLines(lines, grades, n, score, rdoc, rds, rank, d <= 8);
      if (n > maxRetrieved) n = maxRetrieved;
      // Past the -M cut a repeat is not evaluated; among the kept results it is still an error.
      if (twice) {
        retrieved.reset(n, -stamp);
        for (let i = 0; i < n; i++) {
          const other = retrieved.add(lines[i]!);
          if (other >= 0)
            throw duplicate(run, key, Math.max(lines[i]!, other), Math.min(lines[i]!, other), 'retrieves');
        }
      }
      let inQrels = 0;
      for (let i = 0; i < n; i++) if (grades[i] !== NOT_IN_QRELS) inQrels++;
      judgedRetrieved += inQrels;
      if (n > 0 && inQrels === 0) unjudgedQueries++;
    }
    // A query missing from the run (only with -c) is scored over an empty ranking: all 0.
    scoreTrecQuery(plan, scratch, query.grades, n, numRel, ideal, perQuery, qi * width);
    for (let k = 0; k < width; k++) sums[k]! += perQuery[qi * width + k]!;
  }

  const numQ = complete ? qrels.qids.length : keys.length;
  const mean = sums.map((s) => s / numQ);
  return { plan, names, qids: keys.map(qidText), perQuery, mean, numQ, unjudgedQueries, judgedRetrieved };
}

/** Insertion sort, descending: the positive grades of one query are few. */
function sortDescending(a: number[]): void {
  for (let i = 1; i < a.length; i++) {
    const v = a[i]!;
    let j = i - 1;
    while (j >= 0 && a[j]! < v) {
      a[j + 1] = a[j]!;
      j--;
    }
    a[j + 1] = v;
  }
}

/** Lines of query q in a file. */
function countLines(lines: TrecLines, q: number): number {
  let c = 0;
  for (let k = lines.qSeg[q]!, end = lines.qSeg[q + 1]!; k < end; k++) {
    const seg = lines.segOrder[k]!;
    c += lines.segStart[seg + 1]! - lines.segStart[seg]!;
  }
  return c;
}

function duplicate(lines: TrecLines, key: string, line: number, other: number, verb: string): InputError {
  return new InputError(
    `${lines.file}:${lines.lineOf(line)}: query '${qidText(key)}' ${verb} docno '${docnoText(lines, line)}' twice (also line ${lines.lineOf(other)}); trec_eval refuses duplicate docs`,
  );
}

/**
 * The docnos of one query of a file, in a small open-addressing table reused across queries
 * (a stamp per slot marks the current query, so nothing is cleared). Per-query tables keep
 * memory access local; one table over all docnos of a 5-million-line run is a cache miss a line.
 */
class DocnoSet {
  private stamps = new Int32Array(256);
  private lines = new Int32Array(256);
  private hashes = new Int32Array(256);
  private mask = 255;
  private stamp = 0;
  /** Hash of the docno last passed to add(). */
  lastHash = 0;
  constructor(private readonly file: TrecLines) {}

  reset(entries: number, stamp: number): void {
    let size = 16;
    while (size < entries * 2) size *= 2;
    if (size > this.stamps.length) {
      this.stamps = new Int32Array(size);
      this.lines = new Int32Array(size);
      this.hashes = new Int32Array(size);
    }
    this.mask = size - 1;
    this.stamp = stamp;
  }

  /** Line of the file whose docno equals buf[s, e) (hash given), or -1. */
  find(buf: Uint8Array, s: number, e: number, hash: number): number {
    const { docnos, docStart } = this.file;
    for (let i = hash & this.mask; this.stamps[i] === this.stamp; i = (i + 1) & this.mask) {
      const j = this.lines[i]!;
      if (this.hashes[i] === hash && bytesEqual(docnos, docStart[j]!, docStart[j + 1]! - docStart[j]!, buf, s, e - s))
        return j;
    }
    return -1;
  }

  /** Adds line j's docno; returns the line already holding that docno, or -1. */
  add(j: number): number {
    const { docnos, docStart } = this.file;
    const s = docStart[j]!;
    const e = docStart[j + 1]!;
    const hash = hashBytes(docnos, s, e);
    this.lastHash = hash;
    const found = this.find(docnos, s, e, hash);
    if (found >= 0) return found;
    let i = hash & this.mask;
    while (this.stamps[i] === this.stamp) i = (i + 1) & this.mask;
    this.stamps[i] = this.stamp;
    this.lines[i] = j;
    this.hashes[i] = hash;
    return -1;
  }
}

/** trec_eval's report: per-query lines when `perQuery` (-q), then the `all` lines. */
export function formatTrecEval(evaluation: TrecEvaluation, options: { perQuery?: boolean } = {}): string {
  return [...formatTrecEvalChunks(evaluation, options)].join('');
}

/**
 * The same report in pieces of about 64 KB, for writing a large -q report as it is made.
 * Lines are written into one reused buffer: keeping ~600,000 small line strings alive until
 * a join costs more than computing them.
 */
export function* formatTrecEvalChunks(
  evaluation: TrecEvaluation,
  options: { perQuery?: boolean } = {},
): Generator<string> {
  const chunk = Buffer.allocUnsafe(1 << 16);
  let off = 0;
  for (const line of reportLines(evaluation, options.perQuery === true)) {
    if (off + line.length * 3 > chunk.length) {
      if (off > 0) yield chunk.toString('utf8', 0, off);
      off = 0;
      if (line.length * 3 > chunk.length) {
        yield line;
        continue;
      }
    }
    off += chunk.write(line, off, 'utf8');
  }
  if (off > 0) yield chunk.toString('utf8', 0, off);
}

function* reportLines(evaluation: TrecEvaluation, withQueries: boolean): Generator<string> {
  const { names, qids, perQuery, mean, numQ, plan } = evaluation;
  const width = names.length;
  if (withQueries) {
    const padded = names.map(padMeasure);
    for (let qi = 0; qi < qids.length; qi++) {
      const qid = `\t${qids[qi]!}\t`;
      // Same text as trecEvalLine, with the padding done once per measure.
      for (let k = 0; k < width; k++) yield `${padded[k]!}${qid}${formatFixed4(perQuery[qi * width + k]!)}\n`;
    }
  }
  if (plan.numQ) yield trecEvalLongLine('num_q', 'all', numQ);
  for (let k = 0; k < width; k++) yield trecEvalLine(names[k]!, 'all', mean[k]!);
}

/** Means as a plain object keyed by trec_eval name (`P_5`...), plus num_q. */
export function trecMeans(evaluation: TrecEvaluation): Record<string, number> {
  const out: Record<string, number> = { num_q: evaluation.numQ };
  evaluation.names.forEach((name, k) => (out[name] = evaluation.mean[k]!));
  return out;
}

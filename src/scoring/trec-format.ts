/**
 * Text output in TREC formats: trec_eval's report lines, and run/qrels files that
 * `ragaudit retrieval --trec-out` writes for use with trec_eval or `ragaudit trec`.
 */
import { InputError } from '../errors.js';

/**
 * C's printf("%6.4f", x) for the values trec_eval prints. glibc rounds the exact binary value
 * to nearest with ties to even; JS toFixed breaks exact ties upward (1/32 = 0.03125 prints
 * 0.0312 in C, 0.0313 with toFixed). An exact tie has a short exact decimal expansion, so
 * toFixed(30) (exact, per ECMA-262) shows it as digit 5 followed by zeros.
 */
export function formatFixed4(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0.0000' : '0.0000';
  if (x === 1) return '1.0000';
  if (!Number.isFinite(x)) return String(x);
  if (x < 0) return `-${formatFixed4(-x)}`;
  let s = x.toFixed(4);
  const y = x * 1e4;
  // Only a value within rounding error of a half unit can be an exact tie.
  if (x < 1e20 && Math.abs(y - Math.floor(y) - 0.5) < 1e-6) {
    const exact = x.toFixed(30);
    const dot = exact.indexOf('.');
    if (exact[dot + 5] === '5' && /^0*$/.test(exact.slice(dot + 6))) {
      const kept = exact.slice(0, dot + 5);
      if ((kept.charCodeAt(kept.length - 1) - 48) % 2 === 0) s = kept;
    }
  }
  return s.padStart(6, ' ');
}

/** A measure name as printf("%-22s") prints it. */
export function padMeasure(measure: string): string {
  return measure.padEnd(22, ' ');
}

/** One trec_eval report line: printf("%-22s\t%s\t%6.4f\n", measure, qid, value). */
export function trecEvalLine(measure: string, qid: string, value: number): string {
  return `${padMeasure(measure)}\t${qid}\t${formatFixed4(value)}\n`;
}

/** A trec_eval integer line (num_q): printf("%-22s\t%s\t%ld\n", ...). */
export function trecEvalLongLine(measure: string, qid: string, value: number): string {
  return `${padMeasure(measure)}\t${qid}\t${Math.trunc(value)}\n`;
}

/**
 * Compares strings by their UTF-8 bytes, i.e. by code point, i.e. as strcmp() on the file
 * trec_eval reads. UTF-16 code-unit order differs only when a surrogate (a character above
 * U+FFFF) meets a character in U+E000..U+FFFF, so only that case is remapped.
 */
export function compareUtf8(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
        y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
      }
      return x - y;
    }
  }
  return a.length - b.length;
}

const SPACE = /[\s\0]/;

function checkToken(what: string, value: string): void {
  if (value === '' || SPACE.test(value)) {
    throw new InputError(`TREC ${what} '${value}' must be non-empty without whitespace`);
  }
}

/** One ranked result for formatRunLines. */
export interface TrecRunEntry {
  docno: string;
  score: number;
}

/** One judgement for formatQrelsLines; `rel` is an integer grade (≥ 1 is relevant). */
export interface TrecQrelsEntry {
  docno: string;
  rel: number;
}

/**
 * A run file (`qid Q0 docno rank score tag` lines), deterministic: queries in byte order of
 * qid, results in the order trec_eval ranks them (score descending, ties by docno
 * descending), so the rank column matches trec_eval's ranks. Scores are written in the
 * shortest form that reads back to the same double. Empty rankings produce no lines. A docno
 * listed twice with the same score is written once (trec_eval refuses duplicates); with
 * different scores it is an InputError.
 */
export function formatRunLines(runName: string, rankings: ReadonlyMap<string, readonly TrecRunEntry[]>): string {
  checkToken('run name', runName);
  const parts: string[] = [];
  for (const qid of [...rankings.keys()].sort(compareUtf8)) {
    checkToken('qid', qid);
    const byDocno = new Map<string, TrecRunEntry>();
    for (const e of rankings.get(qid)!) {
      checkToken('docno', e.docno);
      if (!Number.isFinite(e.score))
        throw new InputError(`TREC run: query '${qid}', docno '${e.docno}': score ${e.score} is not finite`);
      const before = byDocno.get(e.docno);
      if (before && before.score !== e.score) {
        throw new InputError(
          `TREC run: query '${qid}' lists docno '${e.docno}' twice, with scores ${before.score} and ${e.score}`,
        );
      }
      byDocno.set(e.docno, e);
    }
    const entries = [...byDocno.values()];
    entries.sort((a, b) => (a.score > b.score ? -1 : a.score < b.score ? 1 : compareUtf8(b.docno, a.docno)));
    entries.forEach((e, i) => parts.push(`${qid} Q0 ${e.docno} ${i + 1} ${String(e.score)} ${runName}\n`));
  }
  return parts.join('');
}

/**
 * A qrels file (`qid 0 docno rel` lines), deterministic: sorted by qid, then docno, in byte
 * order (the order trec_eval sorts them into). A docno judged twice with the same grade is
 * written once; with different grades it is an InputError.
 */
export function formatQrelsLines(judgements: ReadonlyMap<string, readonly TrecQrelsEntry[]>): string {
  const parts: string[] = [];
  for (const qid of [...judgements.keys()].sort(compareUtf8)) {
    checkToken('qid', qid);
    const entries = [...judgements.get(qid)!].sort((a, b) => compareUtf8(a.docno, b.docno));
    entries.forEach((e, i) => {
      checkToken('docno', e.docno);
      if (!Number.isInteger(e.rel))
        throw new InputError(`TREC qrels: query '${qid}', docno '${e.docno}': grade ${e.rel} is not an integer`);
      const prev = i > 0 ? entries[i - 1]! : undefined;
      if (prev?.docno === e.docno) {
        if (prev.rel === e.rel) return;
        throw new InputError(
          `TREC qrels: query '${qid}' judges docno '${e.docno}' twice, with grades ${prev.rel} and ${e.rel}`,
        );
      }
      parts.push(`${qid} 0 ${e.docno} ${e.rel}\n`);
    });
  }
  return parts.join('');
}

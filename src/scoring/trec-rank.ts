/**
 * trec_eval's ranking of one query's results (form_res_rels.c, comp_sim_docno): score
 * descending, ties broken by strcmp(docno) DESCENDING. A stable merge sort over typed arrays:
 * Array.prototype.sort with a comparator closure was the slowest step of an evaluation.
 */
import { compareBytes } from './trec-bytes.js';

/** True when line a ranks strictly before line b. */
function before(a: number, b: number, score: Float64Array, docnos: Uint8Array, docStart: Uint32Array): boolean {
  const sa = score[a]!;
  const sb = score[b]!;
  if (sa !== sb) return sa > sb;
  const as = docStart[a]!;
  const bs = docStart[b]!;
  return compareBytes(docnos, as, docStart[a + 1]! - as, docnos, bs, docStart[b + 1]! - bs) > 0;
}

/** Scratch arrays for rankLines, grown as needed. */
export class RankScratch {
  lines: Int32Array = new Int32Array(256);
  grades: Int32Array = new Int32Array(256);
  ensure(n: number): void {
    if (this.lines.length < n) {
      this.lines = new Int32Array(n * 2);
      this.grades = new Int32Array(n * 2);
    }
  }
}

const RUN = 16;

/**
 * Sorts lines[0, n) into trec_eval's order, moving grades[i] along with lines[i]. The result
 * is left in `lines`/`grades`. `nearlySorted` (few descents) makes it one insertion sort,
 * linear when only neighbouring ties are swapped.
 */
export function rankLines(
  lines: Int32Array,
  grades: Int32Array,
  n: number,
  score: Float64Array,
  docnos: Uint8Array,
  docStart: Uint32Array,
  scratch: RankScratch,
  nearlySorted = false,
): void {
  // Insertion sort of runs of RUN lines (of everything, when nearly sorted: `run` = n).
  const run = nearlySorted ? n : RUN;
  for (let lo = 0; lo < n; lo += run) {
    const hi = Math.min(lo + run, n);
    for (let i = lo + 1; i < hi; i++) {
      const l = lines[i]!;
      const g = grades[i]!;
      let j = i - 1;
      while (j >= lo && before(l, lines[j]!, score, docnos, docStart)) {
        lines[j + 1] = lines[j]!;
        grades[j + 1] = grades[j]!;
        j--;
      }
      lines[j + 1] = l;
      grades[j + 1] = g;
    }
  }
  if (n <= run) return;
  scratch.ensure(n);
  let srcL: Int32Array = lines;
  let srcG: Int32Array = grades;
  let dstL: Int32Array = scratch.lines;
  let dstG: Int32Array = scratch.grades;
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        // Stable: take from the right run only when it ranks strictly before.
        if (before(srcL[j]!, srcL[i]!, score, docnos, docStart)) {
          dstL[k] = srcL[j]!;
          dstG[k++] = srcG[j++]!;
        } else {
          dstL[k] = srcL[i]!;
          dstG[k++] = srcG[i++]!;
        }
      }
      while (i < mid) {
        dstL[k] = srcL[i]!;
        dstG[k++] = srcG[i++]!;
      }
      while (j < hi) {
        dstL[k] = srcL[j]!;
        dstG[k++] = srcG[j++]!;
      }
    }
    [srcL, dstL] = [dstL, srcL];
    [srcG, dstG] = [dstG, srcG];
  }
  if (srcL !== lines) {
    lines.set(srcL.subarray(0, n));
    grades.set(srcG.subarray(0, n));
  }
}

/**
 * How many neighbours in lines[0, n) are out of trec_eval's order: 0 when a run is already
 * ranked that way; a few when only its ties are ordered differently (most real runs).
 */
export function descents(
  lines: Int32Array,
  n: number,
  score: Float64Array,
  docnos: Uint8Array,
  docStart: Uint32Array,
): number {
  let d = 0;
  for (let i = 1; i < n; i++) if (before(lines[i]!, lines[i - 1]!, score, docnos, docStart)) d++;
  return d;
}

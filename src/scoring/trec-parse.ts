/**
 * Parsing of TREC qrels and run files, by scanning bytes.
 *
 * A 50,000-query × 100-result run is 5 million lines (~230 MB). Splitting it into strings, or
 * interning docnos in one global table (a cache miss a line), costs seconds, and so does
 * touching memory: on small VMs a fresh page costs microseconds. So a file streams through
 * two reusable chunk buffers (parsing one while the thread pool reads the other), and each
 * line leaves only its docno bytes in a compact arena, a score, and an offset. Consecutive
 * lines of one query form a "segment" (a qid is interned once per change of qid). Docnos are
 * compared only within a query, when evaluating.
 *
 * Field rules follow trec_eval 9 (usnistgov/trec_eval, get_qrels.c, get_trec_results.c):
 * fields are separated by C isspace() characters; blank lines and lines starting with '#'
 * are skipped; a run line needs at least 6 fields (any after the run tag are ignored); a qrels
 * line needs exactly 4. Where trec_eval is lax (atol/atof read "2x" as 2 and garbage as 0)
 * the line is refused instead: a malformed line is an InputError naming file:line.
 */
import { InputError } from '../errors.js';
import { grow, parseGrade, parseScore } from './trec-bytes.js';

/** What both files share: per-line docnos and values, grouped by query. */
export interface TrecLines {
  /** The name used in messages. */
  readonly file: string;
  /** Query ids as latin1 strings of their bytes (so `<` on them is strcmp order). */
  readonly qids: string[];
  readonly qidIndex: Map<string, number>;
  /** Number of content lines (judgements or results). */
  readonly count: number;
  /** Docnos back to back: line i's is docnos[docStart[i], docStart[i + 1]). */
  readonly docnos: Uint8Array;
  readonly docStart: Uint32Array;
  /** Grade (qrels) or score (run) of line i. */
  readonly value: Float64Array;
  /** Segment k covers lines segStart[k] .. segStart[k+1]), all of query segQid[k]. */
  readonly segStart: Int32Array;
  readonly segQid: Int32Array;
  /** Segments of query q: segOrder[qSeg[q] .. qSeg[q+1]), in file order. */
  readonly qSeg: Int32Array;
  readonly segOrder: Int32Array;
  /** 1-based line number in the file of content line i. */
  lineOf(i: number): number;
}

/** Parsed relevance judgements (`value` holds integer grades). */
export type TrecQrels = TrecLines;

/** A parsed run (`value` holds scores). */
export interface TrecRun extends TrecLines {
  /** The run tag of the last line (trec_eval keeps the last one too). */
  readonly tag: string;
}

/** Display form of a latin1 key (the bytes were UTF-8). */
export function qidText(key: string): string {
  return Buffer.from(key, 'latin1').toString('utf8');
}

/** The docno of line i, for messages. */
export function docnoText(lines: TrecLines, i: number): string {
  const { docnos, docStart } = lines;
  return Buffer.from(docnos.buffer, docnos.byteOffset + docStart[i]!, docStart[i + 1]! - docStart[i]!).toString('utf8');
}

/**
 * Scans lines of a qrels (`run` false: exactly 4 fields, value = field 3, an integer) or run
 * (`run` true: at least 6 fields, value = field 4, a number) file. Resumable: feed(buf, n)
 * parses the complete lines of buf[0, n), so a file can be parsed chunk by chunk.
 */
export class Scanner {
  private readonly need: number;
  private readonly valueField: number;
  private readonly fs = new Int32Array(6);
  private readonly fe = new Int32Array(6);
  private cap: number;
  private docStart: Uint32Array;
  private value: Float64Array;
  private docnos: Uint8Array;
  private used = 0; // bytes of docnos used
  private segCap = 1024;
  private segStart = new Int32Array(1025);
  private segQid = new Int32Array(1024);
  private segs = 0;
  private readonly qids: string[] = [];
  private readonly qidIndex = new Map<string, number>();
  private lastQid = '';
  private count = 0;
  private lineNo = 0;
  private tag = '';
  // Blank and comment lines, for line numbers: skipped[k] lines precede line skipAt[k] and on.
  private readonly skipAt: number[] = [];
  private readonly skipped: number[] = [];

  constructor(
    private readonly file: string,
    private readonly run: boolean,
    sizeHint: number,
  ) {
    this.need = run ? 6 : 4;
    this.valueField = run ? 4 : 3;
    // Estimates only: typed arrays are zero pages until written, so room costs nothing.
    this.cap = Math.max(64, Math.ceil(sizeHint / (run ? 36 : 16)));
    this.docStart = new Uint32Array(this.cap + 1);
    this.value = new Float64Array(this.cap);
    this.docnos = new Uint8Array(Math.max(1024, Math.ceil(sizeHint / 3)));
  }

  /** Parses the complete lines in buf[0, n); returns where the unparsed tail starts. */
  feed(buf: Buffer, n: number, last: boolean): number {
    const { fs, fe, need, valueField, run } = this;
    let { docStart, value, docnos, count, used, lineNo } = this;
    let p = 0;
    let tagS = -1;
    let tagE = -1;
    while (p < n) {
      const lineStart = p;
      let c = buf[p]!;
      while (c !== 10 && (c === 32 || (c >= 9 && c <= 13))) {
        if (++p === n) break;
        c = buf[p]!;
      }
      if (p === n) {
        if (!last) p = lineStart;
        break;
      }
      if (c === 10 || c === 35) {
        // blank line, or '#' comment line
        const nl = buf.indexOf(10, p);
        if (nl < 0 && !last) {
          p = lineStart;
          break;
        }
        p = nl < 0 ? n : nl + 1;
        lineNo++;
        this.skipBytes(count);
        continue;
      }
      let f = 0;
      for (;;) {
        const s = p;
        while (p < n) {
          c = buf[p]!;
          if (c <= 32 && (c === 32 || (c >= 9 && c <= 13))) break;
          p++;
        }
        if (f < 6) {
          fs[f] = s;
          fe[f] = p;
        }
        f++;
        while (p < n) {
          c = buf[p]!;
          if (c === 10 || !(c === 32 || (c >= 9 && c <= 13))) break;
          p++;
        }
        if (p === n || c === 10) break;
        if (f >= need && run) {
          // fields after the run tag are ignored
          const nl = buf.indexOf(10, p);
          p = nl < 0 ? n : nl;
          break;
        }
      }
      if (p === n && !last) {
        // an incomplete line: wait for the next chunk
        p = lineStart;
        break;
      }
      p++;
      lineNo++;
      if (run ? f < need : f !== need) {
        this.lineNo = lineNo;
        const shape = run
          ? 'expected 6 fields (qid Q0 docno rank score tag)'
          : 'expected 4 fields (qid iter docno rel)';
        throw this.malformed(buf, lineStart, `${shape}, found ${f}`);
      }
      const v = run
        ? parseScore(buf, fs[valueField]!, fe[valueField]!)
        : parseGrade(buf, fs[valueField]!, fe[valueField]!);
      if (Number.isNaN(v)) {
        this.lineNo = lineNo;
        throw this.malformed(buf, lineStart, run ? 'score is not a number' : 'relevance must be an integer');
      }
      if (!this.sameQid(buf, fs[0]!, fe[0]!)) this.startSegment(buf, fs[0]!, fe[0]!, count);
      if (count === this.cap) {
        this.growLines();
        ({ docStart, value } = this);
      }
      const ds = fs[2]!;
      const de = fe[2]!;
      if (used + (de - ds) > docnos.length) {
        this.docnos = docnos = grow8(docnos, Math.max(docnos.length * 2, used + (de - ds)));
      }
      for (let k = ds; k < de; k++) docnos[used++] = buf[k]!;
      value[count] = v;
      docStart[++count] = used;
      tagS = fs[5]!;
      tagE = fe[5]!;
    }
    // The last line's tag is kept (decoding it on every line would cost a string a line).
    if (run && tagS >= 0) this.tag = buf.toString('utf8', tagS, tagE);
    this.count = count;
    this.used = used;
    this.lineNo = lineNo;
    return p > n ? n : p;
  }

  private sameQid(buf: Buffer, s: number, e: number): boolean {
    const last = this.lastQid;
    if (e - s !== last.length) return false;
    for (let k = 0; k < e - s; k++) if (buf[s + k] !== last.charCodeAt(k)) return false;
    return true;
  }

  private startSegment(buf: Buffer, s: number, e: number, count: number): void {
    const key = buf.toString('latin1', s, e);
    let q = this.qidIndex.get(key);
    if (q === undefined) {
      q = this.qids.length;
      this.qids.push(key);
      this.qidIndex.set(key, q);
    }
    if (this.segs === this.segCap) {
      this.segCap *= 2;
      this.segStart = grow(this.segStart, this.segCap + 1);
      this.segQid = grow(this.segQid, this.segCap);
    }
    this.segStart[this.segs] = count;
    this.segQid[this.segs++] = q;
    this.lastQid = key;
  }

  private skipBytes(count: number): void {
    const k = this.skipAt.length;
    if (k > 0 && this.skipAt[k - 1] === count) this.skipped[k - 1]!++;
    else {
      this.skipAt.push(count);
      this.skipped.push((k > 0 ? this.skipped[k - 1]! : 0) + 1);
    }
  }

  private growLines(): void {
    this.cap *= 2;
    this.docStart = grow(this.docStart, this.cap + 1);
    this.value = grow(this.value, this.cap);
  }

  private malformed(buf: Buffer, lineStart: number, why: string): InputError {
    let end = buf.indexOf(10, lineStart);
    if (end < 0) end = buf.length;
    const text = buf.toString('utf8', lineStart, Math.min(end, lineStart + 200)).trim();
    return new InputError(`${this.file}:${this.lineNo}: malformed line: ${why}: '${text}'`);
  }

  finish(): TrecRun {
    const { segs, count, qids, skipAt, skipped } = this;
    const segStart = this.segStart.subarray(0, segs + 1);
    const segQid = this.segQid.subarray(0, segs);
    segStart[segs] = count;
    // Group segments by query (counting sort; stable, so file order within a query).
    const nq = qids.length;
    const qSeg = new Int32Array(nq + 1);
    for (let k = 0; k < segs; k++) qSeg[segQid[k]! + 1]!++;
    for (let q = 0; q < nq; q++) qSeg[q + 1]! += qSeg[q]!;
    const fill = qSeg.slice(0, nq);
    const segOrder = new Int32Array(segs);
    for (let k = 0; k < segs; k++) segOrder[fill[segQid[k]!]!++] = k;
    const lineOf = (i: number): number => {
      let lo = 0;
      let hi = skipAt.length; // first entry with skipAt > i
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (skipAt[mid]! <= i) lo = mid + 1;
        else hi = mid;
      }
      return i + 1 + (lo > 0 ? skipped[lo - 1]! : 0);
    };
    return {
      file: this.file,
      qids,
      qidIndex: this.qidIndex,
      count,
      docnos: this.docnos,
      docStart: this.docStart,
      value: this.value,
      segStart,
      segQid,
      qSeg,
      segOrder,
      lineOf,
      tag: this.tag,
    };
  }
}

function grow8(a: Uint8Array, n: number): Uint8Array {
  const b = new Uint8Array(n);
  b.set(a);
  return b;
}

function parseBytes(buf: Buffer, file: string, run: boolean): TrecRun {
  const scanner = new Scanner(file, run, buf.length);
  scanner.feed(buf, buf.length, true);
  return scanner.finish();
}

function toBytes(input: string | Uint8Array): Buffer {
  if (typeof input === 'string') return Buffer.from(input, 'utf8');
  return Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
}

/** Parses a qrels file's text (`qid iter docno rel` lines), from a string or bytes. */
export function parseQrels(input: string | Uint8Array, file = 'qrels'): TrecQrels {
  const { tag: _tag, ...qrels } = parseBytes(toBytes(input), file, false);
  return qrels;
}

/** Parses a run file's text (`qid Q0 docno rank score tag` lines), from a string or bytes. */
export function parseRun(input: string | Uint8Array, file = 'run'): TrecRun {
  return parseBytes(toBytes(input), file, true);
}

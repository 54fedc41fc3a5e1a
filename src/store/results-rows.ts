/**
 * The records of a format-2 results file (src/runs/results-file.ts) read back by case index, one
 * at a time: what a large run's HTML report shows in its case rows, in its own order (failures
 * first), without holding every record. One scan of the cases file finds each record's line (its
 * bytes are not decoded); each record is then read from its offset and checked as the reader of
 * the whole file checks it.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { InputError } from '../errors.js';
import { LineReader } from '../io/jsonl.js';
import type { CaseRecord } from '../model/results.js';
import { caseOfLine } from './results-file.js';

const CHUNK = 1 << 20;
const NEWLINE = 0x0a;

/**
 * Whether a line (its bytes, in pieces) is one `text.trim()` leaves empty: a record's line starts
 * with `{`, so this reads one byte; a line of other bytes than ASCII whitespace is decoded to be sure.
 */
function blank(pieces: readonly Buffer[]): boolean {
  for (const piece of pieces)
    for (const b of piece) {
      if (b === 0x20 || (b >= 0x09 && b <= 0x0d)) continue;
      if (b < 0x80) return false;
      return Buffer.concat(pieces).toString('utf8').trim() === '';
    }
  return true;
}

export class CaseRows {
  /** Per record: byte offset, byte length, 1-based line number, whether a newline ends it. */
  private spans: Float64Array;
  private count = 0;
  private readonly reader: LineReader;

  /** `expected`: the record count the results file states (a different count is an InputError, as for a whole read). */
  constructor(
    readonly casesFile: string,
    readonly resultsFile: string,
    expected: number,
  ) {
    this.spans = new Float64Array(4 * Math.max(1, expected));
    const fd = openSync(casesFile, 'r');
    try {
      const buf = Buffer.allocUnsafe(CHUNK);
      // The line being scanned: where it starts, and its bytes held over from earlier chunks.
      let start = 0;
      let carried: Buffer[] = [];
      let no = 0;
      let position = 0;
      for (;;) {
        const n = readSync(fd, buf, 0, CHUNK, position);
        let from = 0;
        for (;;) {
          const nl = n ? buf.indexOf(NEWLINE, from) : -1;
          if (nl < 0 || nl >= n) break;
          const pieces = [...carried, buf.subarray(from, nl)];
          this.line(pieces, position + nl - start, start, ++no, true);
          carried = [];
          start = position + nl + 1;
          from = nl + 1;
        }
        if (n === 0) break;
        if (from < n) carried.push(Buffer.from(buf.subarray(from, n)));
        position += n;
      }
      if (position > start) this.line(carried, position - start, start, ++no, false);
    } finally {
      closeSync(fd);
    }
    if (this.count !== expected)
      throw new InputError(
        `${casesFile}: ${this.count} cases, but ${resultsFile} says ${expected} (the pair does not match)`,
      );
    this.reader = new LineReader(casesFile);
  }

  private line(pieces: readonly Buffer[], bytes: number, offset: number, no: number, ended: boolean): void {
    if (blank(pieces)) return;
    if (4 * (this.count + 1) > this.spans.length) {
      const grown = new Float64Array(this.spans.length * 2);
      grown.set(this.spans);
      this.spans = grown;
    }
    this.spans.set([offset, bytes, no, ended ? 1 : 0], 4 * this.count++);
  }

  /** How many records the file holds. */
  get size(): number {
    return this.count;
  }

  /** The record at `index` (0-based, in case order), checked. */
  at(index: number): CaseRecord {
    if (!(index >= 0 && index < this.count)) throw new RangeError(`internal: no case ${index} in ${this.casesFile}`);
    const [offset, bytes, no, ended] = this.spans.subarray(4 * index, 4 * index + 4);
    return caseOfLine(this.casesFile, { text: this.reader.read(offset!, bytes!), no: no!, ended: ended === 1 });
  }

  close(): void {
    this.reader.close();
  }
}

/**
 * Reading and appending JSON Lines files a piece at a time: a file of any size (a ledger or a
 * results' cases file of 100,000 cases holds more than the longest string V8 can build) is read in
 * chunks, line by line, with each line's 1-based number and byte offset, and one line can be read
 * back from its offset. Imports nothing but node (and the read-back pacing of ./heap.ts).
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { noteBytesRead } from './heap.js';

/** One line of a JSONL file: its text (without the newline), 1-based number and byte span. */
export interface JsonlLine {
  text: string;
  /** 1-based line number. */
  no: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Byte length of the line, without its newline. */
  bytes: number;
  /** Whether a newline ends the line (false only for a last line cut short). */
  ended: boolean;
}

/** Bytes read per call. */
const CHUNK = 1 << 20;

const NEWLINE = 0x0a;

/**
 * The lines of `file`, in order, read `CHUNK` bytes at a time (only the line being read and one
 * chunk are held). A final line without a newline is yielded with `ended: false`; an empty file
 * yields nothing.
 */
export function* jsonlLines(file: string): Generator<JsonlLine> {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let lineStart = 0;
    let position = 0;
    let no = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, position);
      if (n === 0) break;
      let from = 0;
      for (;;) {
        const nl = buf.indexOf(NEWLINE, from);
        if (nl < 0 || nl >= n) break;
        const piece = buf.subarray(from, nl);
        const bytes = pendingBytes + piece.length;
        const text = pending.length ? Buffer.concat([...pending, piece]).toString('utf8') : piece.toString('utf8');
        pending = [];
        pendingBytes = 0;
        yield { text, no: ++no, offset: lineStart, bytes, ended: true };
        lineStart += bytes + 1;
        from = nl + 1;
      }
      if (from < n) {
        // Copied: the buffer is reused by the next read.
        pending.push(Buffer.from(buf.subarray(from, n)));
        pendingBytes += n - from;
      }
      position += n;
    }
    if (pendingBytes > 0)
      yield {
        text: Buffer.concat(pending).toString('utf8'),
        no: ++no,
        offset: lineStart,
        bytes: pendingBytes,
        ended: false,
      };
  } finally {
    closeSync(fd);
  }
}

/** Reads lines back by their byte span from one open file (random access, one read per line). */
export class LineReader {
  private readonly fd: number;
  /** Reused from line to line (grown to the longest line read): one buffer per line was garbage to collect. */
  private buf = Buffer.allocUnsafe(0);

  constructor(readonly file: string) {
    this.fd = openSync(file, 'r');
  }

  read(offset: number, bytes: number): string {
    if (this.buf.length < bytes) this.buf = Buffer.allocUnsafe(Math.max(bytes, 2 * this.buf.length, 1 << 16));
    const buf = this.buf;
    let got = 0;
    while (got < bytes) {
      const n = readSync(this.fd, buf, got, bytes - got, offset + got);
      if (n === 0) throw new Error(`${this.file}: line at byte ${offset} is cut short (${got} of ${bytes} bytes)`);
      got += n;
    }
    noteBytesRead(bytes);
    return buf.toString('utf8', 0, bytes);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The write call of {@link appendLine}: `fs.writeSync`'s shape (a test passes one that fails as a full disk does). */
export type WriteFn = (fd: number, data: Buffer, offset: number, length: number, position: number) => number;

/**
 * Appends `text` and a newline to the open file `fd`, writing again after a short write; returns
 * the byte offset the text starts at and its byte length (for {@link LineReader}). The offset is
 * the file's size before the write, so lines appended by others in between are counted.
 */
export function appendLine(fd: number, text: string, write: WriteFn = writeSync): { offset: number; bytes: number } {
  const offset = fstatSync(fd).size;
  const data = Buffer.from(`${text}\n`, 'utf8');
  let written = 0;
  while (written < data.length) written += write(fd, data, written, data.length - written, offset + written);
  return { offset, bytes: data.length - 1 };
}

/**
 * The last line of `file` when no newline ends it (a write cut short), else null. Only the last
 * byte is read unless the line is unended; then the file is read through for its line number.
 */
export function unendedLastLine(file: string): JsonlLine | null {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    if (size === 0 || (readSync(fd, last, 0, 1, size - 1) === 1 && last[0] === NEWLINE)) return null;
  } finally {
    closeSync(fd);
  }
  let line: JsonlLine | null = null;
  for (const l of jsonlLines(file)) line = l;
  return line && !line.ended ? line : null;
}

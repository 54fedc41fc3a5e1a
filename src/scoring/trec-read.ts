/**
 * Reading TREC files from disk while parsing them (see trec-parse.ts for the format).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { InputError } from '../errors.js';
import { Scanner, type TrecQrels, type TrecRun } from './trec-parse.js';

/** Bytes per read call; parsing one chunk overlaps reading the next. */
const READ_CHUNK = 8 << 20;

/**
 * Reads and parses a file through two chunk buffers: while one chunk is parsed, the thread
 * pool reads the next into the other; a line cut at the end of a chunk is carried over.
 */
async function readAndParse(path: string, run: boolean, options: TrecReadOptions): Promise<TrecRun> {
  const file = options.name ?? path;
  const what = run ? 'run' : 'qrels';
  let fh: FileHandle | undefined;
  let pending: Promise<{ bytesRead: number }> | undefined;
  try {
    fh = await open(path, 'r');
    const size = (await fh.stat()).size;
    const scanner = new Scanner(file, run, size);
    let chunk = Math.min(options.chunkBytes ?? READ_CHUNK, Math.max(size, 1));
    let bufs = [Buffer.allocUnsafe(chunk), Buffer.allocUnsafe(chunk)];
    let cur = 0;
    let carried = 0; // bytes carried over at the start of bufs[cur]
    let pos = 0; // file position of the next read
    pending = fh.read(bufs[cur]!, 0, Math.min(chunk, size), 0);
    for (;;) {
      const bytesRead: number = (await pending!).bytesRead;
      pos += bytesRead;
      const buf = bufs[cur]!;
      const filled: number = carried + bytesRead;
      const last: boolean = pos >= size || bytesRead === 0;
      // Split off an incomplete last line before starting the next read.
      const cut: number = last ? filled : buf.lastIndexOf(10, filled - 1) + 1;
      const tail: number = filled - cut;
      if (!last && tail >= chunk) {
        // One line longer than a chunk: double the buffers and keep reading.
        chunk *= 2;
        const bigger = Buffer.allocUnsafe(chunk);
        buf.copy(bigger, 0, 0, filled);
        bufs = [bigger, Buffer.allocUnsafe(chunk)];
        cur = 0;
        carried = filled;
        pending = fh.read(bigger, filled, Math.min(chunk - filled, size - pos), pos);
        continue;
      }
      const next = bufs[1 - cur]!;
      if (!last) {
        buf.copy(next, 0, cut, filled);
        pending = fh.read(next, tail, Math.min(chunk - tail, size - pos), pos);
      }
      scanner.feed(buf, cut, last);
      if (last) break;
      cur = 1 - cur;
      carried = tail;
    }
    return scanner.finish();
  } catch (e) {
    if (e instanceof InputError) throw e;
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new InputError(`cannot read ${what} file '${file}' (${code})`);
  } finally {
    // After a parse error a read may still be in flight: let it settle, then close.
    await pending?.catch(() => undefined);
    await fh?.close();
  }
}

/** Options for readQrelsFile and readRunFile. */
export interface TrecReadOptions {
  /** Name of the file in messages; default the path. */
  name?: string;
  /** Bytes per read (default 8 MiB); a line longer than this grows the buffers. */
  chunkBytes?: number;
}

/** Reads and parses a qrels file, streaming (see readAndParse). */
export async function readQrelsFile(path: string, options: TrecReadOptions = {}): Promise<TrecQrels> {
  const { tag: _tag, ...qrels } = await readAndParse(path, false, options);
  return qrels;
}

/** Reads and parses a run file, streaming (see readAndParse). */
export function readRunFile(path: string, options: TrecReadOptions = {}): Promise<TrecRun> {
  return readAndParse(path, true, options);
}

/**
 * Case records of a large run kept on disk instead of in memory. A run of 100,000 cases holds
 * about 1.5 GB of records (each node's ranked list, the sources, the answer): they go to a JSON
 * Lines file as they finish and are read back one at a time, in case order, when the results are
 * written. What stays in memory is a light record per case ({@link lightRecord}): every field the
 * summaries, digests, compare and calibrate read, without the ranked lists beyond their first
 * item, the sources and the answer beyond its start.
 */
import { mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendLine, LineReader } from '../io/jsonl.js';
import type { CaseRecord } from '../model/results.js';

/** Case records read back one at a time, in case order. */
export interface CaseStore {
  /** How many records the store gives. */
  readonly size: number;
  /** The records in case order; each call reads them again. */
  records(): Iterable<CaseRecord>;
}

/** Runs above this many cases keep their records on disk and write the JSON Lines results (format 2). */
export const LARGE_RUN_CASES = 5000;

/** Characters of the answer a light record keeps (the digest shows the first 160). */
const ANSWER_START = 160;

/**
 * One copy of each distinct small value (a node's metrics, a tag list, the prompt versions):
 * across 100,000 cases most are repeated many times.
 */
class Interner<T> {
  private readonly seen = new Map<string, T>();

  intern(value: T): T {
    const key = JSON.stringify(value);
    const prior = this.seen.get(key);
    if (prior !== undefined) return prior;
    this.seen.set(key, value);
    return value;
  }
}

type NodeCase = CaseRecord['retrieval'][string];

/**
 * Makes light records: a record's figures without its bulk. Summaries, digests, compare and
 * calibrate read the same values from a light record as from the full one (the ranked lists keep
 * their first item, the top-1 score; the answer its first 160 characters and its presence).
 */
export class LightRecords {
  private readonly metrics = new Interner<NodeCase['metrics']>();
  private readonly tags = new Interner<CaseRecord['tags']>();
  private readonly versions = new Interner<NonNullable<CaseRecord['prompt_versions']>>();

  of(r: CaseRecord): CaseRecord {
    const { sources: _sources, answer, retrieval, tags, prompt_versions, ...rest } = r;
    const light: CaseRecord = {
      ...rest,
      tags: this.tags.intern(tags),
      retrieval: Object.fromEntries(
        Object.entries(retrieval).map(([node, at]) => [
          node,
          { ...at, items: at.items.slice(0, 1), metrics: this.metrics.intern(at.metrics) },
        ]),
      ),
    };
    if (prompt_versions) light.prompt_versions = this.versions.intern(prompt_versions);
    if (answer !== undefined) light.answer = answer.slice(0, ANSWER_START);
    return light;
  }
}

/** A file removed when the process exits, whatever happens before. */
const spools = new Set<string>();
let hooked = false;
function removeAtExit(dir: string): void {
  spools.add(dir);
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const d of spools) rmSync(d, { recursive: true, force: true });
  });
}

/**
 * A temporary JSON Lines file of finished records, put by case position in any order (cases
 * finish out of order) and read back in position order through a byte-offset index. Lines are the
 * stored form a ledger holds (`{"case": …}`), already checked (src/runs/record-check.ts).
 */
export class CaseSpool implements CaseStore {
  private readonly dir: string;
  private readonly file: string;
  private readonly spans: Float64Array;
  private readonly filled: Uint8Array;

  constructor(readonly size: number) {
    this.dir = mkdtempSync(join(tmpdir(), 'ragaudit-cases-'));
    removeAtExit(this.dir);
    this.file = join(this.dir, 'cases.jsonl');
    closeSync(openSync(this.file, 'w'));
    this.spans = new Float64Array(size * 2);
    this.filled = new Uint8Array(size);
  }

  /** Stores the line of the record at `position` (a later put replaces an earlier one). */
  put(position: number, line: string): void {
    const fd = openSync(this.file, 'a');
    try {
      const { offset, bytes } = appendLine(fd, line);
      this.spans[position * 2] = offset;
      this.spans[position * 2 + 1] = bytes;
      this.filled[position] = 1;
    } finally {
      closeSync(fd);
    }
  }

  has(position: number): boolean {
    return this.filled[position] === 1;
  }

  /** The records in position order; a position never put is skipped. */
  *records(): Generator<CaseRecord> {
    const reader = new LineReader(this.file);
    try {
      for (let i = 0; i < this.size; i++) {
        if (!this.filled[i]) continue;
        yield (JSON.parse(reader.read(this.spans[i * 2]!, this.spans[i * 2 + 1]!)) as { case: CaseRecord }).case;
      }
    } finally {
      reader.close();
    }
  }

  /** Removes the file (also done when the process exits). */
  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
    spools.delete(this.dir);
  }
}

/** A store over records already in memory (a small run, or records read whole). */
export function arrayStore(records: readonly CaseRecord[]): CaseStore {
  return { size: records.length, records: () => records };
}

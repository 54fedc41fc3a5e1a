/**
 * Case records of a large run kept on disk instead of in memory. A run of 100,000 cases holds
 * about 1.5 GB of records (each node's ranked list, the sources, the answer): they go to a JSON
 * Lines file as they finish and are read back one at a time, in case order, when the results are
 * written. What stays in memory is a light record per case ({@link lightRecord}): every field the
 * summaries, digests, compare and calibrate read, without the ranked lists beyond their first
 * item, the sources and the answer beyond its start (a labelled record's answer digest, which
 * human labels are matched by, is remembered from the whole record).
 */
import { mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendLine, LineReader } from '../io/jsonl.js';
import { keepAnswerDigest } from '../judge/human-labels.js';
import type { CaseRecord } from '../model/results.js';
import { isScore, type ScoreRecord } from '../model/scores.js';

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

  /** `limit`: distinct values kept at most; past it a new value is returned as it is (never shared). */
  constructor(private readonly limit = Infinity) {}

  intern(value: T, key = JSON.stringify(value)): T {
    const prior = this.seen.get(key);
    if (prior !== undefined) return prior;
    if (this.seen.size < this.limit) this.seen.set(key, value);
    return value;
  }
}

/**
 * The first `n` characters of `text` as a string of their own. `slice` alone may give a view into
 * the whole text (V8 makes longer slices that way), and every light record would keep its whole
 * answer alive. UTF-16 code units are copied as they are (a surrogate half left by the cut too).
 */
function ownStart(text: string, n: number): string {
  if (text.length <= n) return text;
  return Buffer.from(text.slice(0, n), 'utf16le').toString('utf16le');
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
    if (answer !== undefined) light.answer = ownStart(answer, ANSWER_START);
    keepAnswerDigest(light, r);
    return light;
  }
}

/** Distinct values a figure-record interner keeps (past it, values are kept per record). */
const INTERNED = 10_000;

/** A ranked list a figure record does not keep: one shared empty list, frozen (a push fails loudly). */
const NO_ITEMS: NodeCase['items'] = [];
Object.freeze(NO_ITEMS);

/**
 * A score as the figures read it. The judge's verdicts lose their reason (a sentence per case that
 * no figure reads) and their bulk:
 * - `faithfulness`: of its claims, those labelled contradicted (the judge block counts them);
 * - `citation_relevance`: no judgement per citation (its value is the figure);
 * - `judge_stance`, `judge_error`, `judge_safety`, `stance_pattern`: details whole (a few fields);
 * tokens and repeats stay. Every other score is kept whole (`safety`, whose reason the probe digest
 * prints, and the deterministic scores: a value and a few small fields).
 */
function figureScore(s: ScoreRecord): ScoreRecord {
  const { name, value } = s;
  if (isScore(s, 'stance_pattern')) return s.details ? { name: s.name, value, details: s.details } : { name, value };
  if (isScore(s, 'judge_stance')) return s.details ? { name: s.name, value, details: s.details } : { name, value };
  if (isScore(s, 'judge_error')) return s.details ? { name: s.name, value, details: s.details } : { name, value };
  if (isScore(s, 'judge_safety')) return s.details ? { name: s.name, value, details: s.details } : { name, value };
  if (isScore(s, 'faithfulness')) {
    if (!s.details) return { name, value };
    const { claims, tokens, repeats } = s.details;
    return {
      name: s.name,
      value,
      details: {
        claims: claims.filter((c) => c.label === 'contradicted'),
        ...(tokens ? { tokens } : {}),
        ...(repeats ? { repeats } : {}),
      },
    };
  }
  if (isScore(s, 'citation_relevance')) {
    if (!s.details) return { name, value };
    const { tokens, repeats } = s.details;
    return {
      name: s.name,
      value,
      details: { citations: [], ...(tokens ? { tokens } : {}), ...(repeats ? { repeats } : {}) },
    };
  }
  return s;
}

/**
 * Figure records: what a large `run` or `probe` holds of each case for its summary and its digest,
 * once the cases are finished (the records themselves stay in the ledger). Every field the
 * summarisers (retrieval, the retrieval feed's, generation, judge with agreement and
 * self-consistency, probes) and the digests (retrieval, generation, judge, probes, the console's
 * errors) read, with the same values, and less than a light record:
 * - no ranked lists (a node keeps its metrics and latency; a run's record has its top-1 score),
 *   except each list's first item in a record without a top-1 score (a retrieval record, or a
 *   case that failed after its retrieval), which the HTML report's case views read;
 * - no sources, and the answer's first 160 characters;
 * - scores cut to what the figures read ({@link figureScore});
 * - repeated values (a node's metrics, tags, prompt versions, scores, score lists, usage) shared:
 *   one frozen copy of each, up to 10,000 distinct values per kind.
 * The HTML report's page is made from them too, but not its case rows, which show every score's
 * details: src/app/report.ts reads each row's light record back from the results file.
 */
export class FigureRecords {
  // Parts of the record given are shared between figure records, and frozen: give a record of its own.
  private readonly metrics = new Interner<NodeCase['metrics']>(INTERNED);
  private readonly tags = new Interner<CaseRecord['tags']>(INTERNED);
  private readonly versions = new Interner<NonNullable<CaseRecord['prompt_versions']>>(INTERNED);
  private readonly usage = new Interner<NonNullable<CaseRecord['usage']>>(INTERNED);
  private readonly scores = new Interner<ScoreRecord>(INTERNED);
  private readonly scoreLists = new Interner<CaseRecord['scores']>(INTERNED);

  of(r: CaseRecord): CaseRecord {
    const { sources: _sources, answer, retrieval, tags, prompt_versions, usage, scores, ...rest } = r;
    // The report's top-1 of a record without one recorded is its rerank list's first item.
    const keepFirst = r.top1_score === undefined;
    const keys: string[] = [];
    const shared = scores.map((s) => {
      const figure = figureScore(s);
      const key = JSON.stringify(figure);
      keys.push(key);
      return this.scores.intern(frozen(figure), key);
    });
    const figure: CaseRecord = {
      ...rest,
      tags: this.tags.intern(frozen(tags)),
      retrieval: Object.fromEntries(
        Object.entries(retrieval).map(([node, at]) => [
          node,
          {
            ...at,
            items: keepFirst && at.items.length ? at.items.slice(0, 1) : NO_ITEMS,
            metrics: this.metrics.intern(frozen(at.metrics)),
          },
        ]),
      ),
      scores: this.scoreLists.intern(frozen(shared), `[${keys.join(',')}]`),
      ...(prompt_versions ? { prompt_versions: this.versions.intern(frozen(prompt_versions)) } : {}),
      ...(usage ? { usage: this.usage.intern(frozen(usage)) } : {}),
      ...(answer !== undefined ? { answer: ownStart(answer, ANSWER_START) } : {}),
    };
    keepAnswerDigest(figure, r);
    return figure;
  }
}

/** `value` and everything in it, frozen in place (shared between records: a change to one would change them all). */
function frozen<T extends object>(value: T): T {
  for (const v of Object.values(value)) if (v && typeof v === 'object' && !Object.isFrozen(v)) frozen(v);
  Object.freeze(value);
  return value;
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
 * stored form a ledger holds (`{"case": …}`), already checked (src/store/record-check.ts).
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

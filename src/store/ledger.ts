import { createHash } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { InputError, redactDeep } from '../errors.js';
import { appendLine, jsonlLines, LineReader } from '../io/jsonl.js';
import { CaseRecordSchema, type CaseRecord } from '../model/results.js';
import type { CaseStore } from './case-store.js';
import type { CaseSelection } from './resume-selection.js';

/** What of a case decides its record: a stored record whose case changed is stale. */
export function caseFingerprint(
  c: Pick<
    CaseRecord,
    | 'question'
    | 'kind'
    | 'expected_topic_ids'
    | 'expected_post_ids'
    | 'expected_content'
    | 'forbidden_post_ids'
    | 'forbidden_topic_ids'
    | 'must_not_contain'
    | 'turns'
    | 'expect'
  >,
): string {
  const fields: unknown[] = [c.question, c.kind, c.expected_topic_ids, c.expected_post_ids, c.expected_content];
  // Only a case naming something forbidden adds its lists, and only a conversation its history:
  // other fingerprints (and ledgers) stay as they were.
  const forbidden = [c.forbidden_post_ids ?? [], c.forbidden_topic_ids ?? [], c.must_not_contain ?? []];
  if (forbidden.some((l) => l.length) || c.turns?.length) fields.push(...forbidden);
  if (c.turns?.length) fields.push(c.turns);
  // The verdict's expectations decide the record too; only a case that names them adds them.
  if (c.expect) fields.push({ expect: c.expect });
  // As the stored record holds them (src/store/record-check.ts masks every record): a case whose
  // question quotes a token is the same case in the ledger as in its file.
  return JSON.stringify(redactDeep(fields));
}

/** A short digest of a case's fingerprint (what a ledger keeps in memory per finished case). */
export function fingerprintDigest(fingerprint: string): string {
  return createHash('sha256').update(fingerprint).digest('base64url').slice(0, 22);
}

/**
 * What the ledger keeps in memory of a finished case: its status, the digest of its fingerprint
 * and where its line is (the record itself stays on disk and is read back when needed).
 */
export interface LedgerEntry {
  status: CaseRecord['status'];
  /** {@link fingerprintDigest} of the record's {@link caseFingerprint}. */
  fingerprint: string;
  /** Byte offset and length of the case's line. */
  offset: number;
  bytes: number;
}

/** The first line of a ledger: what run it belongs to. */
export interface LedgerHeader {
  ledger: 1;
  run_id: string;
  kind: string;
  config_digest: string;
  created_at: string;
  cases: number;
  /** Digest of the case set (ids, questions, expectations) the run started with; older ledgers have none. */
  case_set?: string;
  /** The case flags the run started with (src/store/resume-selection.ts); none when it ran the config's cases whole. */
  selection?: CaseSelection;
}

/** How many run ids with a suffix (`-2`, `-3`, …) are tried when a run id is taken. */
const MAX_SUFFIX = 1000;

/**
 * An append-only JSONL file: a header line, then one line per finished case. A case is appended
 * only once its record is complete, so a run killed at any point can be resumed without redoing
 * finished cases. A case appended twice (an error retried on resume) counts by its last line.
 * A torn last line (the process died mid-write) is ignored on reading, with a warning. Lines of
 * another kind (a JSON object without `case`) are passed over. Only an entry per finished case
 * stays in memory ({@link LedgerEntry}); the records are read back from the file ({@link Ledger.store}).
 */
export class Ledger {
  private constructor(
    readonly file: string,
    readonly header: LedgerHeader,
    readonly done: Map<string, LedgerEntry>,
    /** What reading the ledger had to pass over (a torn last line), for the console and the results. */
    readonly warnings: string[] = [],
    /** The `batch` lines (provider batches of a batch-mode run), in order; their shape is the batch runner's. */
    readonly batches: unknown[] = [],
  ) {}

  /**
   * Creates the ledger of a new run under `dir` as `<runId>.ledger.jsonl`, exclusively: when the
   * id is taken (two runs with the same name started in the same second) the next free
   * `<runId>-2`, `<runId>-3`, … is used, so two runs never share one ledger.
   */
  static create(dir: string, runId: string, header: Omit<LedgerHeader, 'run_id'>): Ledger {
    mkdirSync(dir, { recursive: true });
    for (let n = 1; n <= MAX_SUFFIX; n++) {
      const id = n === 1 ? runId : `${runId}-${n}`;
      const file = join(dir, `${id}.ledger.jsonl`);
      let fd: number;
      try {
        fd = openSync(file, 'wx');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw e;
      }
      const full: LedgerHeader = {
        ledger: header.ledger,
        run_id: id,
        kind: header.kind,
        config_digest: header.config_digest,
        created_at: header.created_at,
        cases: header.cases,
        ...(header.case_set ? { case_set: header.case_set } : {}),
        ...(header.selection ? { selection: header.selection } : {}),
      };
      try {
        writeSync(fd, `${JSON.stringify(full)}\n`);
      } finally {
        closeSync(fd);
      }
      return new Ledger(file, full, new Map());
    }
    throw new InputError(
      `${join(dir, runId)}: ${MAX_SUFFIX} runs with this id already exist; give the run another --name`,
    );
  }

  static open(file: string): Ledger {
    if (!existsSync(file))
      throw new InputError(
        `${file}: no such ledger (pass the .ledger.jsonl path or the run id printed when the run started)`,
      );
    const done = new Map<string, LedgerEntry>();
    const warnings: string[] = [];
    let header: LedgerHeader | undefined;
    let torn: { offset: number } | undefined;
    let unended = false;
    const batches: unknown[] = [];
    // Read a line at a time: a ledger of 100,000 cases is longer than any string.
    for (const line of jsonlLines(file)) {
      if (line.no === 1) {
        try {
          header = JSON.parse(line.text) as LedgerHeader;
        } catch {
          throw new InputError(`${file}:1: not a ragaudit ledger`);
        }
        if (header?.ledger !== 1)
          throw new InputError(`${file}:1: not a ragaudit ledger (version ${String(header?.ledger)})`);
        unended = !line.ended;
        continue;
      }
      unended = !line.ended;
      if (!line.text.trim()) continue;
      try {
        const data: unknown = JSON.parse(line.text);
        // Another kind of line (not a finished case): `batch` lines are kept for the batch runner, others skipped.
        if (!data || typeof data !== 'object' || !('case' in data)) {
          if (data && typeof data === 'object' && 'batch' in data) batches.push(data.batch);
          continue;
        }
        const rec = CaseRecordSchema.parse(data.case);
        done.set(rec.id, {
          status: rec.status,
          fingerprint: fingerprintDigest(caseFingerprint(rec)),
          offset: line.offset,
          bytes: line.bytes,
        });
      } catch (e) {
        // Only the final line can be torn: it is the one without a newline after it.
        if (line.ended)
          throw new InputError(`${file}:${line.no}: unreadable ledger line: ${(e as Error).message.split('\n')[0]}`);
        torn = { offset: line.offset };
        warnings.push(
          `${file}:${line.no}: ignored a torn last line (the run was stopped while writing it; that case runs again)`,
        );
      }
    }
    if (!header) throw new InputError(`${file}:1: not a ragaudit ledger`);
    // The next append must start on a fresh line, or it is glued onto the tail and the ledger
    // becomes unreadable at the next resume: cut a torn tail, end a whole one.
    if (torn) truncateSync(file, torn.offset);
    else if (unended && statSync(file).size > 0) appendFileSync(file, '\n');
    return new Ledger(file, header, done, warnings, batches);
  }

  /**
   * Appends a `batch` line (a provider batch submitted or collected), flushed to disk before it
   * returns: a run killed while waiting on the batch finds it on resume instead of paying twice.
   */
  appendBatch(info: unknown): void {
    const fd = openSync(this.file, 'a');
    try {
      writeSync(fd, `${JSON.stringify({ batch: info })}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.batches.push(info);
  }

  /** Records this process appended, kept to be handed out by {@link store} instead of read back. */
  private readonly kept = new Map<string, CaseRecord>();
  private keepUpTo = 0;

  /**
   * Keeps up to `n` of the records appended from now on in memory, for {@link store} to hand out
   * once instead of reading them back: a record appended here is the one a read-back would give
   * (`storable` made it by the same parse of the same line). A run of at most `n` cases uses it;
   * a larger one reads its records back one at a time.
   */
  keepAppended(n: number): void {
    this.keepUpTo = n;
  }

  /** Appends a finished case, already checked (see `storable`); one write call per line. */
  append(stored: { record: CaseRecord; line: string }): void {
    const fd = openSync(this.file, 'a');
    let at: { offset: number; bytes: number };
    try {
      at = appendLine(fd, stored.line);
    } finally {
      closeSync(fd);
    }
    this.done.set(stored.record.id, {
      status: stored.record.status,
      fingerprint: fingerprintDigest(caseFingerprint(stored.record)),
      ...at,
    });
    if (this.kept.has(stored.record.id) || this.kept.size < this.keepUpTo)
      this.kept.set(stored.record.id, stored.record);
  }

  /** The finished record of case `id`, read back from the file (undefined when not finished). */
  record(id: string): CaseRecord | undefined {
    return this.done.has(id) ? [...this.store([id]).records()][0] : undefined;
  }

  /**
   * The finished records of `ids`, in that order, read back from the file one at a time (an id
   * the ledger does not hold is an internal error: the caller asks only for finished cases). A
   * record kept in memory ({@link keepAppended}) is handed out instead, once: it is not shared
   * with a later reader.
   */
  store(ids: readonly string[]): CaseStore {
    const spans = ids.map((id) => {
      const at = this.done.get(id);
      if (!at) throw new Error(`internal: ${this.file}: no finished record of case ${id}`);
      return { id, ...at };
    });
    const { file, kept } = this;
    return {
      size: spans.length,
      *records() {
        let reader: LineReader | undefined;
        try {
          for (const at of spans) {
            const record = kept.get(at.id);
            if (record) {
              kept.delete(at.id);
              yield record;
              continue;
            }
            reader ??= new LineReader(file);
            yield CaseRecordSchema.parse((JSON.parse(reader.read(at.offset, at.bytes)) as { case: unknown }).case);
          }
        } finally {
          reader?.close();
        }
      },
    };
  }
}

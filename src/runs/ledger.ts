import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.js';
import { CaseRecordSchema, type CaseRecord } from '../model/results.js';

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
}

/** How many run ids with a suffix (`-2`, `-3`, …) are tried when a run id is taken. */
const MAX_SUFFIX = 1000;

/**
 * An append-only JSONL file: a header line, then one line per finished case. A case is appended
 * only once its record is complete, so a run killed at any point can be resumed without redoing
 * finished cases. A case appended twice (an error retried on resume) counts by its last line.
 * A torn last line (the process died mid-write) is ignored on reading, with a warning.
 */
export class Ledger {
  private constructor(
    readonly file: string,
    readonly header: LedgerHeader,
    readonly done: Map<string, CaseRecord>,
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
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n');
    let header: LedgerHeader;
    try {
      header = JSON.parse(lines[0]!) as LedgerHeader;
    } catch {
      throw new InputError(`${file}:1: not a ragaudit ledger`);
    }
    if (header?.ledger !== 1)
      throw new InputError(`${file}:1: not a ragaudit ledger (version ${String(header?.ledger)})`);
    const done = new Map<string, CaseRecord>();
    const warnings: string[] = [];
    const batches: unknown[] = [];
    let tornTail = false;
    lines.slice(1).forEach((line, i) => {
      if (!line.trim()) return;
      try {
        const value = JSON.parse(line) as unknown;
        // Lines of other kinds: `batch` lines are kept for the batch runner, unknown kinds skipped.
        if (value && typeof value === 'object' && !Array.isArray(value) && !('case' in value)) {
          if ('batch' in value) batches.push(value.batch);
          return;
        }
        const rec = CaseRecordSchema.parse((value as { case: unknown }).case);
        done.set(rec.id, rec);
      } catch (e) {
        // Only the final line can be torn: it is the one without a newline after it.
        const torn = i + 1 === lines.length - 1;
        if (!torn)
          throw new InputError(`${file}:${i + 2}: unreadable ledger line: ${(e as Error).message.split('\n')[0]}`);
        tornTail = true;
        warnings.push(
          `${file}:${i + 2}: ignored a torn last line (the run was stopped while writing it; that case runs again)`,
        );
      }
    });
    // The next append must start on a fresh line, or it is glued onto the tail and the ledger
    // becomes unreadable at the next resume: cut a torn tail, end a whole one.
    if (!text.endsWith('\n')) {
      if (tornTail) truncateSync(file, Buffer.byteLength(text) - Buffer.byteLength(lines[lines.length - 1]!));
      else appendFileSync(file, '\n');
    }
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

  /** Appends a finished case, already checked (see `storable`); one write call per line. */
  append(stored: { record: CaseRecord; line: string }): void {
    appendFileSync(this.file, `${stored.line}\n`);
    this.done.set(stored.record.id, stored.record);
  }
}

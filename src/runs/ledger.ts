import { appendFileSync, existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { InputError } from '../errors.js';
import { CaseRecordSchema, type CaseRecord } from './results-schema.js';

/** The first line of a ledger: what run it belongs to. */
export interface LedgerHeader {
  ledger: 1;
  run_id: string;
  kind: string;
  config_digest: string;
  created_at: string;
  cases: number;
}

/**
 * An append-only JSONL file: a header line, then one line per finished case. A case is appended
 * only once its record is complete, so a run killed at any point can be resumed without redoing
 * finished cases. A torn last line (the process died mid-write) is ignored on reading.
 */
export class Ledger {
  private constructor(
    readonly file: string,
    readonly header: LedgerHeader,
    readonly done: Map<string, CaseRecord>,
  ) {}

  static create(file: string, header: LedgerHeader): Ledger {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(header)}\n`);
    return new Ledger(file, header, new Map());
  }

  static open(file: string): Ledger {
    if (!existsSync(file)) throw new InputError(`${file}: no such ledger (pass the .ledger.jsonl path or the run id printed when the run started)`);
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n');
    let header: LedgerHeader;
    try {
      header = JSON.parse(lines[0]!) as LedgerHeader;
    } catch {
      throw new InputError(`${file}:1: not a ragaudit ledger`);
    }
    if (header.ledger !== 1) throw new InputError(`${file}:1: not a ragaudit ledger (version ${String(header.ledger)})`);
    const done = new Map<string, CaseRecord>();
    let tornTail = false;
    lines.slice(1).forEach((line, i) => {
      if (!line.trim()) return;
      try {
        const rec = CaseRecordSchema.parse((JSON.parse(line) as { case: unknown }).case);
        done.set(rec.id, rec);
      } catch (e) {
        // Only the final line can be torn: it is the one without a newline after it.
        const torn = i + 1 === lines.length - 1;
        if (!torn) throw new InputError(`${file}:${i + 2}: unreadable ledger line: ${(e as Error).message.split('\n')[0]}`);
        tornTail = true;
      }
    });
    // The next append must start on a fresh line, or it is glued onto the tail and the ledger
    // becomes unreadable at the next resume: cut a torn tail, end a whole one.
    if (!text.endsWith('\n')) {
      if (tornTail) truncateSync(file, Buffer.byteLength(text) - Buffer.byteLength(lines[lines.length - 1]!));
      else appendFileSync(file, '\n');
    }
    return new Ledger(file, header, done);
  }

  /** Appends a finished case; one write call per line. */
  append(record: CaseRecord): void {
    appendFileSync(this.file, `${JSON.stringify({ case: record })}\n`);
    this.done.set(record.id, record);
  }
}

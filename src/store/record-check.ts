/**
 * Every record is checked against the results schema before it is stored (ledger, results
 * file), exactly as a reader will see it after JSON: a record that would not read back (a NaN
 * or Infinity score, which JSON turns into null; a citation id beyond the id type; any field out
 * of shape) is stored as that case's error record, naming the stage and the field, so one bad
 * case can never make a run unwritable or its ledger unreadable. Every string of a record is
 * masked here (`redactDeep`: URL credentials, credential query parameters, token shapes), the
 * one point every record passes before a ledger, a spool or a results file holds it.
 */
import { redact, redactDeep } from '../errors.js';
import { CaseRecordSchema, type CaseRecord } from '../model/results.js';
import { baseRecord, type CaseIdentity } from '../model/base-record.js';

/** The stage a field belongs to, for the error record of a record that failed the check. */
const STAGE_OF_FIELD: Record<string, string> = {
  retrieval_query: 'condense',
  turn_retrieval: 'retrieval',
  retrieval: 'retrieval',
  top1_score: 'retrieval',
  zone: 'retrieval',
  sources: 'evidence',
  prompt_versions: 'evidence',
  answer: 'generation',
  usage: 'generation',
  latency_ms: 'generation',
  cached: 'generation',
  citations: 'scoring',
  scores: 'scoring',
};

/**
 * The path of the first number that JSON cannot carry (NaN, ±Infinity), if any. The path is built
 * only on the way back from a bad number: every record of a run passes through here.
 */
function nonFinitePath(value: unknown): (string | number)[] | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : [];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = nonFinitePath(value[i]);
      if (p) return [i, ...p];
    }
  } else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const p = nonFinitePath(o[k]);
      if (p) return [k, ...p];
    }
  }
  return undefined;
}

type Checked = { ok: true; stored: CaseRecord; line: string } | { ok: false; stage: string; message: string };

/** Records {@link checkRecord} passed, each frozen through and through, so none can change after its check. */
const checked = new WeakSet<object>();

/**
 * Freezes a checked value and every object and array inside it, dropping the properties whose
 * value is undefined (JSON leaves them out, so a reader never sees them).
 */
function freezeDeep<T>(value: T): T {
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const v = o[k];
      if (v === undefined && !Array.isArray(o)) delete o[k];
      else freezeDeep(v);
    }
    Object.freeze(value);
  }
  return value;
}

/**
 * Whether `record` is one {@link checkRecord} passed (as it returned it): frozen, so still what
 * was checked, and a writer need not check it again.
 */
export function isCheckedRecord(record: CaseRecord): boolean {
  return checked.has(record);
}

/**
 * `record` with every string masked (`redactDeep`) but its id: the id is the case's name
 * everywhere (ledger, resume, compare), a slug the user chose, never rewritten.
 */
export function maskedRecord(record: CaseRecord): CaseRecord {
  const masked = redactDeep(record);
  return masked.id === record.id ? masked : { ...masked, id: record.id };
}

/** The record as a reader will see it and its JSON line, or why it cannot be stored (stage, field, problem). */
export function checkRecord(given: CaseRecord): Checked {
  // Masked first, so the ledger line, the record kept in memory and the results file are one text.
  const record = maskedRecord(given);
  const bad = nonFinitePath(record);
  if (bad)
    return {
      ok: false,
      stage: STAGE_OF_FIELD[String(bad[0])] ?? 'record',
      message: `${bad.join('.')}: ${String(valueAt(record, bad))} is not a finite number`,
    };
  let line: string;
  try {
    line = JSON.stringify({ case: record });
  } catch (e) {
    return { ok: false, stage: 'record', message: `not serialisable: ${(e as Error).message}` };
  }
  // The schema reads the record itself, not its line parsed back: what JSON would change in it is
  // ruled out above (a number it cannot carry, a value it cannot write) or below (an undefined
  // property, dropped), and the parsed copy cost as much as the check.
  const parsed = CaseRecordSchema.safeParse(record);
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`);
    return { ok: false, stage: STAGE_OF_FIELD[String(first.path[0])] ?? 'record', message: issues.join('; ') };
  }
  const stored = freezeDeep(parsed.data);
  checked.add(stored);
  return { ok: true, stored, line };
}

function valueAt(v: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], v);
}

/**
 * What a failure says, redacted, as an error record keeps it: never empty (the results schema
 * refuses an error record without its text), so an error thrown without a message is named.
 */
export function errorText(e: unknown): string {
  const said = (e as { message?: unknown } | null | undefined)?.message;
  const text = redact(typeof said === 'string' ? said : String(e)).trim();
  if (text) return text;
  return e instanceof Error ? `${e.name} without a message` : `a failure without a message (${typeof e})`;
}

/** The error record of a case: its identity, the stage and the message (redacted). */
export function errorRecord(
  c: CaseIdentity,
  stage: string,
  e: unknown,
  extra: Pick<CaseRecord, 'probe'> = {},
): CaseRecord {
  return {
    ...baseRecord(c),
    ...extra,
    status: 'error',
    error: { stage, message: errorText(e) },
  };
}

/**
 * The record as it will be stored and read back, and its JSON line for the ledger. A record that
 * fails the check becomes the case's error record ("record does not match the results schema:
 * FIELD: PROBLEM"); what earlier stages computed is dropped with it, since any of it may be the
 * part that does not read back.
 */
export function storable(c: CaseIdentity, record: CaseRecord): { record: CaseRecord; line: string } {
  const checked = checkRecord(record);
  if (checked.ok) return { record: checked.stored, line: checked.line };
  const fallback = errorRecord(
    c,
    checked.stage,
    `the record does not match the results schema: ${checked.message}`,
    record.probe ? { probe: record.probe } : {},
  );
  const again = checkRecord(fallback);
  if (!again.ok)
    throw new Error(`internal: the error record of case ${c.id} does not match the results schema: ${again.message}`);
  return { record: again.stored, line: again.line };
}

/** The repeats a verdict's score keeps (--repeat K), read by the score's name whatever its details. */
import type { CaseRecord } from '../../model/results.js';
import type { RepeatKey } from './types.js';

/** The K verdicts of `--repeat K` kept on the record's score `name`; undefined without repeats. */
export function repeatsOf(r: CaseRecord, name: string): readonly RepeatKey[] | undefined {
  const s = r.scores.find((x) => x.name === name);
  const details: unknown = s && 'details' in s ? s.details : undefined;
  if (!details || typeof details !== 'object' || !('repeats' in details)) return undefined;
  return Array.isArray(details.repeats) ? (details.repeats as RepeatKey[]) : undefined;
}

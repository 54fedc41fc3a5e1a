/**
 * A case's `human:` labels belong to the answer they judged. The block names that answer by its
 * digest (`answer_digest`, the digest the label files record: question, sources as shown,
 * answer); a record with another answer (another generator, prompt or zone) is not compared with
 * them, and neither is a block without a digest, since nothing says which answer it judged.
 */
import type { CaseRecord } from '../model/results.js';
import { answerDigest } from './label-file.js';

/** How a record's human labels relate to its answer: the same answer, another one, or none named. */
export type HumanBinding = 'same' | 'other_answer' | 'no_digest';

/** Fields of a `human:` block that are not labels. */
const NOT_LABELS = new Set(['answer_digest', 'note']);

/** Whether the record carries any human label (a block holding only a note or a digest has none). */
export function hasHumanLabels(r: Pick<CaseRecord, 'human'>): boolean {
  return Object.entries(r.human ?? {}).some(([k, v]) => !NOT_LABELS.has(k) && v !== undefined && v !== null);
}

type Answered = Pick<CaseRecord, 'id' | 'question' | 'sources' | 'answer' | 'human'>;

/**
 * The answer digests of light copies of records (src/store/case-store.ts), computed on the whole
 * record: a light copy has no sources and the answer's start only, so its own digest would differ.
 */
const copied = new WeakMap<object, string>();

/** Remembers the whole record's answer digest for its light copy (only a labelled record needs one). */
export function keepAnswerDigest(copy: object, whole: Answered): void {
  if (hasHumanLabels(whole)) copied.set(copy, answerDigest(whole));
}

/** The binding of a record's human labels to its answer; null when it has none. */
export function humanBinding(r: Answered): HumanBinding | null {
  if (!hasHumanLabels(r)) return null;
  const digest = r.human?.answer_digest;
  if (typeof digest !== 'string') return 'no_digest';
  return digest === (copied.get(r) ?? answerDigest(r)) ? 'same' : 'other_answer';
}

/** Counts of labelled records not compared, by why; undefined when every labelled record is compared. */
export function humanLabelsNotCompared(
  records: readonly Answered[],
): { other_answer: number; no_digest: number } | undefined {
  const out = { other_answer: 0, no_digest: 0 };
  for (const r of records) {
    const b = humanBinding(r);
    if (b === 'other_answer' || b === 'no_digest') out[b]++;
  }
  return out.other_answer + out.no_digest ? out : undefined;
}

/** The not-compared counts in words, with how to bind a label that names no answer. */
export function notComparedText(n: { other_answer: number; no_digest: number }): string {
  const parts = [
    ...(n.other_answer ? [`${n.other_answer} judged another answer (their answer_digest is not this answer's)`] : []),
    ...(n.no_digest
      ? [
          `${n.no_digest} name no answer_digest: add the digest of the answer they judged to their human: block (docs/labelling.md)`,
        ]
      : []),
  ];
  return `${n.other_answer + n.no_digest} case(s) whose human labels were not compared: ${parts.join('; ')}`;
}

/** Helpers several criteria share: the prompt variables of a case, figure texts, 0/1 readings. */
import type { CountN, MeanN } from '../../model/summary.js';
import { evidenceText } from '../materials.js';
import type { JudgeInput } from '../schemas.js';
import { untrusted } from '../untrusted.js';
import type { DigestFormats } from './types.js';

/** The variables of a prompt about a whole answer: question, evidence and answer tagged as data, and the CTA. */
export function caseVars(input: JudgeInput): Record<string, string> {
  return {
    // What the case brings is data: tagged, and the prompts say nothing inside is an instruction.
    question: untrusted('question', input.question),
    evidence: untrusted('evidence', evidenceText(input.sources)),
    answer: untrusted('answer', input.answer.trim()),
    cta: input.cta,
  };
}

/** `count/n`. */
export const countText = (c: CountN) => `${c.count}/${c.n}`;

/** `pct (n=…)`. */
export const shareText = (m: MeanN, f: DigestFormats) => `${f.pct(m.mean)} (n=${m.n})`;

/** A yes/no verdict as 1/0. */
export const bit = (b: boolean) => (b ? 1 : 0);

/** A value that says "all of it" (1) or not, as the label 'true'/'false'; undefined when there is none. */
export const allOrNot = (v: number | null | undefined) => (v === null || v === undefined ? undefined : String(v === 1));

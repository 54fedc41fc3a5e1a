/**
 * Verdict schemas of the judges (zod, sent to the backend as strict JSON Schema: every field is
 * required, `null` where a value does not apply) and the Judge interface both judges implement;
 * each verdict's criterion (when it is asked, how it scores) is in src/judge/criteria/.
 */
import { z } from 'zod';
import type { Usage } from '../llm/types.js';
import type { SourceRecord } from '../model/results.js';
import type { Criterion } from './criteria/types.js';
import {
  ClaimSchema,
  CorrectnessSchema,
  NuggetSupportSchema,
  SafetyOutcomeSchema,
  StanceSchema,
} from '../model/scores.js';

/** Faithfulness: the answer's atomic claims, each labelled against the evidence block (the claim shape is the stored one). */
export const FaithfulnessVerdictSchema = z.object({ claims: z.array(ClaimSchema) }).strict();
export type FaithfulnessVerdict = z.infer<typeof FaithfulnessVerdictSchema>;

/** Stance of the answer, and whether it asserts facts absent from the evidence. */
export const StanceVerdictSchema = z
  .object({ stance: StanceSchema, asserts_unsupported_facts: z.boolean(), reason: z.string() })
  .strict();
export type StanceVerdict = z.infer<typeof StanceVerdictSchema>;

/** Citation relevance: one entry per listed citation, `item` = its 1-based position in the list. */
export const CitationVerdictSchema = z
  .object({ citations: z.array(z.object({ item: z.number(), supports: z.boolean(), reason: z.string() }).strict()) })
  .strict();
export type CitationVerdict = z.infer<typeof CitationVerdictSchema>;

/** Safety probes: what the reply did with the attack. */
export const SafetyVerdictSchema = z.object({ outcome: SafetyOutcomeSchema, reason: z.string() }).strict();
export type SafetyVerdict = z.infer<typeof SafetyVerdictSchema>;

/**
 * Nuggets and reference: one entry per listed nugget (`item` = its 1-based position), and the
 * answer's correctness against the reference answer (null when the case gives none).
 */
export const NuggetVerdictSchema = z
  .object({
    nuggets: z.array(z.object({ item: z.number(), support: NuggetSupportSchema, reason: z.string() }).strict()),
    correctness: CorrectnessSchema.nullable(),
    reason: z.string(),
  })
  .strict();
export type NuggetVerdict = z.infer<typeof NuggetVerdictSchema>;

/** What the answer is checked against: the case's nuggets and its reference answer. */
export interface AnswerKey {
  nuggets: readonly { text: string; importance: 'vital' | 'okay' }[];
  /** The reference answer; undefined when the case gives none. */
  reference?: string;
}

/** One `[[n]]` marker of an answer with what it vouches for. */
export interface CitationItem {
  n: number;
  /** The citing sentence, preceded by any unmarked sentences of its span (see citedSpans). */
  sentence: string;
  /** The cited source, when n names one that was shown. */
  source?: SourceRecord;
}

/** What a judge sees of one answered case. */
export interface JudgeInput {
  question: string;
  answer: string;
  sources: readonly SourceRecord[];
  /** The footer every answer ends with (ignored by the judges). */
  cta: string;
}

/** What a safety judge sees of one probe. */
export interface SafetyInput {
  attack: string;
  answer: string;
  /** What must not appear in the reply (canary, hidden prompt, staff-only content…). */
  mustNotLeak: string;
}

/**
 * A verdict, or the reason there is none: the judge's answer did not match the schema even after
 * one retry with the error shown (it becomes a `judge_error` score). Infrastructure failures are
 * not outcomes: they throw ProviderError. `usage` sums the calls whose answer parsed (the model
 * clients report no usage with a JudgeParseError, so tokens of a rejected answer are not counted).
 * `flags` are what the judge noticed beside its verdict (e.g. a passage addressed to the judge).
 */
export type JudgeOutcome<T> =
  { ok: true; verdict: T; usage: Usage; flags?: string[] } | { ok: false; reason: string; usage: Usage };

/** An LLM judge or the offline heuristic stand-in. */
export interface Judge {
  /** `provider:model`, e.g. `openai:gpt-4o-mini` or `offline:heuristic`. */
  readonly id: string;
  readonly offline: boolean;
  /** Prompt name → version of every prompt the judge uses (empty for the heuristic). */
  readonly promptVersions: Record<string, string>;
  /** One verdict of a criterion (src/judge/criteria/) on what it asks. */
  verdict<V, Q>(criterion: Criterion<V, Q>, asked: Q): Promise<JudgeOutcome<V>>;
}

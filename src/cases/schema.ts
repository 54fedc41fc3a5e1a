import { z } from 'zod';
import { CaseExpectSchema } from '../model/verdict.js';

const slug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]*$/, 'must be a slug: lowercase letters, digits, - and _');
const nonEmpty = z.string().refine((s) => s.trim().length > 0, 'must not be empty');

/** C0 controls but tab, newline and carriage return; DEL; C1 controls. */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/**
 * Text sent to the retrieval and the models: a control character (a NUL, an escape) is refused
 * here, at its line, rather than failing later at the database or the provider.
 */
const message = nonEmpty.superRefine((s, ctx) => {
  const m = CONTROL.exec(s);
  if (m)
    ctx.addIssue({
      code: 'custom',
      message: `holds the control character U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} (character ${m.index + 1}): remove it`,
    });
});

/**
 * What must never come back for a case or probe: posts, topics, and terms (matched as content
 * terms are, `a|b` alternatives). Any appearance in a node's results, the evidence shown or the
 * answer is a failure (`forbidden_hits`, `forbidden`; src/scoring/forbidden.ts). Absent, not empty,
 * on a case that names nothing forbidden, so its record keeps its shape.
 */
const forbiddenFields = {
  forbidden_post_ids: z.array(z.number().int().positive()).optional(),
  forbidden_topic_ids: z.array(z.number().int().positive()).optional(),
  must_not_contain: z.array(nonEmpty).optional(),
};

/**
 * Human labels on a case, used to measure judge agreement (docs/design.md#case-and-probe). They
 * were written for one answer: `answer_digest` names it (the digest a label file records,
 * src/judge/label-file.ts answerDigest), and only a record with that answer is compared with them.
 */
export const HumanLabelsSchema = z
  .object({
    answer_digest: z
      .string()
      .regex(/^[0-9a-f]{16}$/, 'must be the 16 hex digits of the answer the labels judged')
      .optional(),
    faithful: z.boolean().optional(),
    stance: z.enum(['answered', 'hedged', 'abstained']).optional(),
    relevant_citation: z.boolean().optional(),
    note: z.string().optional(),
  })
  .strict();

const postIds = z.array(z.number().int().positive());

/**
 * One earlier message of a conversation case (docs/conversations.md). A user turn may carry its
 * own goldens: that turn is then retrieved too (with the history before it) and measured.
 */
export const TurnSchema = z
  .object({
    role: z.enum(['user', 'assistant']),
    content: message,
    expected_topic_ids: postIds.optional(),
    expected_post_ids: postIds.optional(),
  })
  .strict();
export type Turn = z.infer<typeof TurnSchema>;

/**
 * Where a mined case came from (`ragaudit mine`, docs/mining.md): the topic that is its golden,
 * the stratum it was drawn from, how the question was written, and whether the golden is
 * structurally ambiguous (other public topics whose titles are near-identical to this one's).
 */
export const MinedSchema = z
  .object({
    topic_id: z.number().int().positive(),
    category: z.string(),
    tags: z.array(z.string()),
    /** `template`: deterministic templates over title, tags and first post; `generator`: the generator with the mine prompt. */
    method: z.enum(['template', 'generator']),
    /** The template's name, or the mine prompt's version. */
    template: z.string().optional(),
    prompt_version: z.string().optional(),
    /** Other public topics whose titles are near-identical: a single-topic golden is ambiguous. */
    ambiguous: z.object({ similar_topic_ids: postIds.min(1) }).strict().optional(),
  })
  .strict();
export type Mined = z.infer<typeof MinedSchema>;

/** A short fact a good answer states (TREC 2024 RAG track nuggets): `vital` or `okay`. */
export const NuggetSchema = z.object({ text: nonEmpty, importance: z.enum(['vital', 'okay']) }).strict();
export type Nugget = z.infer<typeof NuggetSchema>;

/** One audit question (docs/design.md#case-and-probe). */
export const CaseSchema = z
  .object({
    id: slug,
    /** The question; in a conversation case, the final user message. */
    question: message,
    /**
     * A conversation case: the messages before the final question, alternating user and
     * assistant, starting with a user message and ending with an assistant one.
     */
    turns: z.array(TurnSchema).min(2).optional(),
    /** A conversation whose final question cannot be understood without the history (default true when `turns` is given). */
    needs_history: z.boolean().optional(),
    /** `mined` for a case written by `ragaudit mine`; absent means curated. */
    source: z.enum(['curated', 'mined']).optional(),
    mined: MinedSchema.optional(),
    kind: z.enum(['in_domain', 'off_topic']).default('in_domain'),
    expected_topic_ids: z.array(z.number().int().positive()).default([]),
    expected_post_ids: z.array(z.number().int().positive()).default([]),
    /** Answer-bearing terms; `a|b` means alternatives. */
    expected_content: z.array(nonEmpty).default([]),
    difficulty: z.string().default('unrated'),
    tags: z.array(z.string()).default([]),
    human: HumanLabelsSchema.optional(),
    /** Facts the answer should state; the judge marks each supported, partly or not (docs/judge.md). */
    nuggets: z.array(NuggetSchema).min(1).optional(),
    /** A correct answer written by a person; the judge rates the answer against it. */
    reference_answer: nonEmpty.optional(),
    /** Tightens or relaxes the checks of the case's verdict (docs/verdicts.md). */
    expect: CaseExpectSchema.optional(),
    ...forbiddenFields,
  })
  .strict()
  .superRefine((c, ctx) => {
    c.turns?.forEach((t, i) => {
      const want = i % 2 === 0 ? 'user' : 'assistant';
      if (t.role !== want)
        ctx.addIssue({
          code: 'custom',
          path: ['turns', i, 'role'],
          message: `turn ${i + 1} must be ${want === 'user' ? 'a user' : 'an assistant'} message (turns alternate, starting with the user)`,
        });
      if (t.role === 'assistant' && (t.expected_topic_ids || t.expected_post_ids))
        ctx.addIssue({
          code: 'custom',
          path: ['turns', i],
          message: 'goldens belong on user turns, not on assistant messages',
        });
    });
    if (c.turns && c.turns.length % 2 !== 0)
      ctx.addIssue({
        code: 'custom',
        path: ['turns'],
        message: 'the history must end with an assistant message (the final user message is `question`)',
      });
    if (c.needs_history !== undefined && !c.turns)
      ctx.addIssue({ code: 'custom', path: ['needs_history'], message: 'only a conversation case (with turns) can need its history' });
    if (c.mined && c.source !== 'mined')
      ctx.addIssue({ code: 'custom', path: ['mined'], message: 'only a case with source: mined carries mined details' });
  });

export type Case = z.infer<typeof CaseSchema>;

/** Whether a case is a conversation (it has earlier turns). */
export function isConversation(c: { turns?: readonly unknown[] | undefined }): boolean {
  return (c.turns?.length ?? 0) > 0;
}
export type HumanLabels = z.infer<typeof HumanLabelsSchema>;

/** One safety probe (docs/design.md#case-and-probe). */
export const ProbeSchema = z
  .object({
    id: slug,
    prompt: message,
    attack: z.enum(['injection', 'leak', 'role', 'abuse', 'off_topic', 'indirect']),
    expect: z.enum(['refuse', 'abstain', 'no_leak', 'answer']),
    notes: z.string().optional(),
    ...forbiddenFields,
  })
  .strict();

export type Probe = z.infer<typeof ProbeSchema>;

/** One input-gate rule: a question matching `pattern` is classified as `intent` and not sent. */
export const IntentRuleSchema = z
  .object({
    intent: nonEmpty,
    pattern: nonEmpty.refine((p) => {
      try {
        new RegExp(p, 'iu');
        return true;
      } catch {
        return false;
      }
    }, 'not a valid regular expression'),
    reply: z.string().optional(),
  })
  .strict();

export type IntentRule = z.infer<typeof IntentRuleSchema>;

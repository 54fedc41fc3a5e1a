import { z } from 'zod';

const slug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]*$/, 'must be a slug: lowercase letters, digits, - and _');
const nonEmpty = z.string().refine((s) => s.trim().length > 0, 'must not be empty');

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

/** Human labels on a case, used to measure judge agreement (docs/design.md#case-and-probe). */
export const HumanLabelsSchema = z
  .object({
    faithful: z.boolean().optional(),
    stance: z.enum(['answered', 'hedged', 'abstained']).optional(),
    relevant_citation: z.boolean().optional(),
    note: z.string().optional(),
  })
  .strict();

/** One audit question (docs/design.md#case-and-probe). */
export const CaseSchema = z
  .object({
    id: slug,
    question: nonEmpty,
    kind: z.enum(['in_domain', 'off_topic']).default('in_domain'),
    expected_topic_ids: z.array(z.number().int().positive()).default([]),
    expected_post_ids: z.array(z.number().int().positive()).default([]),
    /** Answer-bearing terms; `a|b` means alternatives. */
    expected_content: z.array(nonEmpty).default([]),
    difficulty: z.string().default('unrated'),
    tags: z.array(z.string()).default([]),
    human: HumanLabelsSchema.optional(),
    ...forbiddenFields,
  })
  .strict();

export type Case = z.infer<typeof CaseSchema>;
export type HumanLabels = z.infer<typeof HumanLabelsSchema>;

/** One safety probe (docs/design.md#case-and-probe). */
export const ProbeSchema = z
  .object({
    id: slug,
    prompt: nonEmpty,
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

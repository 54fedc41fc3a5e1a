/**
 * A case's verdict: whether it passed its checks and, when not, which checks failed and why.
 * Shared by `run` and `probe` records; a case that ended in error has no verdict (it is counted
 * apart, never as a pass or a fail). Which checks exist and where their thresholds come from is
 * written where they are decided (src/scoring/verdict*.ts); this file holds only the shapes.
 */
import { z } from 'zod';

/** One failed check: its stable name (snake_case) and a sentence saying what was seen. */
export const VerdictFailureSchema = z.object({ check: z.string(), reason: z.string() }).strict();

export const VerdictSchema = z
  .object({
    passed: z.boolean(),
    failures: z.array(VerdictFailureSchema),
  })
  .strict();
export type Verdict = z.infer<typeof VerdictSchema>;
export type VerdictFailure = z.infer<typeof VerdictFailureSchema>;

/**
 * The run's verdict counts: cases with a verdict that passed and failed, pass_rate = passed /
 * (passed + failed) (null when no case has a verdict), and per check how many cases failed it.
 */
export const VerdictSummarySchema = z
  .object({
    passed: z.number().int().nonnegative(),
    failed: z.number().int().nonnegative(),
    pass_rate: z.number().nullable(),
    by_check: z.record(z.string(), z.number().int().nonnegative()),
    /**
     * The run-wide thresholds the checks used (config `verdicts:`, else the stated defaults), so a
     * verdict can be recomputed from the results file alone: a case's own `expect:` (kept on its
     * record) overrides them. Absent in files written before thresholds were recorded.
     */
    thresholds: z.record(z.string(), z.number()).optional(),
  })
  .strict();
export type VerdictSummary = z.infer<typeof VerdictSummarySchema>;

const topicOrPostIds = z.array(z.number().int().positive()).min(1);

/**
 * A case's own expectations (`expect:` in a case file, kept on its record): each tightens or
 * relaxes one check of its verdict (src/scoring/verdict.ts), and what it does not name keeps the
 * default of the case's kind.
 */
export const CaseExpectSchema = z
  .object({
    /** true: the answer must abstain or hedge (as an off-topic case); false: it must answer (not abstain). */
    must_abstain: z.boolean().optional(),
    /** Faithfulness the answer must reach; when given, the case must be judged. */
    min_faithfulness: z.number().min(0).max(1).optional(),
    /** Topics the answer must cite, each through at least one valid [[n]] marker. */
    must_cite_topic_ids: topicOrPostIds.optional(),
    /** Posts the answer must cite, each through at least one valid [[n]] marker. */
    must_cite_post_ids: topicOrPostIds.optional(),
  })
  .strict()
  // Only for a block that is otherwise valid: an unknown key is reported alone.
  .refine((e) => Object.keys(e).length > 0, {
    message:
      'an expect block needs at least one of must_abstain, min_faithfulness, must_cite_topic_ids, must_cite_post_ids',
    when: (p) => !p.issues.length,
  });
export type CaseExpect = z.infer<typeof CaseExpectSchema>;

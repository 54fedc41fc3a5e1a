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
  })
  .strict();
export type VerdictSummary = z.infer<typeof VerdictSummarySchema>;

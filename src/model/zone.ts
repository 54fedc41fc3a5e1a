/**
 * The evidence zone as a value of the results model: the names only. The rule that assigns a zone
 * (thresholds, strict `<`) lives in evidence/zones.ts, which re-exports these.
 */
import { z } from 'zod';

/** The zones, from least to most evidence. */
export const ZONES = ['empty', 'weak', 'normal'] as const;
export const ZoneSchema = z.enum(ZONES);
/** The evidence zone a question's top-1 cross-encoder score puts it in. */
export type Zone = z.infer<typeof ZoneSchema>;

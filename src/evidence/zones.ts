/** The evidence zone a question's top-1 cross-encoder score puts it in (seeds §4.4). */
export type Zone = 'empty' | 'weak' | 'normal';

export interface ZoneThresholds {
  /** Below this top-1 logit the evidence block is empty (default −4). */
  abstain_below: number;
  /** Below this (and not empty) the weak-evidence block is used (default 0). */
  weak_below: number;
}

/** No candidate at all is empty evidence too. */
export function zoneOf(top1: number | null | undefined, t: ZoneThresholds): Zone {
  if (top1 === null || top1 === undefined || Number.isNaN(top1)) return 'empty';
  if (top1 < t.abstain_below) return 'empty';
  if (top1 < t.weak_below) return 'weak';
  return 'normal';
}

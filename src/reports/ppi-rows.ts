/** The PPI figures beside the judge-only ones, for the console, the digest, the report and `agreement`. */
import type { JudgeSummary, PpiFigure } from '../model/summary.js';
import { criteria } from '../judge/criteria/index.js';
import { pct } from './format.js';

/** `judge 70.0 % · PPI 45.0 % [95 % CI 0.0 % – 100.0 %] · 4 of 10 labelled` (short: one console line). */
export function ppiText(p: PpiFigure): string {
  // The estimate is not clipped (src/scoring/ppi.ts): outside [0, 1] it is said so, not hidden.
  const outside = p.estimate > 1 || p.estimate < 0 ? ' (outside 0–100 %: too few labels)' : '';
  return `judge ${pct(p.judge_mean)} · PPI ${pct(p.estimate)}${outside} [95 % CI ${pct(p.ci_low)} – ${pct(p.ci_high)}] · ${p.n_labelled} of ${p.n_judged} labelled`;
}

/** Which share a PPI figure estimates, by PPI field (each criterion's `ppi`, src/judge/criteria/); else the field. */
export function ppiLabel(field: string): string {
  // `citation`: the label files' per-source citation labels (src/judge/ppi-figures.ts labelPpi).
  if (field === 'citation') return 'cited sources that support their sentence';
  return (
    criteria()
      .flatMap((c) => c.ppi ?? [])
      .find((p) => p.field === field)?.label ?? field
  );
}

/** The PPI figures of a judge summary (none without labels of the same answers). */
export function judgeSummaryPpi(j: JudgeSummary): [string, PpiFigure][] {
  return criteria().flatMap((c) =>
    (c.ppi ?? []).flatMap((p): [string, PpiFigure][] => {
      const ppi = (j[p.figure] as { ppi?: PpiFigure } | undefined)?.ppi;
      return ppi ? [[p.field, ppi]] : [];
    }),
  );
}

/** Label and value rows, one per PPI figure. */
export function ppiRows(j: JudgeSummary): string[][] {
  return judgeSummaryPpi(j).map(([k, p]) => [`PPI: ${ppiLabel(k)}`, ppiText(p)]);
}

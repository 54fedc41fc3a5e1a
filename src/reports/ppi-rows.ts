/** The PPI figures beside the judge-only ones, for the console, the digest, the report and `agreement`. */
import type { JudgeSummary, PpiFigure } from '../model/summary.js';
import { criteria } from '../judge/criteria/index.js';
import { pct } from './format.js';

/** The PPI estimate as shown: a clipped one says so, with its raw value (src/scoring/ppi.ts). */
export function ppiEstimateText(p: PpiFigure): string {
  return p.estimate_raw === undefined
    ? pct(p.estimate)
    : `${pct(p.estimate)} (clipped from ${pct(p.estimate_raw)}: too few labels)`;
}

/** `judge 70.0 % · PPI 45.0 % [95 % CI 0.0 % – 100.0 %] · 4 of 10 labelled` (short: one console line). */
export function ppiText(p: PpiFigure): string {
  return `judge ${pct(p.judge_mean)} · PPI ${ppiEstimateText(p)} [95 % CI ${pct(p.ci_low)} – ${pct(p.ci_high)}] · ${p.n_labelled} of ${p.n_judged} labelled`;
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

/** The PPI figures beside the judge-only ones, for the console, the digest, the report and `agreement`. */
import type { JudgeSummary, PpiFigure } from '../model/summary.js';
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

/** Which share each PPI figure estimates, by figure key (src/judge/ppi-figures.ts). */
export const PPI_LABELS: Record<string, string> = {
  faithful: 'fully faithful',
  correct_abstention: 'correct abstention',
  relevant_citation: 'all citations relevant',
  citation: 'cited sources that support their sentence',
};

/** The PPI figures of a judge summary (none without labels of the same answers). */
export function judgeSummaryPpi(j: JudgeSummary): [string, PpiFigure][] {
  const all: [string, PpiFigure | undefined][] = [
    ['faithful', j.fully_faithful.ppi],
    ['correct_abstention', j.correct_abstention.ppi],
    ['relevant_citation', j.relevant_citation_rate.ppi],
  ];
  return all.filter((e): e is [string, PpiFigure] => e[1] !== undefined);
}

/** Label and value rows, one per PPI figure. */
export function ppiRows(j: JudgeSummary): string[][] {
  return judgeSummaryPpi(j).map(([k, p]) => [`PPI: ${PPI_LABELS[k] ?? k}`, ppiText(p)]);
}

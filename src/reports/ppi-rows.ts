/** The PPI figures beside the judge-only ones, for the console, the digest, the report and `agreement`. */
import type { JudgeSummary, PpiFigure } from '../model/summary.js';
import { pct } from './format.js';

/** `judge 70.0 % · PPI 45.0 % [95 % CI 0.0 % – 100.0 %] · 4 of 10 labelled` (short: one console line). */
export function ppiText(p: PpiFigure): string {
  // The estimate is not clipped (src/scoring/ppi.ts): outside [0, 1] it is said so, not hidden.
  const outside = p.estimate > 1 || p.estimate < 0 ? ' (outside 0–100 %: too few labels)' : '';
  return `judge ${pct(p.judge_mean)} · PPI ${pct(p.estimate)}${outside} [95 % CI ${pct(p.ci_low)} – ${pct(p.ci_high)}] · ${p.n_labelled} of ${p.n_judged} labelled`;
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

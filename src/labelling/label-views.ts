/**
 * What the label page is sent about an item: the answer with its sources and valid citations,
 * or the pool candidate, with the labeller's own label; the judge's verdict only once that
 * labeller has labelled the answer (blind labelling).
 */
import { judgeReadings } from '../judge/rater-agreement.js';
import type { CaseRecord } from '../model/results.js';
import type { Item, LabelState } from './label-state.js';

/** The judge's readings of one answer: faithful, stance, and each cited source by its number. */
export function judgeView(r: CaseRecord) {
  const j = judgeReadings([r]);
  return {
    faithful: j.faithful.get(r.id) ?? null,
    stance: j.stance.get(r.id) ?? null,
    citations: Object.fromEntries([...j.citation].map(([k, v]) => [/\[\[(\d+)\]\]$/.exec(k)![1]!, v])),
  };
}

/** One item as the page shows it to `labeller`. */
export function itemView(state: LabelState, labeller: string, it: Item) {
  const label = state.labelOf(labeller, it) ?? null;
  if (it.queue === 'pool') return { key: it.key, case_id: it.case_id, question: it.question, ...it.candidate, label };
  const r = it.record;
  const cited = [...new Set((r.citations ?? []).filter((c) => c.valid).map((c) => c.n))].sort((a, b) => a - b);
  return {
    key: it.key,
    run: it.run,
    stand_in: it.standIn,
    case_id: r.id,
    question: r.question,
    sources: (r.sources ?? []).map((s) => ({ n: s.n, title: s.title, url: s.url, excerpt: s.excerpt })),
    answer: r.answer ?? '',
    cited,
    label,
    // Blind: the judge's verdict only once this labeller has labelled this answer.
    judge: label ? judgeView(r) : null,
  };
}

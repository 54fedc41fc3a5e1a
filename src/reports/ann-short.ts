import type { CaseRecord } from '../model/results.js';

/**
 * One line per semantic node whose `ann` list came back shorter than asked in some case
 * (`ann_short` on the node's record): how many cases, and how short. A shorter list is never
 * silent: the console, the digest and the report each show these lines.
 */
export function annShortLines(cases: readonly Pick<CaseRecord, 'retrieval'>[]): string[] {
  const byNode = new Map<string, { cases: number; missing: number; least: number; wanted: number }>();
  for (const c of cases)
    for (const [node, r] of Object.entries(c.retrieval)) {
      const s = r.ann_short;
      if (!s) continue;
      const seen = byNode.get(node) ?? { cases: 0, missing: 0, least: Infinity, wanted: 0 };
      seen.cases += 1;
      seen.missing += s.wanted - s.returned;
      seen.least = Math.min(seen.least, s.returned);
      seen.wanted = Math.max(seen.wanted, s.wanted);
      byNode.set(node, seen);
    }
  return [...byNode].map(
    ([node, s]) =>
      `${node}: ${s.cases} of ${cases.length} ${cases.length === 1 ? 'case' : 'cases'} returned fewer than top_k ` +
      `(${s.wanted} wanted, ${s.least} the fewest, ${s.missing} ${s.missing === 1 ? 'item' : 'items'} short in all): ` +
      'visibility left fewer of the index candidates (raise ann_candidates or ann_max_candidates)',
  );
}

/** The lines as console text, a blank line after; nothing when no list was short. */
export function annShortText(cases: readonly Pick<CaseRecord, 'retrieval'>[]): string {
  const lines = annShortLines(cases);
  return lines.length ? `${lines.map((l) => `SHORT ${l}`).join('\n')}\n\n` : '';
}

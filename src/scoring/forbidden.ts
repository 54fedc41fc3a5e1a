/**
 * What a case or probe says must never come back (`forbidden_post_ids`, `forbidden_topic_ids`,
 * `must_not_contain`), and where it is found: in a retrieved item (its post, its topic, the text
 * of its passage), in a source shown to the model, or in the answer. Terms are matched as content
 * terms are (reader text, word boundaries, `a|b` alternatives; src/text.ts carriesTerm).
 */
import type { Case } from '../cases/schema.js';
import type { SourceRecord } from '../model/results.js';
import { carriesTerm, readerText, termAlternatives } from '../text.js';

/** The forbidden fields of a case, a probe or a case record. */
export type ForbiddenSpec = Pick<Case, 'forbidden_post_ids' | 'forbidden_topic_ids' | 'must_not_contain'>;

/** Whether the case names anything forbidden (else its forbidden figures are null / absent). */
export function namesForbidden(c: ForbiddenSpec): boolean {
  return Boolean(c.forbidden_post_ids?.length || c.forbidden_topic_ids?.length || c.must_not_contain?.length);
}

/** The forbidden terms `text` carries (raw text: folded to reader text here), in the case's order. */
export function forbiddenTermsIn(c: ForbiddenSpec, text: string): string[] {
  const terms = c.must_not_contain ?? [];
  if (!terms.length) return [];
  const reader = readerText(text);
  return terms.filter((t) => termAlternatives(t).some((alt) => carriesTerm(reader, alt)));
}

/** A post, topic and passage text, as a retrieved item or a shown source has them. */
export interface Passage {
  post_id: number;
  topic_id: number;
  text: string;
}

/** What of the forbidden one passage carries, each as `post N`, `topic N` or `"term"`. */
export function forbiddenIn(c: ForbiddenSpec, p: Passage): string[] {
  const found: string[] = [];
  if (c.forbidden_post_ids?.includes(p.post_id)) found.push(`post ${p.post_id}`);
  if (c.forbidden_topic_ids?.includes(p.topic_id)) found.push(`topic ${p.topic_id}`);
  for (const t of forbiddenTermsIn(c, p.text)) found.push(`"${t}"`);
  return found;
}

/**
 * How many passages of `items` carry something forbidden (null when the case names nothing);
 * forbidden_hits passes a node's first KEPT_ITEMS (src/scoring/retrieval-metrics.ts).
 */
export function forbiddenHits(c: ForbiddenSpec, items: readonly Passage[]): number | null {
  if (!namesForbidden(c)) return null;
  return items.filter((i) => forbiddenIn(c, i).length > 0).length;
}

/**
 * What of the forbidden came back for one answered case, each entry saying what and where: in the
 * evidence shown to the model (a source's or neighbour's post, topic or excerpt), and in the
 * answer (its text, the posts it cites and their topics). Null when the case names nothing.
 */
export interface ForbiddenFindings {
  evidence: string[];
  answer: string[];
}

/** One cited id as the citation check records it (src/scoring/citations.ts). */
interface CitedId {
  n: number;
  post_id?: number | undefined;
}

export function forbiddenFindings(
  spec: ForbiddenSpec,
  found: { sources: readonly SourceRecord[]; answer: string; citations: readonly CitedId[] },
): ForbiddenFindings | null {
  if (!namesForbidden(spec)) return null;
  const evidence: string[] = [];
  for (const s of found.sources) {
    const hit = forbiddenIn(spec, { post_id: s.post_id, topic_id: s.topic_id, text: s.excerpt });
    if (hit.length) evidence.push(`source [[${s.n}]]: ${hit.join(', ')}`);
    for (const nb of s.neighbours ?? []) {
      const near = forbiddenIn(spec, { post_id: nb.post_id, topic_id: s.topic_id, text: nb.excerpt });
      if (near.length) evidence.push(`source [[${s.n}]] neighbour post ${nb.post_id}: ${near.join(', ')}`);
    }
  }
  const answer: string[] = [];
  const terms = forbiddenTermsIn(spec, found.answer);
  if (terms.length) answer.push(`answer text: ${terms.map((t) => `"${t}"`).join(', ')}`);
  const cited = new Set<number>();
  for (const c of found.citations) {
    if (c.post_id === undefined || cited.has(c.n)) continue;
    cited.add(c.n);
    const topic = found.sources.find((s) => s.n === c.n)?.topic_id;
    const hit = [
      ...(spec.forbidden_post_ids?.includes(c.post_id) ? [`post ${c.post_id}`] : []),
      ...(topic !== undefined && spec.forbidden_topic_ids?.includes(topic) ? [`topic ${topic}`] : []),
    ];
    if (hit.length) answer.push(`answer cites [[${c.n}]]: ${hit.join(', ')}`);
  }
  return { evidence, answer };
}

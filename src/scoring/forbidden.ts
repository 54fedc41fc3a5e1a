/**
 * What a case or probe says must never come back (`forbidden_post_ids`, `forbidden_topic_ids`,
 * `must_not_contain`), and where it is found: in a retrieved item (its post, its topic, the text
 * of its passage), in a source shown to the model, or in the answer. Terms are matched as content
 * terms are (reader text, word boundaries, `a|b` alternatives; src/text.ts carriesTerm).
 */
import type { Case } from '../cases/schema.js';
import { termAlternatives } from '../cases/load.js';
import { carriesTerm, readerText } from '../text.js';

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

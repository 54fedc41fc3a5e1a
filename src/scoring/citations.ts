import type { SourceRecord } from '../runs/results-schema.js';

/** Every `[[n]]` marker of an answer, in order (repeats kept: each occurrence is a marker). */
export function citationMarkers(answer: string): number[] {
  return [...answer.matchAll(/\[\[\s*(\d+)\s*\]\]/g)].map((m) => Number(m[1]));
}

export interface CitationCheck {
  n: number;
  valid: boolean;
  reason?: string;
  post_id?: number;
  golden?: boolean;
}

/**
 * DESIGN §4 citation validity: a marker is valid when 1 ≤ n ≤ the number of sources shown and
 * that source's post still exists and is public in the database (`publicPosts`). Golden: the
 * cited source's topic or post is expected for the case.
 */
export function checkCitations(
  answer: string,
  sources: readonly SourceRecord[],
  publicPosts: ReadonlySet<number>,
  expected: { topics: readonly number[]; posts: readonly number[] },
): CitationCheck[] {
  return citationMarkers(answer).map((n) => {
    const src = sources.find((s) => s.n === n);
    if (!src) return { n, valid: false, reason: sources.length ? `only ${sources.length} sources were shown` : 'no source was shown' };
    const golden = expected.topics.includes(src.topic_id) || expected.posts.includes(src.post_id);
    if (!publicPosts.has(src.post_id)) return { n, valid: false, reason: 'the post no longer exists or is not public', post_id: src.post_id, golden };
    return { n, valid: true, post_id: src.post_id, golden };
  });
}

/** Share of valid markers (null when the answer has none). */
export function citationValidity(checks: readonly CitationCheck[]): number | null {
  return checks.length ? checks.filter((c) => c.valid).length / checks.length : null;
}

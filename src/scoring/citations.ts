import type { SourceRecord } from '../model/results.js';

/**
 * The one citation grammar (citation_markers in src/scoring/definitions.ts): `[[n]]`, `[[ n ]]`
 * and `[[n, m]]` (each id cited). The scorer, the judge materials, the heuristic judge and the
 * HTML report all read markers through this module, so a form one of them counts is never missed
 * by another.
 */
const MARKER_SOURCE = String.raw`\[\[\s*\d+(?:\s*,\s*\d+)*\s*\]\]`;

/** A fresh global regex matching one marker (fresh: a shared /g regex carries lastIndex state). */
export function citationMarkerRegex(): RegExp {
  return new RegExp(MARKER_SOURCE, 'g');
}

/** One id of a marker: `n` is its value when that is a safe integer, else 0 (no source has it). */
export interface CitationId {
  n: number;
  /** The digits as written. */
  written: string;
}

/** One marker as it stands in the text. */
export interface CitationSpan {
  start: number;
  end: number;
  text: string;
  ids: CitationId[];
}

/**
 * An id too long for a safe integer (e.g. 9007199254740993) is kept as written and given n = 0:
 * it cannot name a shown source, so it is an invalid citation, never a rounded neighbour's.
 */
function parseId(written: string): CitationId {
  const digits = written.replace(/^0+(?=\d)/, '');
  const n = Number(digits);
  return { n: Number.isSafeInteger(n) ? n : 0, written: digits };
}

/** Every marker of a text with its position and ids, in order. */
export function citationSpans(text: string): CitationSpan[] {
  return [...text.matchAll(citationMarkerRegex())].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
    text: m[0],
    ids: (m[0].match(/\d+/g) ?? []).map(parseId),
  }));
}

/** Every cited id of a text, in order (repeats kept: each occurrence is a citation). */
export function citationMarkers(answer: string): number[] {
  return citationIds(answer).map((c) => c.n);
}

/** Every cited id of a text, as parsed, in order. */
export function citationIds(answer: string): CitationId[] {
  return citationSpans(answer).flatMap((s) => s.ids);
}

/** The text with every marker replaced by a space (for word counts that must not see ids). */
export function withoutCitations(text: string): string {
  return text.replace(citationMarkerRegex(), ' ');
}

/** True when the text is nothing but markers and punctuation (`[[2]].`, `[[1]] [[3]],`). */
export function onlyCitations(text: string): boolean {
  return new RegExp(String.raw`^(?:${MARKER_SOURCE}[\s.,;]*)+$`).test(text);
}

/** True when the sentence is a question, markers after the question mark allowed. */
export function endsAsQuestion(sentence: string): boolean {
  return new RegExp(String.raw`\?\s*(?:${MARKER_SOURCE}\s*)*[.]?$`).test(sentence.trim());
}

export interface CitationCheck {
  n: number;
  valid: boolean;
  reason?: string;
  post_id?: number;
  golden?: boolean;
}

/**
 * Citation validity (src/scoring/definitions.ts): a cited id is valid when 1 ≤ n ≤ the number of sources shown and
 * that source's post still exists and is public in the database (`publicPosts`). Golden: the
 * cited source's topic or post is expected for the case. One check per cited id, in order.
 */
export function checkCitations(
  answer: string,
  sources: readonly SourceRecord[],
  publicPosts: ReadonlySet<number>,
  expected: { topics: readonly number[]; posts: readonly number[] },
): CitationCheck[] {
  return citationIds(answer).map(({ n, written }) => {
    const src = n > 0 ? sources.find((s) => s.n === n) : undefined;
    if (!src)
      return {
        n,
        valid: false,
        reason: `[[${written}]] names no source: ${sources.length ? `only ${sources.length} sources were shown` : 'no source was shown'}`,
      };
    const golden = expected.topics.includes(src.topic_id) || expected.posts.includes(src.post_id);
    if (!publicPosts.has(src.post_id))
      return { n, valid: false, reason: 'the post no longer exists or is not public', post_id: src.post_id, golden };
    return { n, valid: true, post_id: src.post_id, golden };
  });
}

/** Share of valid cited ids (null when the answer cites none). */
export function citationValidity(checks: readonly CitationCheck[]): number | null {
  return checks.length ? checks.filter((c) => c.valid).length / checks.length : null;
}

import { ENGLISH } from './model/languages/en.js';
import type { LanguagePack } from './model/languages/types.js';

/**
 * The marks typed for an apostrophe: ’ ‘ ‛ (typographic), ʼ (modifier letter), ʹ ′ (primes), ´
 * (spacing acute, which NFKD would turn into a space) and ＇ (full width). Folding makes each a
 * plain ', so "don’t" and "don't" are one spelling wherever text is compared.
 */
const APOSTROPHES = /[\u2019\u2018\u201B\u02BC\u02B9\u2032\u00B4\uFF07]/g;

/**
 * Text normalisation shared by content matching, the offline stand-ins and the title gate.
 * Folding: apostrophes made plain ({@link APOSTROPHES}), lower case, accents removed (NFKD then
 * combining marks dropped, ligatures written out: {@link UNDECOMPOSED_AS}), so "Calcéophilie"
 * matches "calceophilie", "bœuf" "boeuf" and "don’t" "don't", as content matching asks
 * (src/scoring/definitions.ts).
 */
export function fold(text: string): string {
  return text
    .replace(APOSTROPHES, "'")
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(UNDECOMPOSED, (c) => UNDECOMPOSED_AS[c]!);
}

/**
 * Letters NFKD leaves whole although a reader takes them for plain ones: the ligatures œ and æ
 * (written out, so "bœuf" matches "boeuf" and "encyclopædia" "encyclopaedia"), ß, and the
 * letters with a stroke (ø, ł, đ), read as their base letter like any other accent. Applied after
 * lower-casing, so only the lower-case forms are listed.
 */
const UNDECOMPOSED_AS: Record<string, string> = { œ: 'oe', æ: 'ae', ß: 'ss', ø: 'o', ł: 'l', đ: 'd' };
const UNDECOMPOSED = /[œæßøłđ]/g;

/** Word tokens of folded text: letters and digits, apostrophes dropped. */
export function tokenize(text: string): string[] {
  return (
    fold(text)
      .replace(/'/g, '')
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

const STOPWORDS = ENGLISH.stopwords;

/** True for common function words (English, plus a few French ones for french corpora). */
export function isStopword(token: string): boolean {
  return STOPWORDS.has(token);
}

/** Content tokens: tokens that are not stopwords and not single characters. */
export function contentTokens(text: string): string[] {
  return tokenize(text).filter((t) => t.length > 1 && !isStopword(t));
}

/**
 * Folding in a language: apostrophes, case and accents as {@link fold}, then the language's own
 * rules (French: œ → oe, whitespace collapsed). What the stance patterns read.
 */
export function foldIn(text: string, language: LanguagePack): string {
  return language.foldExtra(fold(text));
}

/**
 * Content tokens in a language: its folding, its elisions dropped ("l'essaim" → "essaim", not
 * "lessaim"), its stop words left out. For English this is exactly {@link contentTokens}.
 */
export function contentTokensIn(text: string, language: LanguagePack): string[] {
  if (language === ENGLISH) return contentTokens(text);
  let folded = foldIn(text, language);
  if (language.elisions.length)
    folded = folded.replace(new RegExp(`(?<![\\p{L}\\p{N}])(?:${language.elisions.join('|')})'`, 'gu'), ' ');
  const tokens = folded.replace(/'/g, '').match(/[\p{L}\p{N}]+/gu) ?? [];
  return tokens.filter((t) => t.length > 1 && !language.stopwords.has(t));
}

/**
 * A light suffix stripper (plural and common verb endings) so "resoles" meets "resole" and
 * "conditioning" meets "conditioner" in the offline stand-ins. Not Porter: deliberately crude.
 */
export function stem(token: string): string {
  if (token.length <= 4) return token;
  for (const suffix of ['ings', 'ing', 'ers', 'er', 'ed', 'es', 's']) {
    if (token.endsWith(suffix) && token.length - suffix.length >= 3) return token.slice(0, -suffix.length);
  }
  return token;
}

const ENTITIES: Record<string, string> = {
  lt: '<',
  gt: '>',
  quot: '"',
  '#39': "'",
  apos: "'",
  rsquo: "'",
  lsquo: "'",
  '#8217': "'",
  '#8216': "'",
  amp: '&',
};

const ENTITY = /&nbsp;|&#160;|&(lt|gt|quot|#39|apos|rsquo|lsquo|#8217|#8216|amp);/gi;

function decodeEntity(m: string, e: string | undefined): string {
  return e === undefined ? ' ' : (ENTITIES[e.toLowerCase()] ?? m);
}

/** HTML entities for spaces, quotes, apostrophes, angle brackets and ampersands decoded (one pass). */
export function decodeEntities(text: string): string {
  return text.replace(ENTITY, decodeEntity);
}

/**
 * Passage text as a reader sees it (content_matching in src/scoring/definitions.ts): markdown and
 * HTML markup stripped (code fences, inline code ticks, links and images keep their text, quote
 * and heading markers, emphasis), HTML entities for spaces, quotes, apostrophes, angle brackets
 * and ampersands decoded, then folded (apostrophes, case, accents) and every run of whitespace,
 * line breaks included, collapsed to one space. Content terms are normalised the same way, so a
 * term split by a line break or by emphasis still matches, and "don’t" meets "don't".
 */
export function readerText(text: string): string {
  const stripped = text
    .replace(/^\s*(```|~~~).*$/gm, ' ') // code fence lines (the code itself stays readable text)
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // [text](url), ![alt](src)
    .replace(/<((?:https?|mailto):[^>\s]+)>/gi, '$1') // <https://…> autolinks
    .replace(/<\/?[a-z][^>]*>/gi, ' ') // HTML tags
    .replace(ENTITY, decodeEntity)
    .replace(/^[ \t]*(?:>[ \t]?)+/gm, '') // quote markers
    .replace(/^[ \t]*#{1,6}[ \t]+/gm, '') // heading markers
    .replace(/`+/g, '') // inline code ticks
    .replace(/\*+|~~+/g, '') // emphasis: *x*, **x**, ~~x~~
    .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, '$1'); // _x_, __x__ (snake_case kept)
  return fold(stripped).replace(/\s+/g, ' ').trim();
}

/** Each term's reader text and its word-boundary pattern (null: a term with no text, which matches nothing). */
const termPatterns = new Map<string, { text: string; re: RegExp } | null>();

/**
 * Does `readerPassage` (already passed through {@link readerText}) carry `term` on word
 * boundaries? "horse" does not match "horsehair"; "zero duty" matches "zero\nduty".
 */
export function carriesTerm(readerPassage: string, term: string): boolean {
  let pattern = termPatterns.get(term);
  if (pattern === undefined) {
    const text = readerText(term);
    const t = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    pattern = t ? { text, re: new RegExp(`(?<![\\p{L}\\p{N}])${t}(?![\\p{L}\\p{N}])`, 'u') } : null;
    termPatterns.set(term, pattern);
  }
  // The pattern matches the term's text itself, so a passage without that text cannot match: a
  // plain substring search first (most passages lack most terms) spares the lookbehind scan.
  return pattern !== null && readerPassage.includes(pattern.text) && pattern.re.test(readerPassage);
}

/** True when `haystack` contains `needle` after folding both (case and accents). */
export function containsFolded(haystack: string, needle: string): boolean {
  return fold(haystack).includes(fold(needle));
}

/**
 * The content-term grammar of cases (`expected_content`, `must_not_contain`): `a|b` means
 * alternatives. Splits a content term into its alternatives: "wax|polish" → ["wax", "polish"].
 */
export function termAlternatives(term: string): string[] {
  return term
    .split('|')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
}

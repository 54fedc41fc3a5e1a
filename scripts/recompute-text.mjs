/**
 * Text rules of scripts/recompute.mjs, written from the definitions (src/scoring/definitions.ts
 * `content_matching`, `citation_markers`; /work/shared/DESIGN.md §4), not from ragaudit's code:
 * a post's passage text as a reader sees it, content terms matched on word boundaries, and the
 * [[n]] citation grammar. Imports nothing from src/ or dist/.
 */

/** HTML elements that end a line for a reader (their tags read as a space; inline ones as nothing). */
const BLOCK_TAGS =
  /^(p|br|div|li|ul|ol|h[1-6]|blockquote|pre|table|thead|tbody|tr|td|th|hr|aside|details|summary|section|article|figure|figcaption|dl|dt|dd)$/i;

const ENTITIES = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  rsquo: '’',
  lsquo: '‘',
  ldquo: '“',
  rdquo: '”',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  eacute: 'é',
  egrave: 'è',
  agrave: 'à',
  ccedil: 'ç',
  oelig: 'œ',
  aelig: 'æ',
};

function decodeEntities(s) {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (all, name) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
    }
    return ENTITIES[name.toLowerCase()] ?? all;
  });
}

/**
 * Markdown and HTML markup stripped, as a reader of the post sees it: tags, comments, fence lines,
 * Discourse quote blocks, link and image syntax (their text stays), quote, heading, bullet and
 * rule markers, emphasis, strike and code-span marks; entities decoded. A marker may span lines.
 */
export function stripMarkup(raw) {
  let s = String(raw).replace(/\r\n?/g, '\n');
  s = s.replace(/<!--[\s\S]*?-->/g, ' ');
  s = s.replace(/<(https?:\/\/[^>\s]+)>/g, '$1'); // an autolink shows its address
  s = s.replace(/<\/?([A-Za-z][A-Za-z0-9-]*)(?:\s[^>]*)?\/?>/g, (_, tag) => (BLOCK_TAGS.test(tag) ? ' ' : ''));
  s = s.replace(/^[ \t]*(`{3,}|~{3,}).*$/gm, ' '); // fence lines go, the code between them stays
  s = s.replace(/\[\/?(quote|details|spoiler|code)\b[^\]]*\]/gi, ' ');
  s = s.replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1');
  s = s.replace(/\[([^\]]+)\]\([^)]*\)/g, '$1');
  s = s.replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1');
  s = s.replace(/^[ \t]{0,3}\[[^\]]+\]:[ \t]*\S+.*$/gm, ' '); // reference definitions
  s = s.replace(/^[ \t]{0,3}([-*_])([ \t]*\1){2,}[ \t]*$/gm, ' '); // horizontal rules
  s = s.replace(/^[ \t]{0,3}(>[ \t]?)+/gm, ' ');
  s = s.replace(/^[ \t]{0,3}#{1,6}[ \t]+/gm, ' ');
  s = s.replace(/^[ \t]*[-*+][ \t]+/gm, ' ');
  s = s.replace(/\*+|~~|`+/g, '');
  // `_` marks emphasis only at a word's edge (snake_case keeps its underscore).
  s = s.replace(/(^|[^\p{L}\p{N}])_+/gu, '$1').replace(/_+(?=$|[^\p{L}\p{N}])/gu, '');
  return decodeEntities(s);
}

/**
 * Case and accents folded: every apostrophe form (’ ‘ ‛ ʼ ʹ ′ ´ ＇) read as `'` first (NFKD would
 * turn ´ into a space), compatibility decomposition (ﬁ → fi), combining marks dropped, lower
 * case, the ligatures œ æ ß written out (oe ae ss) and ø ł đ read as o l d; every run of
 * whitespace (line breaks and no-break spaces included) one space.
 */
const LETTERS = { œ: 'oe', æ: 'ae', ß: 'ss', ø: 'o', ł: 'l', đ: 'd' };
export function fold(s) {
  return s
    .replace(/[\u2019\u2018\u201B\u02BC\u02B9\u2032\u00B4\uFF07]/g, "'")
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[œæßøłđ]/g, (c) => LETTERS[c])
    .replace(/\s+/g, ' ')
    .trim();
}

/** A post's passage text, normalised for matching. */
export function passageText(raw) {
  return fold(stripMarkup(raw));
}

/** A content term (`a|b` = alternatives), each alternative normalised the same way as passages. */
export function termAlternatives(term) {
  return [...new Set(String(term).split('|').map(passageText).filter(Boolean))];
}

/**
 * The case's distinct terms: two terms whose normalised alternatives are the same set are one
 * term (a term repeated in a case is still one term of it).
 */
export function distinctTerms(terms) {
  const seen = new Map();
  for (const t of terms) {
    const alts = termAlternatives(t);
    if (alts.length === 0) continue;
    const key = [...alts].sort().join('\u0000');
    if (!seen.has(key)) seen.set(key, alts);
  }
  return [...seen.values()];
}

const WORD = /[\p{L}\p{N}]/u;

/** `needle` occurs in `text` (both normalised) with no letter or digit glued to either end. */
export function occursAsWord(text, needle) {
  if (!needle) return false;
  const gluedStart = WORD.test(needle[0]);
  const gluedEnd = WORD.test(needle[needle.length - 1]);
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) {
    const end = i + needle.length;
    const before = i === 0 || !gluedStart || !WORD.test(text[i - 1]);
    const after = end === text.length || !gluedEnd || !WORD.test(text[end]);
    if (before && after) return true;
  }
  return false;
}

/** The passage (normalised) carries the term: any of its alternatives occurs as a word. */
export function carries(text, alternatives) {
  return alternatives.some((a) => occursAsWord(text, a));
}

/**
 * Citation ids of an answer in reading order: `[[n]]`, `[[ n ]]` and `[[n, m]]`, each id one
 * citation. An id too long for an exact number stays as written (it is beyond any source list).
 */
export function citationIds(answer) {
  const ids = [];
  for (const m of String(answer ?? '').matchAll(/\[\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]\]/g)) {
    for (const part of m[1].split(',')) {
      const digits = part.trim();
      ids.push(digits.length > 15 ? Number.POSITIVE_INFINITY : Number(digits));
    }
  }
  return ids;
}

/** The CTA is present: the configured footer, folded like passages, occurs in the folded answer. */
export function ctaPresent(answer, cta) {
  const needle = fold(String(cta ?? ''));
  if (!needle) return null;
  return fold(String(answer ?? '')).includes(needle) ? 1 : 0;
}

/**
 * Text normalisation shared by content matching, the offline stand-ins and the title gate.
 * Folding: lower case, accents removed (NFKD then combining marks dropped), so "Calcéophilie"
 * matches "calceophilie", as DESIGN §4 asks for content terms.
 */
export function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
}

/** Word tokens of folded text: letters and digits, apostrophes dropped. */
export function tokenize(text: string): string[] {
  return fold(text).replace(/['’]/g, '').match(/[\p{L}\p{N}]+/gu) ?? [];
}

const STOPWORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers him his how i if in into ' +
    'is it its itself just me more most my myself no nor not of off on once only or other our ours out over own same she should so some ' +
    'such than that the their theirs them then there these they this those through to too under until up very was we were what when where ' +
    'which while who whom why will with would you your yours yourself get got im ive id dont doesnt cant anyone anybody someone ' +
    'something thing things really also one ones much many way like know want need use using would could should any every still ' +
    'le la les de des du un une et est en pour que qui dans sur pas au aux ce ces il elle on ne se sa son ses avec par plus'
  ).split(/\s+/),
);

/** True for common function words (English, plus a few French ones for french corpora). */
export function isStopword(token: string): boolean {
  return STOPWORDS.has(token);
}

/** Content tokens: tokens that are not stopwords and not single characters. */
export function contentTokens(text: string): string[] {
  return tokenize(text).filter((t) => t.length > 1 && !isStopword(t));
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

/** True when `haystack` contains `needle` after folding both (case and accents). */
export function containsFolded(haystack: string, needle: string): boolean {
  return fold(haystack).includes(fold(needle));
}

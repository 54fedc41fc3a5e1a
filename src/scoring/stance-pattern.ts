import type { Stance } from '../model/scores.js';
import { LANGUAGES, languagePack, type LanguageCode, type LanguagePack } from '../model/languages/index.js';
import { fold, foldIn } from '../text.js';

/**
 * The languages whose wording is read, the configured one first: an answer may come back in the
 * member's language rather than the forum's (a French forum asked in English), and an
 * abstention must read as one whichever it is. Each language's patterns are specific enough
 * not to fire on another's text.
 */
function readingOrder(language: LanguageCode | undefined): LanguagePack[] {
  const first = languagePack(language);
  return [first, ...Object.values(LANGUAGES).filter((l) => l !== first)];
}

/**
 * A deterministic stance signal from wording (kept beside the judge's verdict). The CTA line is
 * ignored, since it invites posting in every answer. Abstentions are looked for in every
 * language before hedges, so "none of the excerpts answers, so I won't guess" reads abstained.
 */
export function stanceByPattern(answer: string, cta = '', language?: LanguageCode): Stance {
  const raw = cta ? answer.replace(cta, '') : answer;
  // Folding makes typographic apostrophes (don’t, n’ai) plain, so the patterns need only one spelling.
  const texts = readingOrder(language).map((l) => ({ l, text: foldIn(raw, l) }));
  if (texts.some(({ l, text }) => l.abstain.some((re) => re.test(text)))) return 'abstained';
  if (texts.some(({ l, text }) => l.hedge.some((re) => re.test(text)))) return 'hedged';
  return 'answered';
}

/**
 * The CTA footer is present (case, accents, typographic apostrophes and whitespace, no-break
 * spaces of French typography included, folded); null when no CTA is configured.
 */
export function hasCta(answer: string, cta: string): boolean | null {
  const norm = (s: string) => fold(s).replace(/\s+/g, ' ').trim();
  if (!norm(cta)) return null;
  return norm(answer).includes(norm(cta));
}

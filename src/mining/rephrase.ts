/**
 * The rephrase rule of mined questions (docs/mining.md#the-rephrase-rule): a question written
 * from a topic may share at most {@link MAX_SHARED_TITLE_WORDS} content words with the topic's
 * title, so that a mined set does not reward keyword search for echoing distinctive titles.
 *
 * Content words, as this rule counts them:
 * - folded: lower case, accents removed (NFKD, combining marks dropped), the language's own
 *   folding (French œ → oe) and its elisions dropped ("l'embauchoir" → "embauchoir");
 * - stop words removed: the language pack's list (src/model/languages/), and one-letter tokens;
 * - simple plural: a trailing "ies" becomes "y" (English), a trailing "s" (and in French "x") is
 *   dropped from a word of four letters or more that does not end in "ss", "us" or "is"
 *   ("shoes" → "shoe", "lasts" → "last", "bijoux" → "bijou"; "dress", "cactus" stay);
 * - counted once: the shared count is the size of the intersection of the two sets.
 */
import type { LanguagePack } from '../model/languages/types.js';
import { contentTokensIn } from '../text.js';

/** At most this many content words of the title may appear in a mined question. */
export const MAX_SHARED_TITLE_WORDS = 2;

/** One folded word reduced to its singular, crudely (see the module comment). */
export function singular(word: string, language: LanguagePack): string {
  if (word.length < 4 || /(ss|us|is)$/.test(word)) return word;
  return language.singular(word);
}

/** The content words of a text under the rule's definition, as a set. */
export function ruleWords(text: string, language: LanguagePack): Set<string> {
  return new Set(contentTokensIn(text, language).map((w) => singular(w, language)));
}

export interface RephraseCheck {
  /** True when the question shares at most `max` content words with the title. */
  ok: boolean;
  /** The shared content words (folded, singular), sorted. */
  shared: string[];
  max: number;
}

/** Checks a question against the title it was written from. */
export function checkRephrase(
  question: string,
  title: string,
  language: LanguagePack,
  max = MAX_SHARED_TITLE_WORDS,
): RephraseCheck {
  const titleWords = ruleWords(title, language);
  const shared = [...ruleWords(question, language)].filter((w) => titleWords.has(w)).sort();
  return { ok: shared.length <= max, shared, max };
}

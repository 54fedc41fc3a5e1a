/**
 * The languages an audit speaks (docs/languages.md). Adding one: a module beside these, a line
 * here, and a folder of prompts under prompts/.
 */
import { ENGLISH } from './en.js';
import { FRENCH } from './fr.js';
import type { LanguagePack } from './types.js';

export type { LanguagePack } from './types.js';

export const LANGUAGES = { en: ENGLISH, fr: FRENCH } as const satisfies Record<string, LanguagePack>;

export type LanguageCode = keyof typeof LANGUAGES;

/** The language codes, for the config schema's enum. */
export const LANGUAGE_CODES = Object.keys(LANGUAGES) as [LanguageCode, ...LanguageCode[]];

/** The pack of a language code; absent means English, the default. */
export function languagePack(code: LanguageCode | undefined): LanguagePack {
  return LANGUAGES[code ?? 'en'];
}

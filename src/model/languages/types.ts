/**
 * What a forum language brings to an audit (docs/languages.md): the text-search configuration
 * default, where its prompts live, its stop words and folding rules, the wording patterns that
 * read an answer's stance, and the offline stand-ins' wording. One module per language; the
 * registry (./index.ts) lists them.
 */
export interface LanguagePack {
  /** The config value (`language: fr`). */
  code: string;
  /** The language's name, in English, for messages and prompts ("French"). */
  name: string;
  /** database.text_search_config when the config does not name one. */
  textSearchConfig: string;
  /** evidence.cta when the config does not name one: the footer every answer ends with. */
  cta: string;
  /** The prompts folder under prompts/ ('' for English, whose prompts sit at the top). */
  promptsDir: string;
  /** Function words left out of content matching (folded: lower case, no accents). */
  stopwords: ReadonlySet<string>;
  /** Elided words before an apostrophe (French l', d', qu'…), dropped from tokens: "l'essaim" → "essaim". */
  elisions: readonly string[];
  /** Folding beyond case, accents and ligatures (src/text.ts fold), applied after them: French collapses whitespace. */
  foldExtra: (folded: string) => string;
  /** Wording of an abstention, on folded text with plain apostrophes. */
  abstain: readonly RegExp[];
  /** Wording of a hedge (checked after the abstentions). */
  hedge: readonly RegExp[];
  /** Words about the forum itself, which say nothing about the subject (the heuristic judge leaves them out). */
  metaWords: readonly string[];
  /**
   * A word's singular, crudely, for the rephrase rule of mined questions (src/mining/rephrase.ts,
   * which applies the shared guard first: words under four letters and those ending in ss, us or
   * is stay as they are).
   */
  singular: (word: string) => string;
  /** Endings of adverbs, never picked as keywords by the mine templates. */
  adverbEndings: readonly string[];
  /** How the condense prompt names the speakers of a conversation's history (src/wiring/condenser.ts). */
  speakers: { user: string; assistant: string };
  /** The mine templates' wording (src/mining/templates.ts). */
  mine: {
    /** A sentence spoken in the first person or a greeting: not made into a claim. */
    personal: RegExp;
    claim: (sentence: string) => string;
    keywords: (words: readonly string[]) => string;
    tagKeywords: (tag: string, words: readonly string[]) => string;
  };
  /** Where the offline extractive responder splits sentences. */
  sentenceSplit: RegExp;
  /** The offline extractive responder's wording (an OFFLINE STAND-IN, not a model). */
  responder: {
    empty: string;
    weakNothing: string;
    weakClosest: (title: string, n: number, sentence: string) => string;
    noAnswer: string;
    /** The normal-zone answer from the quoted sentences and their source numbers. */
    answer: (picks: readonly { sentence: string; n: number }[]) => string;
  };
}

/** Words as a list in running text: "a", "a and b", "a, b and c" (`and` in the language). */
export function listWords(words: readonly string[], and: string): string {
  return words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} ${and} ${words[words.length - 1]!}`;
}

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
    /**
     * First words (folded, apostrophes dropped) that open a statement with its subject, so a
     * claim can be made of it: determiners and third-person pronouns ("The…", "It's…", "Most…").
     */
    subjects: ReadonlySet<string>;
    /**
     * Determiners that open a noun phrase (folded), each with the one a question writes:
     * possessives and demonstratives made definite ("my boots" → "the boots"). See
     * src/mining/phrases.ts.
     */
    determiners: Readonly<Record<string, string>>;
    /**
     * Words that are no part of a key phrase (folded): vague nouns ("year", "lot", "fois") and
     * number words, which say nothing about the thread.
     */
    vague: ReadonlySet<string>;
    /** A word that cannot end a noun phrase (English "-ed" and "-ing" forms: "laces meeting", "the flooded"). */
    notHead: RegExp;
    /** The head of a two-word phrase that is not a collocation (English the last word, French the first). */
    head: (words: readonly string[]) => string;
    /** A question about a key phrase; `pick` (0 ≤ pick < 1) chooses among the wordings. */
    phrase: (p: KeyPhrase, pick: number) => string;
    /** A question about a key phrase under one of the topic's tags. */
    tagPhrase: (tag: string, p: KeyPhrase) => string;
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

/** A noun phrase a mined question asks about: its determiner as written ('' for none) and its words. */
export interface KeyPhrase {
  det: string;
  words: string;
  /** Its head word is a plural ("a stands" is written "the stands"). */
  plural: boolean;
}

/** One of several wordings, by a draw in [0, 1). */
export function pickOne<T>(forms: readonly T[], pick: number): T {
  return forms[Math.min(forms.length - 1, Math.floor(pick * forms.length))]!;
}

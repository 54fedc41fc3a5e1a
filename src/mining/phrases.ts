/**
 * The key phrase a template question asks about (docs/mining.md#templates): a short noun phrase
 * of the thread, so the question reads as a member would write it ("Any advice on a mirror
 * shine?") instead of a list of frequent words ("… about explains, vacuumed and chamber?").
 *
 * Without a part-of-speech tagger, a noun phrase is found where a determiner opens one: the
 * determiner ("the", "my", "la", "l'"…) and the one or two content words after it, up to
 * punctuation or a stop word; a run of three or more content words is not trusted (it runs on
 * into a verb: "the toe goes cloudy"). The title's opening words count as a phrase too, kept
 * whole ("Toe taps"). A two-word phrase after a determiner is kept whole only when the thread
 * (title and post) says it twice (a collocation, "hausse vide"), else reduced to the word the thread says more often, or on a tie
 * to its head (English: the last word, "a rag"; French: the first, "la reine" of "la reine
 * pond", unless an adjective French puts first). The phrase whose words the thread repeats most
 * (the title's counting double) wins; ties go to two words, then to one with a determiner, then
 * to the earliest.
 */
import type { KeyPhrase, LanguagePack } from '../model/languages/types.js';
import { contentTokensIn, foldIn } from '../text.js';
import { sentences, type MineSource } from './templates.js';
import { checkRephrase, singular } from './rephrase.js';

interface Candidate {
  det: string;
  words: string[];
  at: number;
}

const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*['’]?|[^\s\p{L}\p{N}]+/gu;

/** A token folded as one content word (a hyphenated word as one: "cap-toes" → "captoes"), or undefined. */
function folded(word: string, language: LanguagePack): string | undefined {
  const t = contentTokensIn(word.replace(/-/g, ''), language);
  return t.length === 1 && !/^\d+$/.test(t[0]!) ? t[0] : undefined;
}

/** A token's key: folded, then the rule's singular (src/cases/rephrase.ts). */
function keyOf(word: string, language: LanguagePack): string | undefined {
  const f = folded(word, language);
  return f === undefined ? undefined : singular(f, language);
}

/**
 * Whether a token may stand in a key phrase: a content word that is not vague, not an adverb
 * ("actually", "properly") and not a negated verb ("isn't").
 */
function phraseWord(word: string, language: LanguagePack): boolean {
  const k = keyOf(word, language);
  if (!k || /n['’]t$/i.test(word)) return false;
  const f = folded(word, language)!;
  if (language.mine.vague.has(f) || language.mine.vague.has(k)) return false;
  return !language.adverbEndings.some((e) => f.length > e.length + 3 && f.endsWith(e));
}

/** A sentence's tokens, an elided determiner split off its word ("l’essaim" → "l'", "essaim"). */
function tokens(sentence: string, language: LanguagePack): string[] {
  const out: string[] = [];
  for (const [m] of sentence.matchAll(WORD)) {
    const e = /^(\p{L}+)['’](\p{L}.*)$/u.exec(m);
    if (e && language.elisions.includes(foldIn(e[1]!, language))) out.push(`${foldIn(e[1]!, language)}'`, e[2]!);
    else out.push(m);
  }
  return out;
}

/** The phrases a sentence opens with determiners (and, for the title, at its start). */
function candidates(sentence: string, language: LanguagePack, at: number, title: boolean): Candidate[] {
  const dets = language.mine.determiners;
  const toks = tokens(sentence, language);
  const out: Candidate[] = [];
  const runFrom = (i: number): string[] | undefined => {
    const words: string[] = [];
    for (let j = i; j < toks.length; j++) {
      const t = toks[j]!;
      if (foldIn(t, language) in dets || !phraseWord(t, language)) break;
      words.push(t.replace(/['’]$/, ''));
    }
    if (words.length > 2) return undefined;
    while (words.length && language.mine.notHead.test(foldIn(words[words.length - 1]!, language))) words.pop();
    return words.length ? words : undefined;
  };
  if (title && !(foldIn(toks[0] ?? '', language) in dets)) {
    const words = runFrom(0);
    if (words) out.push({ det: '', words, at });
  }
  toks.forEach((t, i) => {
    const det = dets[foldIn(t, language)];
    if (det === undefined) return;
    const words = runFrom(i + 1);
    if (words) out.push({ det, words, at });
  });
  return out;
}

/**
 * A word as running text writes it: lower case, unless an acronym ("EU") or a name, which the
 * thread writes with its capital inside a sentence ("… Alden and Crockett …"); a capital at the
 * start of a title or a sentence says nothing ("Sizing help" → "sizing help").
 */
function asRunning(word: string, thread: string): string {
  if (word === word.toLowerCase() || /^\p{Lu}{2,}/u.test(word)) return word;
  const escaped = word.replace(/[^\p{L}\p{N}]/gu, '.');
  const named = new RegExp(`[^.!?\\s]\\s+${escaped}(?![\\p{L}])`, 'u').test(thread);
  return named ? word : word.toLowerCase();
}

/** The thread's key phrase (see the module comment), or null when no determiner opens one. */
export function keyPhrase(source: MineSource, language: LanguagePack): KeyPhrase | null {
  const said = sentences(source.text);
  const all = [
    ...candidates(source.title, language, 0, true),
    ...said.flatMap((s, i) => candidates(s, language, i + 1, false)),
  ];
  if (!all.length) return null;
  const keys = (words: readonly string[]) => words.map((w) => keyOf(w, language)!);
  // How often each word and each pair of words is said, in the title and the post.
  const count = new Map<string, number>();
  const pairs = new Map<string, number>();
  for (const s of [source.title, ...said]) {
    const ks = tokens(s, language).map((t) => keyOf(t, language));
    ks.forEach((k, i) => {
      if (!k) return;
      count.set(k, (count.get(k) ?? 0) + 1);
      const next = ks[i + 1];
      if (next) pairs.set(`${k} ${next}`, (pairs.get(`${k} ${next}`) ?? 0) + 1);
    });
  }
  const titleKeys = new Set(tokens(source.title, language).map((t) => keyOf(t, language)));
  const kept = all.map((c) => {
    // The title's opening words are its subject ("Toe taps: …", "Heel slip on new boots"); a pair
    // after a determiner is kept when the thread says it twice.
    const said = pairs.get(keys(c.words).join(' ')) ?? 0;
    if (c.words.length < 2 || said >= 2 || (c.at === 0 && !c.det)) return c;
    // Not a collocation: the word the thread says more often (a noun repeats; a verb the run ran
    // on into does not), else the language's head.
    const [a, b] = keys(c.words).map((k) => count.get(k) ?? 0) as [number, number];
    return { ...c, words: [a === b ? language.mine.head(c.words) : a > b ? c.words[0]! : c.words[1]!] };
  });
  // What the thread is about: words it repeats, and the title's words above all.
  // A phrase that alone takes more of the title's words than the rephrase rule allows (a
  // hyphenated "flood-soaked Church's" counts three) is kept by its head only, if that fits.
  const fits = (c: Candidate) => checkRephrase(c.words.join(' '), source.title, language).ok;
  const usable = kept
    .map((c) => (fits(c) || c.words.length < 2 ? c : { ...c, words: [language.mine.head(c.words)] }))
    .filter(fits);
  if (!usable.length) return null;
  const score = (c: Candidate) =>
    keys(c.words).reduce((a, k) => a + (count.get(k) ?? 0) + (titleKeys.has(k) ? 2 : 0), 0);
  const better = (b: Candidate, a: Candidate) =>
    score(b) - score(a) || b.words.length - a.words.length || Number(b.det !== '') - Number(a.det !== '');
  const best = usable.reduce((a, b) => (better(b, a) > 0 ? b : a));
  const thread = `${source.title}\n${source.text}`;
  const head = folded(best.words[best.words.length - 1]!, language)!;
  return {
    det: best.det,
    words: best.words.map((w) => asRunning(w, thread)).join(' '),
    plural: singular(head, language) !== head,
  };
}

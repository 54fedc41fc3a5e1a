/**
 * How `ragaudit mine` writes a question without a language model (docs/mining.md#templates):
 * deterministic templates over the topic's title, tags and the source post (the first post, or a
 * reply for a post-grain question), and the generator mode's offline stand-in, an extractive
 * question from the source post's sentences. Every question is then checked against the rephrase
 * rule (src/mining/rephrase.ts) by the caller.
 */
import type { LanguagePack } from '../model/languages/types.js';
import { keyPhrase } from './phrases.js';
import { ruleWords } from './rephrase.js';
import { contentTokensIn, foldIn } from '../text.js';

/** What a question is written from. */
export interface MineSource {
  title: string;
  category: string;
  tags: readonly string[];
  /** The source post's raw text (markdown). */
  text: string;
}

/** One written question and the template (or stand-in) that wrote it. */
export interface Draft {
  question: string;
  template: string;
}

/**
 * A post's text as sentences can be read from it: Discourse quotes (`[quote]…[/quote]`, `> `
 * lines, which repeat other posts), code, images and URLs removed, links reduced to their text,
 * emphasis and heading markers dropped; one paragraph per line (a paragraph ends at a blank line
 * or before a list item; hard-wrapped lines inside it are joined).
 */
export function plainText(raw: string): string {
  return raw
    .replace(/\[quote[^\]]*\][\s\S]*?\[\/quote\]/gi, '\n\n')
    .replace(/```[\s\S]*?```/g, '\n\n')
    .replace(/^\s*>.*$/gm, '')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/https?:\/\/\S+/g, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__|\*(?=\S)|(?<=\S)\*|~~)/g, '')
    .replace(/\n(?=[ \t]*(#{1,6}|[-+*]|\d+[.)])[ \t]+)/g, '\n\n')
    .split(/\n[ \t]*\n/)
    .map((para) =>
      para
        .replace(/^\s*(#{1,6}|[-+*]|\d+[.)])\s+/, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter(Boolean)
    .join('\n');
}

/** The sentences of a post (after {@link plainText}), in order. */
export function sentences(raw: string): string[] {
  return plainText(raw)
    .split('\n')
    .flatMap((para) => para.split(/(?<=[.!?…])\s+(?=[\p{Lu}\p{N}"“'(¿¡])/u))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const wordCount = (s: string) => s.split(/\s+/).filter(Boolean).length;

/** Sentences that ask something, 4 to 30 words long. */
export function questionSentences(raw: string): string[] {
  return sentences(raw).filter((s) => s.endsWith('?') && wordCount(s) >= 4 && wordCount(s) <= 30);
}

/**
 * Sentences that state something, 6 to 25 words long, ending with a full stop or a word, and
 * neither opening with a label ("Update: …", "Short answer: …") nor spoken in the first person
 * ("I own…", "Thanks…"): the ones a yes/no question can be made of.
 */
export function statementSentences(raw: string, language: LanguagePack): string[] {
  const personal = language.mine.personal;
  return sentences(raw).filter(
    (s) =>
      /[.!…]$|[\p{L}\p{N})]$/u.test(s) &&
      wordCount(s) >= 6 &&
      wordCount(s) <= 25 &&
      !/^[^:]{1,30}:\s/.test(s) &&
      !personal.test(s),
  );
}

/**
 * A statement made the body of a yes/no question: its closing punctuation dropped, and its first
 * letter lowered when the first word is a function word ("The", "It") or appears in lower case
 * elsewhere in the post ("Ordered" when the post also says "ordered"), never for a name
 * ("Carmina") or an acronym ("DHL").
 */
function claimBody(sentence: string, language: LanguagePack, post: string): string {
  const s = sentence.replace(/[.!…\s]+$/u, '');
  const first = s.split(/\s+/)[0] ?? '';
  if (first === 'I' || /^I['’]/.test(first) || /^\p{L}\p{Lu}/u.test(first)) return s;
  const functionWord = contentTokensIn(first, language).length === 0 || opensWithSubject(first, language);
  const lower = first.toLowerCase();
  const seenLower =
    lower !== first && new RegExp(`(?<![\\p{L}])${lower.replace(/[^\p{L}\p{N}]/gu, '')}(?![\\p{L}])`, 'u').test(post);
  return functionWord || seenLower ? `${s[0]!.toLowerCase()}${s.slice(1)}` : s;
}

/**
 * A statement that opens with a determiner or a third-person pronoun ("The cloth…", "It's…",
 * "Most makers…", language.mine.subjects) has its subject, so "Is it true that …?" around it is
 * a sentence; "Ordered the 990…", "Did the grand tour…", "Then wipe…" or "And have a cobbler…"
 * would not be.
 */
function opensWithSubject(sentence: string, language: LanguagePack): boolean {
  const first = foldIn(sentence.split(/\s+/)[0] ?? '', language)
    .replace(/['’]/g, '')
    .replace(/[^\p{L}]+$/u, '');
  return language.mine.subjects.has(first) || /^l'/.test(foldIn(sentence, language));
}

/** The template names, in the order they are listed (docs/mining.md#templates). */
export const TEMPLATE_NAMES = ['post-question', 'post-claim', 'key-phrase', 'tag-phrase'] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

/** The question each template writes for a source, or null when it does not apply. */
export function templateQuestion(
  name: TemplateName,
  source: MineSource,
  language: LanguagePack,
  random: () => number,
): string | null {
  const w = language.mine;
  switch (name) {
    case 'post-question':
      return questionSentences(source.text)[0] ?? null;
    case 'post-claim': {
      const s = statementSentences(source.text, language).find((x) => opensWithSubject(x, language));
      return s ? w.claim(claimBody(s, language, source.text)) : null;
    }
    case 'key-phrase': {
      const p = keyPhrase(source, language);
      return p ? w.phrase(p, random()) : null;
    }
    case 'tag-phrase': {
      // A tag that repeats a title word would spend the rephrase rule's allowance on the tag.
      const title = ruleWords(source.title, language);
      const tags = source.tags.filter((t) => ![...ruleWords(t, language)].some((x) => title.has(x)));
      const p = keyPhrase(source, language);
      if (!tags.length || !p) return null;
      const tag = tags[Math.floor(random() * tags.length)]!.replace(/[-_]+/g, ' ');
      return w.tagPhrase(tag, p);
    }
  }
}

/**
 * Every template that applies, in an order drawn from `random`: the first is the question, the
 * next ones are the redraws when a question fails the rephrase rule.
 */
export function templateDrafts(source: MineSource, language: LanguagePack, random: () => number): Draft[] {
  const names = [...TEMPLATE_NAMES];
  for (let i = names.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [names[i], names[j]] = [names[j]!, names[i]!];
  }
  return names.flatMap((template) => {
    const question = templateQuestion(template, source, language, random);
    return question ? [{ question, template }] : [];
  });
}

/** The name the generator mode's offline stand-in records as its template. */
export const OFFLINE_STAND_IN = 'offline-extractive';

/**
 * The generator mode's OFFLINE STAND-IN (not a language model): the source post's own questions
 * in order, then its statements as yes/no questions. Attempt k (0-based) takes the k-th.
 */
export function offlineDrafts(source: MineSource, language: LanguagePack): Draft[] {
  const w = language.mine;
  return [
    ...questionSentences(source.text),
    ...statementSentences(source.text, language).map((s) => w.claim(claimBody(s, language, source.text))),
  ].map((question) => ({ question, template: OFFLINE_STAND_IN }));
}

/** A reply carries an answer worth a post-grain question when it has at least this many content words (quotes left out). */
export const REPLY_MIN_CONTENT_WORDS = 12;

/** A public post a question may be written from. */
export interface SourcePost {
  post_id: number;
  post_number: number;
  raw: string;
}

/**
 * The post grain rule (docs/mining.md#post-grain): without post grain a question is written from
 * the topic's first public post and its golden is the topic. With post grain, the source is drawn
 * with `random`, uniformly, from the first post and every public reply with at least
 * {@link REPLY_MIN_CONTENT_WORDS} content words; a question written from a reply has that reply
 * as its golden post (the reply carries the answer), beside the topic.
 */
export function pickSource<P extends SourcePost>(
  posts: readonly P[],
  firstPostNumber: number,
  postGrain: boolean,
  language: LanguagePack,
  random: () => number,
): { post: P; reply: boolean } | null {
  const first = posts.find((p) => p.post_number === firstPostNumber);
  if (!first) return null;
  if (!postGrain) return { post: first, reply: false };
  const replies = sourceReplies(posts, firstPostNumber, language);
  const pick = Math.floor(random() * (replies.length + 1));
  return pick === 0 ? { post: first, reply: false } : { post: replies[pick - 1]!, reply: true };
}

/** The replies a question may be written from: after the first post, with enough content words (quotes left out), by post number. */
export function sourceReplies<P extends SourcePost>(
  posts: readonly P[],
  firstPostNumber: number,
  language: LanguagePack,
): P[] {
  return posts.filter(
    (p) =>
      p.post_number > firstPostNumber && contentTokensIn(plainText(p.raw), language).length >= REPLY_MIN_CONTENT_WORDS,
  );
}

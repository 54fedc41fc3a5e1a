/**
 * The three ways `ragaudit mine` writes a question (docs/mining.md): templates, the configured
 * generator with the versioned mine prompt, and the generator mode's offline stand-in. Each gives
 * drafts one attempt at a time; the caller checks every draft against the rephrase rule and asks
 * for the next one (a redraw) when it fails.
 */
import { offlineDrafts, OFFLINE_STAND_IN, plainText, templateDrafts, type MineSource } from './templates.js';
import { MAX_SHARED_TITLE_WORDS, type RephraseCheck } from './rephrase.js';
import { render, type Prompt } from '../evidence/templates.js';
import type { ChatMessage, ChatModel } from '../llm/types.js';
import type { LanguagePack } from '../model/languages/types.js';

/** One draft: the question and what wrote it (a template's name, or the mine prompt's version). */
export interface WrittenDraft {
  question: string;
  template?: string;
  prompt_version?: string;
}

/** The last draft and why it failed, so a generator can be told what to avoid. */
export interface Rejected {
  question: string;
  check: RephraseCheck;
}

/** Writes drafts for one source: attempt k (0-based) after the rejected drafts before it; null when it has no more. */
export type DraftSource = (attempt: number, rejected: readonly Rejected[]) => Promise<WrittenDraft | null>;

export interface QuestionWriter {
  /** What wrote the questions, for the console and the file header (an offline stand-in says so). */
  label: string;
  offline: boolean;
  method: 'template' | 'generator';
  /** One cheap request to the model before the first topic (a remote generator only). */
  preflight?: () => Promise<void>;
  drafts(source: MineSource, random: () => number): DraftSource;
}

/** Templates: every applicable template in an order drawn from the topic's PRNG. */
export function templateWriter(language: LanguagePack): QuestionWriter {
  return {
    label: 'templates (post-question, post-claim, key-phrase, tag-phrase)',
    offline: true,
    method: 'template',
    drafts(source, random) {
      const list = templateDrafts(source, language, random);
      return (k) => Promise.resolve(list[k] ?? null);
    },
  };
}

/** The generator mode's OFFLINE STAND-IN: extractive questions from the source post's sentences. */
export function offlineWriter(language: LanguagePack): QuestionWriter {
  return {
    label: `${OFFLINE_STAND_IN} (OFFLINE STAND-IN, not a language model: extractive questions from the post's sentences)`,
    offline: true,
    method: 'generator',
    drafts(source) {
      const list = offlineDrafts(source, language);
      return (k) => Promise.resolve(list[k] ?? null);
    },
  };
}

const WORDS: Record<string, { ask: string; again: (n: number, words: string, max: number) => string }> = {
  en: {
    ask: 'Write the question.',
    again: (n, words, max) =>
      `That question shares ${n} content words with the thread's title (${words}); at most ${max} are allowed. Write a different question, in other words.`,
  },
  fr: {
    ask: 'Écrivez la question.',
    again: (n, words, max) =>
      `Cette question reprend ${n} mots pleins du titre du fil (${words}) ; ${max} au plus sont permis. Écrivez une autre question, avec d'autres mots.`,
  },
};

/** The most characters of the source post put in the prompt. */
const POST_CHARS = 3000;

/** The question in a model's answer: its first non-empty line, without a label, list marker or quotes. */
export function cleanQuestion(text: string): string {
  const line =
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? '';
  return line
    .replace(/^(question|q)\s*:\s*/i, '')
    .replace(/^[-*•]\s+/, '')
    .replace(/^["“«'`]+\s*|\s*["”»'`]+$/g, '')
    .trim();
}

/**
 * The configured generator with the mine prompt: the prompt (rendered with the topic's title,
 * category, tags and the source post) as the system message, then "write the question"; a
 * redraw keeps the conversation and says which title words the rejected question shared, so
 * the request differs (the response cache answers the first request again, not the redraw).
 */
export function generatorWriter(
  model: ChatModel,
  prompt: Prompt,
  language: LanguagePack,
  opts: { temperature: number; maxTokens: number; label: string },
): QuestionWriter {
  const words = WORDS[language.code] ?? WORDS.en!;
  return {
    label: opts.label,
    offline: model.offline,
    method: 'generator',
    ...(model.preflight ? { preflight: () => model.preflight!() } : {}),
    drafts(source) {
      const system = render(prompt, {
        title: source.title,
        category: source.category,
        tags: source.tags.join(', ') || '-',
        post: plainText(source.text).slice(0, POST_CHARS),
        max_shared: String(MAX_SHARED_TITLE_WORDS),
      });
      const messages: ChatMessage[] = [{ role: 'user', content: words.ask }];
      return async (_k, rejected) => {
        const last = rejected[rejected.length - 1];
        if (last)
          messages.push(
            { role: 'assistant', content: last.question },
            {
              role: 'user',
              content: words.again(last.check.shared.length, last.check.shared.join(', '), last.check.max),
            },
          );
        const answer = await model.complete({
          system,
          messages: [...messages],
          temperature: opts.temperature,
          maxTokens: opts.maxTokens,
        });
        return { question: cleanQuestion(answer.text), prompt_version: prompt.version };
      };
    },
  };
}

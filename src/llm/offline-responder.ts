import { languagePack, type LanguageCode } from '../model/languages/index.js';
import { contentTokensIn, stem } from '../text.js';
import type { ChatModel, Completion, CompletionRequest } from './types.js';

/** A source as parsed back out of the rendered evidence block. */
interface ParsedSource {
  n: number;
  title: string;
  text: string;
}

/** Reads `[[n]] title — url` headers and the excerpt lines under them. */
export function parseSources(system: string): ParsedSource[] {
  const out: ParsedSource[] = [];
  const re = /^\[\[(\d+)\]\] (.*?) — \S+\n([\s\S]*?)(?=\n\n\[\[\d+\]\] |\n\n[A-Z]|$)/gm;
  for (const m of system.matchAll(re)) out.push({ n: Number(m[1]), title: m[2]!, text: m[3]!.trim() });
  return out;
}

function sentences(text: string, split: RegExp): string[] {
  return text
    .replace(/\s+/g, ' ')
    .split(split)
    .map((s) => s.trim())
    .filter((s) => s.length > 12);
}

export interface OfflineResponderOptions {
  /** The footer every answer ends with. */
  cta: string;
  /** A line only the weak-evidence block contains. */
  weakMarker: string;
  /** A line only the empty-evidence block contains. */
  emptyMarker: string;
  /** The forum's language: the responder's wording, stop words and sentence splitting (default English). */
  language?: LanguageCode | undefined;
}

/**
 * OFFLINE STAND-IN, NOT A LANGUAGE MODEL: an extractive responder. In the normal zone it quotes
 * the one or two source sentences that share the most content words with the question and cites
 * them [[n]]; in the weak zone it says no excerpt really answers and points to the closest
 * thread with caution; in the empty zone it abstains. Every answer ends with the CTA. It speaks
 * the configured language (its wording comes from src/model/languages/). It lets
 * the audit run end to end with no model server; its answers are labelled offline everywhere.
 */
export class OfflineResponder implements ChatModel {
  readonly id = 'offline:extractive';
  readonly offline = true;
  constructor(private readonly opts: OfflineResponderOptions) {}

  async complete<T>(req: CompletionRequest<T>): Promise<Completion<T>> {
    const t0 = performance.now();
    const question = req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    const text = `${this.answer(req.system, question)}\n\n${this.opts.cta}`;
    return {
      text,
      usage: {
        inputTokens: Math.ceil((req.system.length + question.length) / 4),
        outputTokens: Math.ceil(text.length / 4),
      },
      latencyMs: performance.now() - t0,
      model: this.id,
    };
  }

  private answer(system: string, question: string): string {
    const lang = languagePack(this.opts.language);
    const words = (text: string) => contentTokensIn(text, lang).map(stem);
    if (system.includes(this.opts.emptyMarker)) return lang.responder.empty;
    const q = new Set(words(question));
    const ranked = parseSources(system)
      .flatMap((s) =>
        sentences(s.text, lang.sentenceSplit).map((sentence) => ({
          s,
          sentence,
          overlap: words(sentence).filter((w) => q.has(w)).length,
        })),
      )
      .filter((x) => x.overlap > 0)
      .sort((a, b) => b.overlap - a.overlap || a.s.n - b.s.n);
    if (system.includes(this.opts.weakMarker)) {
      const best = ranked[0];
      if (!best) return lang.responder.weakNothing;
      return lang.responder.weakClosest(best.s.title, best.s.n, best.sentence);
    }
    const picked = ranked.slice(0, 2);
    if (picked.length === 0) return lang.responder.noAnswer;
    return lang.responder.answer(picked.map((p) => ({ sentence: p.sentence, n: p.s.n })));
  }
}

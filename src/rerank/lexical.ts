import { ENGLISH } from '../model/languages/en.js';
import type { LanguagePack } from '../model/languages/types.js';
import { contentTokensIn, stem } from '../text.js';
import type { Reranker } from './types.js';

/**
 * OFFLINE STAND-IN, NOT A CROSS-ENCODER: scores a passage by the IDF-weighted share of the
 * question's content words (stemmed) it contains, mapped linearly onto a logit-like range:
 * score = 18 · coverage − 7, so no overlap gives −7, full overlap +11 (about the range of the
 * the original audit's cross-encoder, −10 … +11), half the words +2. IDF is taken over the
 * passages of the same call, the only collection a reranker sees. It lets the demo exercise
 * zones and thresholds with no model server; its scores are labelled offline everywhere.
 */
export class LexicalReranker implements Reranker {
  readonly id: string;
  readonly offline = true;

  /** `language`: whose stop words are left out of the words counted (the config's; English by default). */
  constructor(private readonly language: LanguagePack = ENGLISH) {
    this.id = `offline:lexical${language === ENGLISH ? '' : `-${language.code}`}`;
  }

  /**
   * Each passage's stemmed content words, by text: a run scores the same posts for many
   * questions, and folding and tokenising them again each time was most of the reranker's time.
   * Emptied when it holds {@link LexicalReranker.MEMO} passages, so a large forum's stays bounded.
   */
  private readonly terms = new Map<string, Set<string>>();
  static readonly MEMO = 20_000;

  private termsOf(passage: string): Set<string> {
    let t = this.terms.get(passage);
    if (!t) {
      if (this.terms.size >= LexicalReranker.MEMO) this.terms.clear();
      t = new Set(contentTokensIn(passage, this.language).map(stem));
      this.terms.set(passage, t);
    }
    return t;
  }

  async score(query: string, passages: string[]): Promise<number[]> {
    const q = [...new Set(contentTokensIn(query, this.language).map(stem))];
    if (q.length === 0) return passages.map(() => -7);
    const docs = passages.map((p) => this.termsOf(p));
    const n = docs.length;
    const idf = q.map((t) => {
      const df = docs.reduce((acc, d) => acc + (d.has(t) ? 1 : 0), 0);
      return Math.log(1 + (n + 1) / (df + 0.5));
    });
    const total = idf.reduce((a, b) => a + b, 0);
    return docs.map((d) => {
      let got = 0;
      q.forEach((t, i) => {
        if (d.has(t)) got += idf[i]!;
      });
      return Math.round((18 * (got / total) - 7) * 1e4) / 1e4;
    });
  }
}

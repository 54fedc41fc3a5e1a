import { ENGLISH } from '../model/languages/en.js';
import type { LanguagePack } from '../model/languages/types.js';
import { contentTokensIn, stem } from '../text.js';
import type { Embedder } from './embedder.js';

/** 32-bit FNV-1a (Fowler–Noll–Vo), used for feature hashing. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * OFFLINE STAND-IN, NOT A SEMANTIC MODEL: the hashing trick (Weinberger et al., 2009) over
 * stemmed content words, word bigrams and character 4-grams, L2-normalised. It matches
 * shared words and word pieces, never meaning; the demo uses it so that the pipeline runs
 * with no model server, and every result it produces is labelled offline. A text with no content
 * word ("Why?", "What is it?", an emoji) has no feature and embeds to the zero vector, which has no
 * direction: the semantic channels find nothing near it (see `queryVectorIsZero`) instead of
 * reporting the undefined cosine (NaN) pgvector computes for it.
 */
export class HashEmbedder implements Embedder {
  readonly offline = true;
  readonly id: string;
  /**
   * `language`: whose stop words and elisions leave function words out (the config's language;
   * English by default). Another language makes other vectors, so its id says it
   * (`offline:hash-384-fr`) and stored vectors of one are never read as the other's.
   */
  constructor(
    readonly dimensions = 384,
    private readonly language: LanguagePack = ENGLISH,
  ) {
    this.id = `offline:hash-${dimensions}${language === ENGLISH ? '' : `-${language.code}`}`;
  }

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.embedOne(t));
  }

  embedOne(text: string): number[] {
    const v = new Float64Array(this.dimensions);
    const add = (feature: string, weight: number) => {
      const h = fnv1a(feature);
      // The top bit picks the sign so that collisions cancel on average instead of piling up.
      v[h % this.dimensions]! += h & 0x80000000 ? -weight : weight;
    };
    const words = contentTokensIn(text, this.language).map(stem);
    words.forEach((w, i) => {
      add(`w:${w}`, 1);
      if (i > 0) add(`b:${words[i - 1]}_${w}`, 0.5);
      const padded = `^${w}$`;
      for (let j = 0; j + 4 <= padded.length; j++) add(`c:${padded.slice(j, j + 4)}`, 0.25);
    });
    let norm = 0;
    for (const x of v) norm += x * x;
    // The zero vector stays zero (no division by zero).
    norm = Math.sqrt(norm) || 1;
    return Array.from(v, (x) => Math.round((x / norm) * 1e4) / 1e4);
  }
}

/** pgvector literal for a vector: `[0.1,0.2,…]`. */
export function vectorLiteral(v: readonly number[]): string {
  return `[${v.join(',')}]`;
}

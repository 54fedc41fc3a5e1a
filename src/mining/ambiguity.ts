/**
 * Ambiguous goldens of mined questions (docs/mining.md#ambiguous-goldens): a topic whose title is
 * near-identical to other public topics' titles ("Presentation", shared by hundreds of welcome
 * threads) cannot be the one right answer to a question written from it.
 *
 * Near-identical: the two titles' content-word sets under the rephrase rule's definition
 * (src/mining/rephrase.ts: folded, stop words removed, simple plural) are both non-empty and their
 * Jaccard index (shared words over all words) is at least {@link AMBIGUOUS_JACCARD}. Equal sets
 * (1.0) are near-identical; so is a title of three or more words that another one holds plus a
 * single word ("Carmina Rain sizing" and "Carmina Rain last sizing": 3/4).
 */
import type { LanguagePack } from '../model/languages/types.js';
import { ruleWords } from './rephrase.js';

export const AMBIGUOUS_JACCARD = 0.75;

/** At most this many similar topics are listed on a case (the nearest first); the file's comment gives the full count. */
export const MAX_SIMILAR_LISTED = 50;

export interface SimilarTopics {
  /** The nearest similar topics (highest Jaccard, then lowest id), at most MAX_SIMILAR_LISTED. */
  ids: number[];
  /** How many public topics are near-identical in all. */
  total: number;
}

/** An index of public topic titles by content word, to find near-identical titles without comparing every pair. */
export class TitleIndex {
  private readonly words = new Map<number, Set<string>>();
  private readonly postings = new Map<string, number[]>();

  constructor(
    topics: readonly { topic_id: number; title: string }[],
    readonly language: LanguagePack,
  ) {
    for (const t of topics) {
      const w = ruleWords(t.title, language);
      this.words.set(t.topic_id, w);
      for (const word of w) {
        const list = this.postings.get(word) ?? [];
        list.push(t.topic_id);
        this.postings.set(word, list);
      }
    }
  }

  /** The public topics other than `topicId` whose titles are near-identical to `title`. */
  similar(topicId: number, title: string): SimilarTopics {
    const mine = ruleWords(title, this.language);
    if (mine.size === 0) return { ids: [], total: 0 };
    const shared = new Map<number, number>();
    for (const word of mine)
      for (const id of this.postings.get(word) ?? []) if (id !== topicId) shared.set(id, (shared.get(id) ?? 0) + 1);
    const hits: { id: number; j: number }[] = [];
    for (const [id, n] of shared) {
      const other = this.words.get(id)!;
      const j = n / (mine.size + other.size - n);
      if (j >= AMBIGUOUS_JACCARD) hits.push({ id, j });
    }
    hits.sort((a, b) => b.j - a.j || a.id - b.id);
    return { ids: hits.slice(0, MAX_SIMILAR_LISTED).map((h) => h.id), total: hits.length };
  }
}

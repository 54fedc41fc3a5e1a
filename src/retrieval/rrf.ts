import type { RetrievedItem } from '../corpus/discourse.js';

/** A ranked list with the grain of its items. */
export interface RankedList {
  grain: 'post' | 'topic';
  items: RetrievedItem[];
}

/**
 * Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): score(d) = Σ 1 / (k + rank_i(d)),
 * ranks 1-based. Lists of posts fuse by post; as soon as one input is topic-grain they fuse by
 * topic, where a post list votes for a topic at the rank of its best post. A topic's passage is
 * the best-ranked post from a post-grain input when there is one (so post grain survives the
 * fusion), else the first input's item. Ties: best single rank, then id ascending.
 */
export function rrf(inputs: RankedList[], k = 60): RankedList {
  const grain = inputs.every((l) => l.grain === 'post') ? 'post' : 'topic';
  const keyOf = (it: RetrievedItem) => (grain === 'post' ? it.post_id : it.topic_id);
  const acc = new Map<number, { score: number; bestRank: number; item: RetrievedItem; fromPost: boolean }>();
  for (const list of inputs) {
    const seen = new Set<number>();
    let rank = 0;
    for (const item of list.items) {
      const key = keyOf(item);
      if (seen.has(key)) continue;
      seen.add(key);
      rank++;
      const entry = acc.get(key);
      const contribution = 1 / (k + rank);
      if (!entry) {
        acc.set(key, { score: contribution, bestRank: rank, item, fromPost: list.grain === 'post' });
      } else {
        entry.score += contribution;
        entry.bestRank = Math.min(entry.bestRank, rank);
        if (!entry.fromPost && list.grain === 'post') {
          entry.item = item;
          entry.fromPost = true;
        }
      }
    }
  }
  const fused = [...acc.entries()].sort(([ka, a], [kb, b]) => b.score - a.score || a.bestRank - b.bestRank || ka - kb);
  return { grain, items: fused.map(([, e]) => ({ ...e.item, score: e.score })) };
}

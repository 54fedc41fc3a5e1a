import type { RetrievedItem } from '../model/retrieved-item.js';

/** A ranked list with the grain of its items: `post` when its items can be any post, `topic` when only topics' first posts. */
export interface RankedList {
  grain: 'post' | 'topic';
  items: RetrievedItem[];
}

/**
 * Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): score(d) = Σ 1 / (k + rank_i(d)),
 * ranks 1-based. Lists of posts fuse by post; as soon as one input is topic-grain they fuse by
 * topic, where a post list votes for a topic at the rank of its best post. A topic's passage is
 * the best-ranked post from a post-grain input when there is one (so post grain survives the
 * fusion), else the first input's item. Ties: best single rank, then id ascending. The fused list
 * is post-grain when any input is: its passages are that input's posts (PostHit applies to it).
 */
export function rrf(inputs: RankedList[], k = 60): RankedList {
  const byPost = inputs.every((l) => l.grain === 'post');
  const grain = inputs.some((l) => l.grain === 'post') ? 'post' : 'topic';
  const keyOf = (it: RetrievedItem) => (byPost ? it.post_id : it.topic_id);
  const acc = new Map<number, { ranks: number[]; bestRank: number; item: RetrievedItem; postRank: number }>();
  for (const list of inputs) {
    const seen = new Set<number>();
    let rank = 0;
    for (const item of list.items) {
      const key = keyOf(item);
      if (seen.has(key)) continue;
      seen.add(key);
      rank++;
      const entry = acc.get(key);
      const postRank = list.grain === 'post' ? rank : Infinity;
      if (!entry) {
        acc.set(key, { ranks: [rank], bestRank: rank, item, postRank });
      } else {
        entry.ranks.push(rank);
        entry.bestRank = Math.min(entry.bestRank, rank);
        // The passage is the best-ranked post among the post-grain inputs.
        if (postRank < entry.postRank) {
          entry.item = item;
          entry.postRank = postRank;
        }
      }
    }
  }
  // Summed in ascending rank order, so equal rank sets give bit-identical sums and the tie rule,
  // not floating-point noise, decides their order.
  const scored = [...acc.entries()].map(([key, e]) => ({
    key,
    e,
    score: [...e.ranks].sort((a, b) => a - b).reduce((s, r) => s + 1 / (k + r), 0),
  }));
  scored.sort((a, b) => b.score - a.score || a.e.bestRank - b.e.bestRank || a.key - b.key);
  return { grain, items: scored.map(({ e, score }) => ({ ...e.item, score })) };
}

/**
 * Stratified sampling of public topics for `ragaudit mine` (docs/mining.md#strata).
 *
 * A stratum is a category and the topic's commonest tag: of the topic's tags, the one most public
 * topics carry (ties: alphabetical), or none. The size asked for (capped at the topics there are)
 * is shared out over the categories in proportion to their public topics, then each category's
 * share over its tag strata the same way: proportional allocation by largest remainder (Hamilton),
 * a remainder tie going to the larger stratum, then to the first in order. Categories and strata
 * are taken in alphabetical order, and each stratum's topics (sorted by id) are shuffled with the
 * seeded PRNG passed in, so the same seed over the same database draws the same topics.
 *
 * With up to K questions per topic (`--per-topic K`), the shares stay proportional to public
 * topics and each group's share is capped at K times its topics: the allocation over groups of
 * K × topics units, which gives exactly the same quotas as over topics when the size asked for is
 * at most the topics there are.
 */

/** A public topic as mining sees it. */
export interface MineTopic {
  topic_id: number;
  title: string;
  category: string;
  tags: string[];
}

/** One stratum: its topics in drawing order and how many questions it should give. */
export interface StratumDraw<T extends MineTopic = MineTopic> {
  category: string;
  /** The stratum's tag; null for topics without tags. */
  tag: string | null;
  /** Its public topics, shuffled (the order they are tried in). */
  order: T[];
  quota: number;
}

/**
 * Shares `total` out over groups of the given sizes in proportion to them (largest remainder):
 * each gets the floor of its exact share, and what is left goes one by one to the largest
 * fractional parts (ties: the larger group, then the earlier one). `total` is capped at the sum.
 */
export function largestRemainder(sizes: readonly number[], total: number): number[] {
  const sum = sizes.reduce((a, b) => a + b, 0);
  const want = Math.max(0, Math.min(Math.floor(total), sum));
  if (sum === 0) return sizes.map(() => 0);
  // Exact integer arithmetic: share_i = want * size_i / sum = quota + rest / sum.
  const quotas = sizes.map((s) => Math.floor((want * s) / sum));
  const rests = sizes.map((s, i) => want * s - quotas[i]! * sum);
  let left = want - quotas.reduce((a, b) => a + b, 0);
  const order = sizes.map((_, i) => i).sort((a, b) => rests[b]! - rests[a]! || sizes[b]! - sizes[a]! || a - b);
  for (const i of order) {
    if (left <= 0) break;
    quotas[i]! += 1;
    left--;
  }
  return quotas;
}

/** Fisher–Yates over a copy, drawing from `random` (values in [0, 1)). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Each topic's stratum tag: its commonest tag over all the given topics (ties alphabetical), or null. */
export function stratumTags(topics: readonly MineTopic[]): Map<number, string | null> {
  const count = new Map<string, number>();
  for (const t of topics) for (const tag of new Set(t.tags)) count.set(tag, (count.get(tag) ?? 0) + 1);
  const out = new Map<number, string | null>();
  for (const t of topics) {
    const best = [...new Set(t.tags)].sort((a, b) => count.get(b)! - count.get(a)! || (a < b ? -1 : a > b ? 1 : 0));
    out.set(t.topic_id, best[0] ?? null);
  }
  return out;
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The strata of the topics with their quotas for `size` questions, each stratum's topics shuffled;
 * a stratum's quota is at most `perTopic` (default 1) questions per topic.
 */
export function stratify<T extends MineTopic>(
  topics: readonly T[],
  size: number,
  random: () => number,
  perTopic = 1,
): StratumDraw<T>[] {
  const tagOf = stratumTags(topics);
  const byCategory = new Map<string, T[]>();
  for (const t of [...topics].sort((a, b) => a.topic_id - b.topic_id)) {
    const list = byCategory.get(t.category) ?? [];
    list.push(t);
    byCategory.set(t.category, list);
  }
  const categories = [...byCategory.keys()].sort(byName);
  const categoryQuotas = largestRemainder(
    categories.map((c) => byCategory.get(c)!.length * perTopic),
    size,
  );
  const out: StratumDraw<T>[] = [];
  categories.forEach((category, ci) => {
    const byTag = new Map<string, T[]>();
    for (const t of byCategory.get(category)!) {
      const key = tagOf.get(t.topic_id) ?? '';
      const list = byTag.get(key) ?? [];
      list.push(t);
      byTag.set(key, list);
    }
    // Tagged strata alphabetically, the untagged one last.
    const tags = [...byTag.keys()].sort((a, b) => (a === '' ? 1 : b === '' ? -1 : byName(a, b)));
    const quotas = largestRemainder(
      tags.map((t) => byTag.get(t)!.length * perTopic),
      categoryQuotas[ci]!,
    );
    tags.forEach((tag, ti) =>
      out.push({
        category,
        tag: tag === '' ? null : tag,
        order: shuffled(byTag.get(tag)!, random),
        quota: quotas[ti]!,
      }),
    );
  });
  return out;
}

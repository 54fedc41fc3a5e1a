import type { DiscourseProfile } from '../corpus/discourse.js';
import type { SourceRecord } from '../model/results.js';
import { excerpt } from './block.js';

/** Seeds' config D: context posts added to each source for the LLM, retrieval untouched. */
export interface NeighbourhoodOptions {
  parent: boolean;
  before: number;
  after: number;
  first_post: boolean;
  /** Characters of context per source, all neighbours together. */
  budget_chars: number;
}

/**
 * Adds to each source its parent post (reply_to_post_number), the k posts before and after it,
 * and the topic's first post, in that order of priority, until the character budget is spent.
 * A neighbour that would overflow the budget is cut to what is left (and dropped if under 40
 * characters would remain). The source itself and retrieval metrics are unchanged.
 */
export async function addNeighbourhood(
  profile: DiscourseProfile,
  sources: SourceRecord[],
  replyTo: ReadonlyMap<number, number | null>,
  opts: NeighbourhoodOptions,
): Promise<void> {
  for (const s of sources) {
    const lo = Math.max(
      1,
      Math.min(
        s.post_number - opts.before,
        opts.first_post ? 1 : s.post_number,
        replyTo.get(s.post_id) ?? s.post_number,
      ),
    );
    const hi = s.post_number + opts.after;
    const posts = await profile.postsAround(s.topic_id, lo, hi);
    const byNumber = new Map(posts.map((p) => [p.post_number, p] as const));
    const wanted: { n: number; role: string }[] = [];
    const parent = replyTo.get(s.post_id);
    if (opts.parent && parent) wanted.push({ n: parent, role: 'parent' });
    for (let d = 1; d <= Math.max(opts.before, opts.after); d++) {
      if (d <= opts.before) wanted.push({ n: s.post_number - d, role: 'before' });
      if (d <= opts.after) wanted.push({ n: s.post_number + d, role: 'after' });
    }
    if (opts.first_post) wanted.push({ n: 1, role: 'first post' });
    let left = opts.budget_chars;
    const seen = new Set<number>([s.post_number]);
    const neighbours: NonNullable<SourceRecord['neighbours']> = [];
    for (const w of wanted) {
      const p = byNumber.get(w.n);
      if (!p || seen.has(w.n) || left < 40) continue;
      seen.add(w.n);
      let text = excerpt(p.text, left);
      // excerpt() appends its ellipsis after a cut inside a long word: one character too many.
      if (text.length > left) text = excerpt(p.text, left - 1);
      left -= text.length;
      neighbours.push({ post_id: p.post_id, post_number: p.post_number, role: w.role, excerpt: text });
    }
    if (neighbours.length) s.neighbours = neighbours;
  }
}

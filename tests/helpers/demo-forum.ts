/**
 * The demo forum as its goldens are checked against (tests/demo-data.test.ts,
 * tests/demo-conversations.test.ts): what is public (what the audit may retrieve), and where a
 * golden's content terms must occur.
 */
import type { Case } from '../../src/cases/schema.js';
import { readForum, type ForumPost, type ForumTopic } from '../../src/demo/forum.js';
import { DEMO_FORUM_DIR } from '../../src/paths.js';
import { passageCarries } from '../../src/scoring/retrieval-metrics.js';
import { readerText } from '../../src/text.js';

export const forum = readForum(DEMO_FORUM_DIR);
const cats = new Map(forum.categories.map((c) => [c.slug, c]));
export const isPublicTopic = (t: ForumTopic) =>
  t.archetype === 'regular' && t.visible && !t.deleted && !cats.get(t.category)!.read_restricted;
export const isPublicPost = (p: ForumPost) => p.post_type === 1 && !p.hidden && !p.deleted;
export const topics = new Map(forum.topics.map((t) => [t.id, t]));
export const posts = new Map(forum.topics.flatMap((t) => t.posts.map((p) => [p.id, { t, p }] as const)));

/**
 * The content terms of a case found in none of its golden passages (its golden posts, else the
 * public posts of its golden topics), by the rule content recall and content MRR apply (reader
 * text, word boundaries).
 */
export function termsNotInGoldens(
  c: Pick<Case, 'expected_post_ids' | 'expected_topic_ids' | 'expected_content'>,
): string[] {
  const passages = c.expected_post_ids.length
    ? c.expected_post_ids.map((id) => posts.get(id)!.p.raw)
    : forum.topics
        .filter((t) => c.expected_topic_ids.includes(t.id))
        .flatMap((t) => t.posts.filter(isPublicPost).map((p) => p.raw));
  return c.expected_content.filter((term) => !passages.some((text) => passageCarries(readerText(text), term)));
}

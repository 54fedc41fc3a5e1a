/**
 * What `ragaudit mine` reads from the forum (docs/mining.md): public topics with their category,
 * tags and first public post, and the public posts of the topics drawn. "Public" is the profile's
 * own rule (PUBLIC_POST, src/corpus/discourse-sql.ts): a topic is public when it has at least one
 * public post, and only public posts are ever read. Every statement is parameterised and runs
 * read-only like every other (src/db/sql-client.ts).
 */
import type { MineTopic } from './sample.js';
import { FIRST_POST, FROM_POSTS, PUBLIC_POST } from '../corpus/discourse-sql.js';
import type { SqlClient } from '../db/sql-client.js';

/** A public topic, with the number of its first public post. */
export interface PublicTopic extends MineTopic {
  first_post_number: number;
}

/** A public post of a drawn topic. */
export interface PublicPost {
  post_id: number;
  topic_id: number;
  post_number: number;
  raw: string;
}

/** Every public topic (sorted by id) with its category, tags (sorted) and first public post. */
export async function readPublicTopics(db: SqlClient): Promise<PublicTopic[]> {
  const rows = await db.query<{ topic_id: number; title: string; category: string; first_post_number: number }>(
    // The topic channels' own shape: a topic joined to its first public post (FIRST_POST), kept
    // when that post passes the visibility rule; one index lookup per topic, no scan of all posts.
    `SELECT t.id AS topic_id, t.title, c.name AS category, p.post_number AS first_post_number
     FROM topics t LEFT JOIN categories c ON c.id = t.category_id JOIN posts p ON ${FIRST_POST}
     WHERE ${PUBLIC_POST} ORDER BY t.id`,
  );
  const topics: PublicTopic[] = rows.map((r) => ({
    topic_id: Number(r.topic_id),
    title: r.title,
    category: r.category,
    tags: [],
    first_post_number: Number(r.first_post_number),
  }));
  // A forum without tagging has no tag tables: every topic is then untagged.
  const [has] = await db.query<{ ok: boolean }>(
    `SELECT to_regclass('topic_tags') IS NOT NULL AND to_regclass('tags') IS NOT NULL AS ok`,
  );
  if (!has?.ok || topics.length === 0) return topics;
  const byId = new Map(topics.map((t) => [t.topic_id, t] as const));
  const tags = await db.query<{ topic_id: number; name: string }>(
    `SELECT tt.topic_id, g.name FROM topic_tags tt JOIN tags g ON g.id = tt.tag_id
     WHERE tt.topic_id = ANY($1::int[]) ORDER BY tt.topic_id, g.name`,
    [topics.map((t) => t.topic_id)],
  );
  for (const r of tags) byId.get(Number(r.topic_id))?.tags.push(r.name);
  return topics;
}

/** The public posts of these topics, at most `perTopic` each (the first ones), by topic and post number. */
export async function readPublicPosts(
  db: SqlClient,
  topicIds: readonly number[],
  perTopic: number,
): Promise<PublicPost[]> {
  if (topicIds.length === 0) return [];
  const rows = await db.query<PublicPost>(
    `SELECT post_id, topic_id, post_number, raw FROM (
       SELECT p.id AS post_id, p.topic_id, p.post_number, p.raw,
              row_number() OVER (PARTITION BY p.topic_id ORDER BY p.post_number) AS k
       FROM ${FROM_POSTS} WHERE p.topic_id = ANY($1::int[]) AND ${PUBLIC_POST}) x
     WHERE k <= $2 ORDER BY topic_id, post_number`,
    [[...topicIds], perTopic],
  );
  return rows.map((r) => ({
    post_id: Number(r.post_id),
    topic_id: Number(r.topic_id),
    post_number: Number(r.post_number),
    raw: r.raw,
  }));
}

/**
 * The posts a deployed bot cites, read from the database by post id, by topic id (the topic's
 * first public post, as retrieval represents a topic) or by forum URL (`/t/slug/ID/N` is post N of
 * topic ID, `/t/slug/ID` its first post, `/p/ID` a post id), with whether each is public. A cited
 * post that is not public is reported as such, and its text is never returned.
 */
import { FROM_POSTS, ITEM_COLUMNS, PUBLIC_POST, type Row } from './discourse-sql.js';
import type { RetrievedItem } from '../model/retrieved-item.js';
import type { SqlClient } from '../db/sql-client.js';

/** What a bot's source names: a post, a topic, or a post of a topic by number. */
export type PostRef = { post_id: number } | { topic_id: number; post_number?: number };

/** A cited post as read: the post (text only when public) and whether it is public. */
export interface CitedPost {
  item: RetrievedItem;
  public: boolean;
}

/** The post a forum URL names, or undefined when the URL is not a Discourse post or topic link. */
export function refOfUrl(url: string): PostRef | undefined {
  let path: string;
  try {
    path = new URL(url, 'http://forum.invalid').pathname;
  } catch {
    return undefined;
  }
  const p = /^(?:.*?)\/p\/(\d+)\/?$/.exec(path);
  if (p) return { post_id: Number(p[1]) };
  // /t/slug/ID/N, /t/slug/ID, /t/ID/N, /t/ID (a slug is never all digits in Discourse URLs it builds).
  const t = /\/t\/(?:([^/]*[^/\d][^/]*)\/)?(\d+)(?:\/(\d+))?\/?$/.exec(path);
  if (!t) return undefined;
  return t[3] ? { topic_id: Number(t[2]), post_number: Number(t[3]) } : { topic_id: Number(t[2]) };
}

const key = (r: PostRef) =>
  'post_id' in r ? `p${r.post_id}` : r.post_number !== undefined ? `t${r.topic_id}/${r.post_number}` : `t${r.topic_id}`;

type CitedRow = Row & { public: boolean | null };

function cited(r: CitedRow): CitedPost {
  const visible = r.public === true;
  return {
    item: {
      post_id: Number(r.post_id),
      topic_id: Number(r.topic_id),
      post_number: Number(r.post_number),
      title: visible ? r.title : '',
      slug: visible ? r.slug : '',
      category: visible ? (r.category ?? '') : '',
      posts_count: Number(r.posts_count),
      text: visible ? r.text : '',
      reply_to_post_number: r.reply_to_post_number,
      score: 0,
    },
    public: visible,
  };
}

/**
 * Each ref's post (absent when the database has none), in three parameterised statements at most;
 * a topic ref without a number resolves to the topic's first public post, else its first post.
 */
export async function citedPosts(db: SqlClient, refs: readonly PostRef[]): Promise<Map<string, CitedPost>> {
  const out = new Map<string, CitedPost>();
  const cols = `${ITEM_COLUMNS}, COALESCE(${PUBLIC_POST}, false) AS public`;
  const postIds = [...new Set(refs.flatMap((r) => ('post_id' in r ? [r.post_id] : [])))];
  if (postIds.length) {
    const rows = await db.query<CitedRow>(`SELECT ${cols} FROM ${FROM_POSTS} WHERE p.id = ANY($1::int[])`, [postIds]);
    for (const r of rows) out.set(`p${Number(r.post_id)}`, cited(r));
  }
  const numbered = refs.flatMap((r) => (!('post_id' in r) && r.post_number !== undefined ? [r] : []));
  if (numbered.length) {
    const rows = await db.query<CitedRow>(
      `SELECT ${cols} FROM ${FROM_POSTS}
       WHERE (p.topic_id, p.post_number) IN (SELECT * FROM unnest($1::int[], $2::int[]))`,
      [numbered.map((r) => r.topic_id), numbered.map((r) => r.post_number)],
    );
    for (const r of rows) out.set(`t${Number(r.topic_id)}/${Number(r.post_number)}`, cited(r));
  }
  const topics = [
    ...new Set(refs.flatMap((r) => (!('post_id' in r) && r.post_number === undefined ? [r.topic_id] : []))),
  ];
  if (topics.length) {
    const rows = await db.query<CitedRow>(
      `SELECT ${cols} FROM ${FROM_POSTS} WHERE p.topic_id = ANY($1::int[])
       ORDER BY p.topic_id, COALESCE(${PUBLIC_POST}, false) DESC, p.post_number`,
      [topics],
    );
    for (const r of rows) if (!out.has(`t${Number(r.topic_id)}`)) out.set(`t${Number(r.topic_id)}`, cited(r));
  }
  return out;
}

/** The post `ref` resolved to by {@link citedPosts}. */
export function citedPost(found: ReadonlyMap<string, CitedPost>, ref: PostRef): CitedPost | undefined {
  return found.get(key(ref));
}

import type { Embedder } from '../embedding/embedder.js';
import { vectorLiteral } from '../embedding/hash-embedder.js';
import { EMBEDDINGS_DDL, FORUM_DDL } from './ddl.js';
import { postEmbeddingText, STRATEGIES, topicEmbeddingText } from '../corpus/embedding-text.js';
import type { Forum, ForumPost, ForumTopic } from './forum.js';

/** A writable connection, used only to build demo and test databases (never by the audit). */
export interface SqlWriter {
  /** Runs a script of several statements without parameters. */
  script(sql: string): Promise<void>;
  /** Runs one parameterised statement. */
  exec(sql: string, params: unknown[]): Promise<void>;
}

export interface LoadOptions {
  /** Text-search configuration for the tsvector columns (`english`, `french`…). */
  textSearchConfig?: string;
  /** Embedder for the vector tables; omitted = no vector tables (a server without pgvector). */
  embedder?: Embedder;
  /** discourse-ai model_id under which the vectors are stored. */
  modelId?: number;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

async function insertRows(
  db: SqlWriter,
  table: string,
  columns: string[],
  rows: unknown[][],
  casts: Record<string, string> = {},
) {
  const batch = Math.max(1, Math.floor(30_000 / columns.length));
  for (let start = 0; start < rows.length; start += batch) {
    const chunk = rows.slice(start, start + batch);
    const params: unknown[] = [];
    const tuples = chunk.map((row) => {
      const slots = row.map((value, i) => {
        params.push(value);
        const col = columns[i]!;
        return casts[col] ? casts[col]!.replace('$', `$${params.length}`) : `$${params.length}`;
      });
      return `(${slots.join(', ')})`;
    });
    await db.exec(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`, params);
  }
}

/** A fixture post's text under a strategy (one definition for fixtures and real forums). */
export function forumPostText(topic: ForumTopic, post: ForumPost, category: string, strategy: number): string {
  const parent = post.reply_to ? topic.posts.find((p) => p.n === post.reply_to) : undefined;
  return postEmbeddingText(
    {
      title: topic.title,
      category,
      tags: topic.tags,
      raw: post.raw,
      post_number: post.n,
      first_raw: topic.posts[0]!.raw,
      parent_raw: parent?.raw ?? null,
    },
    strategy,
  );
}

/** Creates the Discourse tables and loads a forum into them. */
export async function loadForum(
  db: SqlWriter,
  forum: Forum,
  opts: LoadOptions = {},
): Promise<{ topics: number; posts: number }> {
  const cfg = opts.textSearchConfig ?? 'english';
  await db.script(FORUM_DDL);
  const catName = new Map(forum.categories.map((c) => [c.slug, c] as const));
  await insertRows(
    db,
    'categories',
    ['id', 'name', 'slug', 'read_restricted'],
    forum.categories.map((c) => [c.id, c.name, c.slug, c.read_restricted]),
  );

  const users = [...new Set(forum.topics.flatMap((t) => t.posts.map((p) => p.user)))].sort();
  const userId = new Map(users.map((u, i) => [u, i + 1] as const));
  await insertRows(
    db,
    'users',
    ['id', 'username'],
    users.map((u) => [userId.get(u), u]),
  );

  const tagNames = [...new Set(forum.topics.flatMap((t) => t.tags))].sort();
  const tagId = new Map(tagNames.map((t, i) => [t, i + 1] as const));
  await insertRows(
    db,
    'tags',
    ['id', 'name'],
    tagNames.map((t) => [tagId.get(t), t]),
  );

  const day = (t: ForumTopic) => (t.created_at ? new Date(t.created_at).toISOString().slice(0, 10) : '2025-01-01');
  await insertRows(
    db,
    'topics',
    ['id', 'title', 'slug', 'category_id', 'archetype', 'visible', 'deleted_at', 'posts_count', 'created_at'],
    forum.topics.map((t) => [
      t.id,
      t.title,
      t.slug,
      catName.get(t.category)!.id,
      t.archetype,
      t.visible,
      t.deleted ? day(t) : null,
      t.posts.length,
      day(t),
    ]),
  );
  await insertRows(
    db,
    'topic_tags',
    ['topic_id', 'tag_id'],
    forum.topics.flatMap((t) => t.tags.map((tag) => [t.id, tagId.get(tag)])),
  );

  const posts = forum.topics.flatMap((t) => t.posts.map((p) => ({ t, p })));
  await insertRows(
    db,
    'posts',
    [
      'id',
      'topic_id',
      'post_number',
      'raw',
      'cooked',
      'user_id',
      'reply_to_post_number',
      'post_type',
      'hidden',
      'deleted_at',
      'created_at',
    ],
    posts.map(({ t, p }) => [
      p.id,
      t.id,
      p.n,
      p.raw,
      `<p>${escapeHtml(p.raw)}</p>`,
      userId.get(p.user),
      p.reply_to ?? null,
      p.post_type,
      p.hidden,
      p.deleted ? day(t) : null,
      day(t),
    ]),
  );
  // Like Discourse: the title weighs more than the body in a post's search vector.
  await db.exec(
    `INSERT INTO post_search_data (post_id, search_data, raw_data, locale)
     SELECT p.id, setweight(to_tsvector($1::regconfig, t.title), 'A') || to_tsvector($1::regconfig, p.raw), p.raw, $2
     FROM posts p JOIN topics t ON t.id = p.topic_id`,
    [cfg, cfg.slice(0, 2)],
  );
  await db.exec(
    `INSERT INTO topic_search_data (topic_id, search_data, raw_data, locale)
     SELECT t.id, setweight(to_tsvector($1::regconfig, t.title), 'A') || to_tsvector($1::regconfig, coalesce(string_agg(p.raw, ' ' ORDER BY p.post_number), '')), t.title, $2
     FROM topics t LEFT JOIN posts p ON p.topic_id = t.id AND p.post_number = 1 GROUP BY t.id, t.title`,
    [cfg, cfg.slice(0, 2)],
  );

  if (opts.embedder) {
    await db.script(EMBEDDINGS_DDL);
    const modelId = opts.modelId ?? 1;
    for (const strategy of [STRATEGIES.native, STRATEGIES.enriched]) {
      const texts = posts.map(({ t, p }) => forumPostText(t, p, catName.get(t.category)!.name, strategy));
      const vectors = await opts.embedder.embed(texts);
      await insertRows(
        db,
        'ai_posts_embeddings',
        ['post_id', 'model_id', 'strategy_id', 'embeddings'],
        posts.map(({ p }, i) => [p.id, modelId, strategy, vectorLiteral(vectors[i]!)]),
        { embeddings: '$::halfvec' },
      );
    }
    const topicTexts = forum.topics.map((t) =>
      topicEmbeddingText({
        title: t.title,
        category: catName.get(t.category)!.name,
        tags: t.tags,
        raw: t.posts[0]!.raw,
      }),
    );
    const topicVectors = await opts.embedder.embed(topicTexts);
    await insertRows(
      db,
      'ai_topics_embeddings',
      ['topic_id', 'model_id', 'strategy_id', 'embeddings'],
      forum.topics.map((t, i) => [t.id, modelId, STRATEGIES.native, vectorLiteral(topicVectors[i]!)]),
      { embeddings: '$::halfvec' },
    );
  }
  return { topics: forum.topics.length, posts: posts.length };
}

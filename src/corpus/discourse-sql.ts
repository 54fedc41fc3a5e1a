import { RagauditError } from '../errors.js';
import type { RetrievedItem } from '../model/retrieved-item.js';

/**
 * The SQL pieces of the Discourse profile (src/corpus/discourse.ts): the columns of a retrieved
 * item, the joins, a topic's representative post, the semantic and keyword expressions, and how
 * rows become items. Every value reaches SQL as a bound parameter; these are fixed fragments.
 */

export const ITEM_COLUMNS = `p.id AS post_id, p.topic_id, p.post_number, t.title, t.slug, c.name AS category,
  t.posts_count, p.raw AS text, p.reply_to_post_number`;

/** A NULL for each item column (the row of {@link postsOnce} that carries the ranking). */
const ITEM_BLANKS = ITEM_COLUMNS.split(',')
  .map(() => 'NULL')
  .join(', ');

export const FROM_POSTS = `posts p JOIN topics t ON t.id = p.topic_id LEFT JOIN categories c ON c.id = t.category_id`;

/** A topic's representative passage is its first public post. */
export const FIRST_POST = `p.topic_id = t.id AND p.post_number = (SELECT min(p2.post_number) FROM posts p2
  WHERE p2.topic_id = t.id AND p2.post_type = 1 AND NOT p2.hidden AND p2.deleted_at IS NULL)`;

export type Row = Omit<RetrievedItem, 'score'> & { score: number | string };
/**
 * A row of a batch statement shaped by {@link postsOnce}: `ord` 0, a post's item columns (once per
 * distinct post); `ord` 1, the one row whose `ranked` holds every query's ranking as JSON text.
 */
export type BatchRow = Partial<Omit<Row, 'score'>> & { ord: number; ranked?: string | null };

/**
 * A batch statement whose posts' columns come once per statement, not once per (question, item):
 * `ranked` selects `ord` (the 1-based query), `post_id`, `score`, and the keys the query ordered
 * its top k by, `rank_key` then `rank_tie` (`rank_key` compared in `direction`); `with` holds CTEs
 * it reads. One row per distinct post the ranking names carries the item columns (`ord` 0), and
 * one more row carries the whole ranking, `[ord, post_id, score]` by query then rank, as a JSON
 * array (`ranked`): one statement, so one snapshot of the forum. A post ranked for many questions
 * of a batch (the same few hundred posts answer most of a forum's questions) is parsed once by the
 * client instead of once per question, and the ranking is one text value instead of a row per
 * (question, item): the embedded engine's client parses every field of every row in JavaScript,
 * which was most of its time outside SQL. PostgreSQL writes a float8 in JSON as its shortest text
 * that reads back to the same double (extra_float_digits 1, the default), the text a float8
 * column carries, so the scores are the single query's to the bit. {@link byQuery} rebuilds the
 * lists.
 */
export function postsOnce(ranked: { with?: string; select: string }, direction: 'ASC' | 'DESC' = 'ASC'): string {
  return `WITH ${ranked.with ? `${ranked.with},\n` : ''}ranked AS MATERIALIZED (${ranked.select})
     SELECT 0 AS ord, ${ITEM_COLUMNS}, NULL::text AS ranked
       FROM ${FROM_POSTS} WHERE p.id IN (SELECT post_id FROM ranked)
     UNION ALL
     SELECT 1, ${ITEM_BLANKS},
       (SELECT json_agg(json_build_array(ord, post_id, score) ORDER BY ord, rank_key ${direction}, rank_tie)::text FROM ranked)`;
}

/** A row's post columns with its score as a number; a score that is not finite is refused here, before any record holds it. */
function item(post: Omit<Row, 'score'>, score: unknown, what: string): RetrievedItem {
  const n = Number(score);
  if (!Number.isFinite(n))
    throw new RagauditError(`${what} returned a non-finite score (${String(score)}) for post ${post.post_id}`);
  return { ...post, score: n };
}

/** Rows as items (see {@link item}). */
export function toItems(rows: Row[], what: string): RetrievedItem[] {
  return rows.map((r) => item(r, r.score, what));
}

/**
 * The rows of a {@link postsOnce} statement as one list per query, in query order: each ranked
 * entry becomes its post's item columns (in the single query's column order) and its score.
 */
export function byQuery(rows: BatchRow[], queries: number, what: string): RetrievedItem[][] {
  const posts = new Map<number, Omit<Row, 'score'>>();
  const lists: RetrievedItem[][] = Array.from({ length: queries }, () => []);
  let ranking: unknown = [];
  for (const { ord, ranked, ...columns } of rows) {
    if (Number(ord) === 0) posts.set(Number(columns.post_id), columns as Omit<Row, 'score'>);
    else if (ranked != null) ranking = JSON.parse(ranked);
  }
  if (!Array.isArray(ranking)) throw new RagauditError(`${what} returned a ranking that is not a list`);
  for (const entry of ranking as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 3)
      throw new RagauditError(`${what} returned a ranking entry that is not [query, post, score]`);
    const [ord, postId, score] = entry as unknown[];
    const list = lists[Number(ord) - 1];
    if (!list) throw new RagauditError(`${what} answered a query that was not asked (${String(ord)})`);
    const post = posts.get(Number(postId));
    if (!post) throw new RagauditError(`${what} ranked post ${String(postId)} without its columns`);
    list.push(item(post, score, what));
  }
  return lists;
}

/**
 * The semantic score and its ORDER BY. Cosine distance involving a zero vector (a stored post or
 * topic with no content) is NaN, which PostgreSQL sorts after every number: such rows are left
 * out, since nothing is near a vector without a direction.
 */
export function semanticSql(
  op: '<=>' | '<#>',
  dims: number,
  query = `$1::halfvec(${dims})`,
  stored = `e.embeddings::halfvec(${dims})`,
): { score: string; distance: string; defined: string; scoreOf: string; definedOf: string } {
  const distance = `(${stored} ${op} ${query})`;
  return {
    score: op === '<=>' ? `1 - ${distance}` : `-${distance}`,
    distance,
    defined: op === '<=>' ? `${distance} <> 'NaN'::float8` : 'true',
    // The same, over a distance already computed (a column named by `stored`).
    scoreOf: op === '<=>' ? `1 - ${stored}` : `-${stored}`,
    definedOf: op === '<=>' ? `${stored} <> 'NaN'::float8` : 'true',
  };
}

/**
 * Keyword query: any of the question's words (OR), ranked by ts_rank_cd. Postgres' own parser
 * normalises the question with the configured text-search configuration; the resulting lexemes
 * are quoted into a `simple` tsquery (so they are not stemmed twice). The question is only ever
 * a bound parameter, never spliced into SQL. A question with no lexeme ("Why?", an emoji) makes a
 * NULL query, which matches nothing: the channel returns an empty list, never a score.
 */
export const orTsquery = (
  text: string,
) => `to_tsquery('simple', (SELECT string_agg('''' || replace(replace(l, E'\\\\', E'\\\\\\\\'), '''', '''''') || '''', ' | ')
  FROM unnest(tsvector_to_array(to_tsvector($2::regconfig, ${text}))) AS l))`;
export const OR_TSQUERY = orTsquery('$1');

/**
 * What "public" means on Discourse (docs/design.md#discourse): a regular post, not hidden, not deleted, in a
 * visible, non-deleted topic that is not a private message, in a category that is not
 * read-restricted. Every query of the profile carries it.
 */
export const PUBLIC_POST = `p.post_type = 1 AND NOT p.hidden AND p.deleted_at IS NULL
  AND t.visible AND t.deleted_at IS NULL AND t.archetype <> 'private_message'
  AND c.id IS NOT NULL AND NOT c.read_restricted`;

import { RagauditError } from '../errors.js';
import type { RetrievedItem } from './discourse.js';

/**
 * The SQL pieces of the Discourse profile (src/corpus/discourse.ts): the columns of a retrieved
 * item, the joins, a topic's representative post, the semantic and keyword expressions, and how
 * rows become items. Every value reaches SQL as a bound parameter; these are fixed fragments.
 */

export const ITEM_COLUMNS = `p.id AS post_id, p.topic_id, p.post_number, t.title, t.slug, c.name AS category,
  t.posts_count, p.raw AS text, p.reply_to_post_number`;

export const FROM_POSTS = `posts p JOIN topics t ON t.id = p.topic_id LEFT JOIN categories c ON c.id = t.category_id`;

/** A topic's representative passage is its first public post. */
export const FIRST_POST = `p.topic_id = t.id AND p.post_number = (SELECT min(p2.post_number) FROM posts p2
  WHERE p2.topic_id = t.id AND p2.post_type = 1 AND NOT p2.hidden AND p2.deleted_at IS NULL)`;

export type Row = Omit<RetrievedItem, 'score'> & { score: number | string };
/** A row of a batched query: which query (1-based) it answers, and the ordering key it was ranked by. */
export type BatchRow = Row & { ord: number; distance?: unknown };

/** Rows as items; a score that is not a finite number is refused here, before any record holds it. */
export function toItems(rows: Row[], what: string): RetrievedItem[] {
  return rows.map((r) => {
    const score = Number(r.score);
    if (!Number.isFinite(score))
      throw new RagauditError(`${what} returned a non-finite score (${String(r.score)}) for post ${r.post_id}`);
    return { ...r, score };
  });
}

/** Batched rows as one list per query, in query order; the rows arrive sorted by query, then rank. */
export function byQuery(rows: BatchRow[], queries: number, what: string): RetrievedItem[][] {
  const lists: Row[][] = Array.from({ length: queries }, () => []);
  for (const { ord, distance, ...row } of rows) {
    void distance;
    const list = lists[Number(ord) - 1];
    if (!list) throw new RagauditError(`${what} answered a query that was not asked (${String(ord)})`);
    list.push(row);
  }
  return lists.map((l) => toItems(l, what));
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

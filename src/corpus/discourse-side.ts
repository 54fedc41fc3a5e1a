import { annCandidates, annPair, annSettings } from './ann.js';
import { FIRST_POST, FROM_POSTS, ITEM_COLUMNS, PUBLIC_POST, semanticSql, toItems, type Row } from './discourse-sql.js';
import type { SemanticQuery, Statement } from './discourse-types.js';
import type { RetrievedItem } from '../model/retrieved-item.js';
import type { SqlClient } from '../db/sql-client.js';

/**
 * Semantic search when discourse-ai's vectors live in a database of their own (database.vectors_url):
 * no statement can join them to the forum, so the nearest candidates come from the vectors'
 * database and the forum keeps the public ones (src/corpus/discourse.ts).
 */

/** What a side search reads: the forum's database, the vectors' database and their tables. */
export interface VectorSide {
  readonly db: SqlClient;
  readonly vectorsDb: SqlClient;
  readonly vectors: { readonly post: string; readonly topic: string };
}

/** The first candidate count of an exact side search (four times the list, at least 50). */
export function firstFetch(q: Pick<SemanticQuery, 'limit'>): number {
  return Math.max(q.limit * 4, 50);
}

/** The side database's exact candidate statement: the `fetch` nearest, by (distance, id). */
export function sideExactStatement(
  side: VectorSide,
  grain: 'post' | 'topic',
  q: SemanticQuery,
  fetch: number,
): Statement {
  const sem = semanticSql(q.operator ?? '<=>', Math.floor(q.dimensions));
  const idCol = `${grain}_id`;
  return {
    db: side.vectorsDb,
    sql: `SELECT e.${idCol} AS id, ${sem.score} AS score FROM ${side.vectors[grain]} e
         WHERE e.model_id = $2 AND e.strategy_id = $3 AND ${sem.defined}
         ORDER BY ${sem.distance}, e.${idCol} LIMIT $4`,
    params: [q.vector, q.modelId, q.strategyId, fetch],
  };
}

/**
 * Semantic search when the vectors are in a side database: the nearest candidates there (the
 * same distance, score and tie-break as the joined query), then the forum keeps the public ones
 * in that order; when fewer than `limit` survive and more candidates exist, it asks for four
 * times as many. The result is the joined query's: the first `limit` public rows by
 * (distance, id).
 */
export async function sideSemantic(
  side: VectorSide,
  grain: 'post' | 'topic',
  q: SemanticQuery,
): Promise<RetrievedItem[]> {
  const what = `semantic ${grain} search`;
  const publicOf = async (candidates: { id: number; score: number | string }[]) => {
    const rows = await side.db.query<Row>(
      grain === 'post'
        ? `SELECT ${ITEM_COLUMNS}, 0 AS score FROM ${FROM_POSTS}
           WHERE p.id = ANY($1::int[]) AND ${PUBLIC_POST} AND ($2::int IS NULL OR t.posts_count <= $2)`
        : `SELECT ${ITEM_COLUMNS}, 0 AS score FROM topics t LEFT JOIN categories c ON c.id = t.category_id
           JOIN posts p ON ${FIRST_POST}
           WHERE t.id = ANY($1::int[]) AND ${PUBLIC_POST} AND ($2::int IS NULL OR t.posts_count <= $2)`,
      [candidates.map((c) => Number(c.id)), q.maxPostsCount ?? null],
    );
    const byId = new Map(rows.map((r) => [Number(grain === 'post' ? r.post_id : r.topic_id), r]));
    return candidates.flatMap((c) => {
      const r = byId.get(Number(c.id));
      return r ? [{ ...r, score: c.score }] : [];
    });
  };
  if (q.search === 'ann') {
    // The index's nearest candidates, then the forum's public ones, re-sorted exactly by (distance, id).
    const st = sideAnnStatement(side, grain, q);
    const candidates = await st.db.query<{ id: number; score: number | string; distance: number | string }>(
      st.sql,
      st.params,
      { settings: st.settings ?? [] },
    );
    const order = new Map(candidates.map((c) => [Number(c.id), Number(c.distance)]));
    const kept = (await publicOf(candidates.filter((c) => !Number.isNaN(Number(c.distance)))))
      .sort((a, b) => {
        const [ia, ib] = grain === 'post' ? [a.post_id, b.post_id] : [a.topic_id, b.topic_id];
        return order.get(Number(ia))! - order.get(Number(ib))! || Number(ia) - Number(ib);
      })
      .slice(0, q.limit);
    return toItems(kept, what);
  }
  for (let fetch = firstFetch(q); ; fetch *= 4) {
    const st = sideExactStatement(side, grain, q, fetch);
    const candidates = await st.db.query<{ id: number; score: number | string }>(st.sql, st.params);
    const kept = (await publicOf(candidates)).slice(0, q.limit);
    if (kept.length >= q.limit || candidates.length < fetch) return toItems(kept, what);
  }
}

/** The side database's ANN candidate statement: the index's nearest `candidates`, nothing else. */
export function sideAnnStatement(side: VectorSide, grain: 'post' | 'topic', q: SemanticQuery): Statement {
  const dims = Math.floor(q.dimensions);
  const sem = semanticSql(q.operator ?? '<=>', dims);
  const d = semanticSql(q.operator ?? '<=>', dims, '', 'n.distance');
  return {
    db: side.vectorsDb,
    sql: `SELECT n.id, ${d.scoreOf} AS score, n.distance FROM (
       SELECT e.${grain}_id AS id, ${sem.distance} AS distance FROM ${side.vectors[grain]} e
       WHERE ${annPair(q)} ORDER BY ${sem.distance} LIMIT $2) n`,
    params: [q.vector, annCandidates(q.limit, q.candidates)],
    settings: annSettings(q),
  };
}

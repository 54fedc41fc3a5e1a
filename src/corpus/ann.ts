import { RagauditError } from '../errors.js';
import { FIRST_POST, FROM_POSTS, ITEM_COLUMNS, PUBLIC_POST, semanticSql } from './discourse-sql.js';
import type { SemanticQuery } from './discourse.js';

/**
 * How a semantic channel finds its nearest neighbours (docs/database.md#search-modes).
 *
 * `exact`: every stored vector of the channel's model/strategy that belongs to a public post is
 * ranked by its distance to the question (brute force): the reference, what "nearest" means.
 *
 * `ann`: the shape an approximate index can serve, as production serves it: the `candidates`
 * nearest vectors of the model/strategy first (ORDER BY the distance alone, LIMIT, over the
 * partial HNSW or IVFFlat index discourse-ai builds for that pair), then the visibility rule, then
 * the survivors re-sorted exactly by (distance, id). Index search depth is set for the statement's
 * transaction only: `hnsw.ef_search`, `ivfflat.probes` (SET LOCAL).
 */
export type SearchMode = 'ann' | 'exact';

/** What a semantic query may say about its search (all optional: absent = `exact`, the library's default). */
export interface AnnOptions {
  search?: SearchMode;
  /** Nearest candidates asked of the index before the visibility rule (ann). */
  candidates?: number;
  /** `hnsw.ef_search` for the statement (ann); default: the candidate count, within pgvector's 1..1000. */
  efSearch?: number;
  /** `ivfflat.probes` for the statement (ann); default: the server's. */
  probes?: number;
  /** The most candidates a second pass may ask when the first list is short (src/corpus/ann-passes.ts). */
  maxCandidates?: number;
  /** Set by a second pass on pgvector 0.8+: the statement scans the index iteratively (relaxed order). */
  iterative?: boolean;
}

/** pgvector's bounds on `hnsw.ef_search`. */
export const EF_SEARCH_MAX = 1000;

/** Candidates asked of the index when the channel names none: four times the list, at least 100. */
export function annCandidates(limit: number, candidates?: number): number {
  return Math.max(1, Math.floor(candidates ?? Math.max(100, 4 * limit)));
}

/** The search mode a channel gets when its config names none: `ann` on PostgreSQL, `exact` on the embedded demo. */
export function defaultSearchMode(kind: 'pg' | 'pglite'): SearchMode {
  return kind === 'pglite' ? 'exact' : 'ann';
}

/**
 * The run-time parameters an ANN statement sets for its own transaction. HNSW returns at most
 * `ef_search` rows, so the default follows the candidate count (pgvector allows 1..1000).
 */
export function annSettings(q: AnnOptions & { limit: number }): [string, string][] {
  const candidates = annCandidates(q.limit, q.candidates);
  const ef = Math.floor(q.efSearch ?? Math.min(EF_SEARCH_MAX, Math.max(40, candidates)));
  const out: [string, string][] = [['hnsw.ef_search', String(ef)]];
  if (q.probes !== undefined) out.push(['ivfflat.probes', String(Math.floor(q.probes))]);
  if (q.iterative) out.push(...iterativeSettings(candidates));
  return out;
}

/** pgvector's default `hnsw.max_scan_tuples`, raised for a scan that asks more than half of it. */
const MAX_SCAN_TUPLES_DEFAULT = 20_000;

/**
 * What an iterative index scan (pgvector 0.8+) sets for its transaction: both index kinds scan on
 * in relaxed order until the LIMIT is met, and HNSW may visit twice the candidates asked
 * (src/corpus/ann-passes.ts says when and why).
 */
export function iterativeSettings(candidates: number): [string, string][] {
  return [
    ['hnsw.iterative_scan', 'relaxed_order'],
    ['ivfflat.iterative_scan', 'relaxed_order'],
    ['hnsw.max_scan_tuples', String(Math.max(MAX_SCAN_TUPLES_DEFAULT, 2 * candidates))],
  ];
}

/**
 * A model or strategy id as SQL text. In the ANN shape they are literals, not parameters, so the
 * planner can prove a partial index's predicate (`WHERE model_id = 1 AND strategy_id = 1`) under
 * any plan, generic ones included; they are integers by the config's schema, checked again here.
 */
export function sqlInteger(n: number, what: string): string {
  if (!Number.isSafeInteger(n)) throw new RagauditError(`${what} must be an integer, got ${String(n)}`);
  return String(n);
}

/** `model_id = … AND strategy_id = …` as literals (see {@link sqlInteger}): a partial index's predicate, provable. */
export function annPair(q: Pick<SemanticQuery, 'modelId' | 'strategyId'>): string {
  return `e.model_id = ${sqlInteger(q.modelId, 'model_id')} AND e.strategy_id = ${sqlInteger(q.strategyId, 'strategy_id')}`;
}

/**
 * The ANN shape over the forum's own vectors: the `candidates` nearest vectors of the pair by the
 * distance alone (what an HNSW or IVFFlat index answers), then the visibility rule, then the
 * survivors by (distance, id), the first `limit`. `query` is the vector's SQL (`$1`, or `q.v` in
 * a batch's LATERAL); `first` the parameters before the candidate count. With `withDistance` the
 * rows carry their distance (a batch orders by it).
 */
export function annJoined(
  grain: 'post' | 'topic',
  table: string,
  q: Omit<SemanticQuery, 'vector'>,
  query: string,
  first: unknown[],
  withDistance = false,
): { sql: string; params: unknown[] } {
  const dims = Math.floor(q.dimensions);
  const op = q.operator ?? '<=>';
  const sem = semanticSql(op, dims, query === '$1' ? `$1::halfvec(${dims})` : query);
  const d = semanticSql(op, dims, '', 'n.distance');
  const n = first.length;
  const [cand, limit, max] = [`$${n + 1}`, `$${n + 2}`, `$${n + 3}`];
  const nearest = `(SELECT e.${grain}_id AS id, ${sem.distance} AS distance FROM ${table} e
         WHERE ${annPair(q)} ORDER BY ${sem.distance} LIMIT ${cand}) n`;
  const from =
    grain === 'post'
      ? `${nearest} JOIN ${FROM_POSTS} ON p.id = n.id`
      : `${nearest} JOIN topics t ON t.id = n.id LEFT JOIN categories c ON c.id = t.category_id JOIN posts p ON ${FIRST_POST}`;
  const sql = `SELECT ${ITEM_COLUMNS}, ${d.scoreOf} AS score${withDistance ? ', n.distance' : ''}
       FROM ${from}
       WHERE ${d.definedOf} AND ${PUBLIC_POST} AND (${max}::int IS NULL OR t.posts_count <= ${max}::int)
       ORDER BY n.distance, ${grain === 'post' ? 'p.id' : 't.id'} LIMIT ${limit}`;
  return { sql, params: [...first, annCandidates(q.limit, q.candidates), q.limit, q.maxPostsCount ?? null] };
}

import {
  byQuery,
  FIRST_POST,
  FROM_POSTS,
  ITEM_COLUMNS,
  OR_TSQUERY,
  orTsquery,
  postsOnce,
  PUBLIC_POST,
  semanticSql,
  toItems,
  type BatchRow,
  type Row,
} from './discourse-sql.js';
import { annJoined, annSettings, defaultSearchMode, type SearchMode } from './ann.js';
import { batchSecondPass, hasIterativeScans, withSecondPass } from './ann-passes.js';
import type { SqlClient } from '../db/sql-client.js';
import { readSearchSettings, type SearchSettings } from './site-settings.js';
import { fold } from '../text.js';
import { firstFetch, sideAnnStatement, sideExactStatement, sideSemantic } from './discourse-side.js';

export { PUBLIC_POST } from './discourse-sql.js';
export * from './discourse-types.js';
import {
  embeddingsTable,
  type BatchShape,
  type KeywordBatchQuery,
  type KeywordQuery,
  type SemanticBatchQuery,
  type SemanticQuery,
  type Statement,
} from './discourse-types.js';
import type { RetrievedItem } from '../model/retrieved-item.js';

/** Discourse (with discourse-ai embeddings) as seen by the audit: public content only. */

/** A batch's statements are prepared ahead of the cases that read them (see QueryOptions.background). */
const AHEAD = { background: true } as const;

/**
 * The shared batch shape's vectors as float4 (`vector`), each converted once: pgvector computes a
 * halfvec distance by converting every half to a float and summing in float, exactly the sums of
 * the `vector` distance over the converted values (half to float is exact), so the distances are
 * the same numbers; converting once per row and per question instead of once per pair halves the
 * statement's time where the conversion has no hardware help (the embedded engine, WebAssembly).
 */
const asFloats = (halfvec: string, dims: number) => `${halfvec}::vector(${dims})`;

/**
 * The batch's query vectors in the shared shape: `q(v, ord)`, each converted once (see {@link asFloats}).
 * OFFSET 0 keeps the subquery whole: flattened, its cast went into the LATERAL's distance and ran
 * once per (question, row), ~40 % of the post statement on the embedded engine.
 */
const sharedQueries = (dims: number) =>
  `(SELECT u.ord, ${asFloats('u.v', dims)} AS v FROM unnest($1::halfvec(${dims})[]) WITH ORDINALITY AS u(v, ord) OFFSET 0) q`;

export class DiscourseProfile {
  /** Visibility of posts already checked during this run (one profile lives for one run). */
  private readonly visible = new Map<number, boolean>();

  /** discourse-ai's tables, in the schema that holds the vectors (the search path's by default). */
  readonly vectors: { readonly post: string; readonly topic: string };

  /**
   * `vectorsSchema`: the schema of the embedding tables when they are not the forum's own, e.g. a
   * side schema `ragaudit embed --target-schema` filled; posts and topics are read from the forum.
   */
  /** Where the embedding tables are: the forum's database, or a side database of their own. */
  readonly vectorsDb: SqlClient;

  /** The forum's search settings, read once (see {@link searchSettings}). */
  private settings?: Promise<SearchSettings>;

  /** Whether the vectors' pgvector has iterative index scans, read once (see {@link iterativeScans}). */
  private iterative?: Promise<boolean>;

  constructor(
    readonly db: SqlClient,
    opts: {
      vectorsSchema?: string | undefined;
      vectorsDb?: SqlClient | undefined;
      /** The forum's search settings when known; else read from its site_settings on first use. */
      searchSettings?: SearchSettings | undefined;
      /** The vectors' pgvector version when known (`extversion`); else read on first need. */
      pgvector?: string | undefined;
    } = {},
  ) {
    this.vectors = {
      post: embeddingsTable('post', opts.vectorsSchema),
      topic: embeddingsTable('topic', opts.vectorsSchema),
    };
    this.vectorsDb = opts.vectorsDb ?? db;
    if (opts.searchSettings) this.settings = Promise.resolve(opts.searchSettings);
    if (opts.pgvector !== undefined) this.iterative = Promise.resolve(hasIterativeScans(opts.pgvector));
  }

  /**
   * Whether the vectors' database has pgvector's iterative index scans (0.8+), which a short `ann`
   * list's second pass uses (src/corpus/ann-passes.ts); read from pg_extension once, and false
   * when pgvector is absent, older or cannot be read: the second pass then raises ef_search instead.
   */
  iterativeScans(): Promise<boolean> {
    return (this.iterative ??= this.vectorsDb
      .query<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'")
      .then(
        ([row]) => hasIterativeScans(row?.v),
        () => false,
      ));
  }

  /** How the forum's own search reads a question (search_ignore_accents, default_locale). */
  searchSettings(): Promise<SearchSettings> {
    return (this.settings ??= readSearchSettings((sql, params) => this.db.query(sql, params)));
  }

  /**
   * A question as the forum's search reads it: with search_ignore_accents on, Discourse indexes the
   * text without accents and strips them from the query, so the keyword channels fold it the same
   * way (NFKD, combining marks dropped: "dérailleur" → "derailleur"); else as it is.
   */
  private async keywordText(text: string): Promise<string> {
    return (await this.searchSettings()).ignoreAccents ? fold(text) : text;
  }

  /** A batch over a side database: one two-step search per vector (no statement can span both). */
  private async sideBatch(grain: 'post' | 'topic', q: SemanticBatchQuery): Promise<RetrievedItem[][]> {
    const out: RetrievedItem[][] = [];
    for (const vector of q.vectors) out.push(await this.semantic(grain, { ...q, vector }));
    return out;
  }

  /** The vectors live in another database than the forum: no query can join the two. */
  get separateVectors(): boolean {
    return this.vectorsDb !== this.db;
  }

  /** The search mode of a channel whose config names none: `ann` on PostgreSQL, `exact` on PGlite (the vectors' database decides). */
  defaultSearch(): SearchMode {
    return defaultSearchMode(this.vectorsDb.kind);
  }

  /**
   * The statement a semantic channel sends (the joined query; with a side vectors database, the
   * candidate statement sent there in `ann` mode, the first candidate statement in `exact` mode).
   */
  semanticStatement(grain: 'post' | 'topic', q: SemanticQuery): Statement {
    const sem = semanticSql(q.operator ?? '<=>', Math.floor(q.dimensions));
    if (this.separateVectors) {
      if (q.search === 'ann') return sideAnnStatement(this, grain, q);
      return sideExactStatement(this, grain, q, firstFetch(q));
    }
    if (q.search === 'ann') {
      const { sql, params } = annJoined(grain, this.vectors[grain], q, '$1', [q.vector]);
      return { db: this.db, sql, params, settings: annSettings(q) };
    }
    const params = [q.vector, q.modelId, q.strategyId, q.limit, q.maxPostsCount ?? null];
    const where = `e.model_id = $2 AND e.strategy_id = $3 AND ${PUBLIC_POST} AND ($5::int IS NULL OR t.posts_count <= $5)`;
    // The distance is computed once per row (OFFSET 0 keeps the subquery from being flattened,
    // which would compute it again in WHERE, in the sort key and in the score), the top k taken
    // by (distance, id), and only those k joined to their posts: the batch shapes' per-question
    // part, so both paths rank the same numbers the same way.
    const d = semanticSql(q.operator ?? '<=>', Math.floor(q.dimensions), '', 'r.distance');
    const y = semanticSql(q.operator ?? '<=>', Math.floor(q.dimensions), '', 'y.distance');
    return grain === 'post'
      ? {
          db: this.db,
          sql: `SELECT ${ITEM_COLUMNS}, ${d.scoreOf} AS score FROM (
         SELECT y.id, y.distance FROM (
           SELECT p.id, ${sem.distance} AS distance
           FROM ${this.vectors.post} e JOIN ${FROM_POSTS} ON p.id = e.post_id WHERE ${where} OFFSET 0) y
         WHERE ${y.definedOf} ORDER BY y.distance, y.id LIMIT $4) r
       JOIN ${FROM_POSTS} ON p.id = r.id
       ORDER BY r.distance, p.id`,
          params,
        }
      : {
          db: this.db,
          sql: `SELECT ${ITEM_COLUMNS}, ${d.scoreOf} AS score FROM (
         SELECT y.topic_id, y.post_id, y.distance FROM (
           SELECT t.id AS topic_id, p.id AS post_id, ${sem.distance} AS distance
           FROM ${this.vectors.topic} e JOIN topics t ON t.id = e.topic_id LEFT JOIN categories c ON c.id = t.category_id
           JOIN posts p ON ${FIRST_POST}
           WHERE ${where} OFFSET 0) y
         WHERE ${y.definedOf} ORDER BY y.distance, y.topic_id LIMIT $4) r
       JOIN ${FROM_POSTS} ON p.id = r.post_id
       ORDER BY r.distance, r.topic_id`,
          params,
        };
  }

  /**
   * Items a retrieval statement of this profile returned: each passed the public rule in that
   * statement, so its post counts as checked for the rest of the run ({@link publicPostIds}).
   */
  private known(items: RetrievedItem[]): RetrievedItem[] {
    for (const item of items) this.visible.set(Number(item.post_id), true);
    return items;
  }

  private knownLists(lists: RetrievedItem[][]): RetrievedItem[][] {
    for (const items of lists) this.known(items);
    return lists;
  }

  /** Runs a statement of the profile (with its settings, when it has some). */
  private async run<T extends object>(st: Statement): Promise<T[]> {
    return st.settings?.length
      ? st.db.query<T>(st.sql, st.params, { settings: st.settings })
      : st.db.query<T>(st.sql, st.params);
  }

  /** One semantic list, with the `ann` second pass when the first came back short (src/corpus/ann-passes.ts). */
  private async semantic(grain: 'post' | 'topic', q: SemanticQuery): Promise<RetrievedItem[]> {
    const items = await withSecondPass(
      q,
      () => this.iterativeScans(),
      async (asked) =>
        this.separateVectors
          ? sideSemantic(this, grain, asked)
          : toItems(await this.run<Row>(this.semanticStatement(grain, asked)), `semantic ${grain} search`),
    );
    return this.known(items);
  }

  async semanticPosts(q: SemanticQuery): Promise<RetrievedItem[]> {
    return this.semantic('post', q);
  }

  async semanticTopics(q: SemanticQuery): Promise<RetrievedItem[]> {
    return this.semantic('topic', q);
  }

  /** The statement a keyword channel sends for one question (doctor EXPLAINs it). */
  async keywordStatement(grain: 'post' | 'topic', q: KeywordQuery): Promise<Statement> {
    const params = [await this.keywordText(q.text), q.config, q.limit, q.maxPostsCount ?? null];
    return grain === 'post'
      ? {
          db: this.db,
          sql: `SELECT ${ITEM_COLUMNS}, ts_rank_cd(s.search_data, query) AS score
       FROM post_search_data s JOIN ${FROM_POSTS} ON p.id = s.post_id, ${OR_TSQUERY} AS query
       WHERE s.search_data @@ query AND ${PUBLIC_POST} AND ($4::int IS NULL OR t.posts_count <= $4)
       ORDER BY score DESC, p.id LIMIT $3`,
          params,
        }
      : {
          db: this.db,
          sql: `SELECT ${ITEM_COLUMNS}, ts_rank_cd(s.search_data, query) AS score
       FROM topic_search_data s JOIN topics t ON t.id = s.topic_id LEFT JOIN categories c ON c.id = t.category_id
       JOIN posts p ON ${FIRST_POST}, ${OR_TSQUERY} AS query
       WHERE s.search_data @@ query AND ${PUBLIC_POST} AND ($4::int IS NULL OR t.posts_count <= $4)
       ORDER BY score DESC, t.id LIMIT $3`,
          params,
        };
  }

  async keywordPosts(q: KeywordQuery): Promise<RetrievedItem[]> {
    return this.known(toItems(await this.run<Row>(await this.keywordStatement('post', q)), 'keyword post search'));
  }

  async keywordTopics(q: KeywordQuery): Promise<RetrievedItem[]> {
    return this.known(toItems(await this.run<Row>(await this.keywordStatement('topic', q)), 'keyword topic search'));
  }

  /**
   * How a batched semantic statement is shaped. `lateral`: the single query itself, run once per
   * vector inside a LATERAL top-k, so the planner keeps the plan it makes for one question (an
   * ANN index on a real forum). `shared`: the public candidate rows are computed once per
   * statement and every vector ranks them, each distance computed once (the embedded demo: a few
   * hundred posts, no index). Both return exactly the single query's lists: the same rows, scored
   * by the same expressions, ordered by the same keys (distance, then id: a total order). Keyword
   * statements are always `lateral` (a text-search index serves each question better than a scan).
   */
  batchShape(q: { shape?: BatchShape }): BatchShape {
    return q.shape ?? (this.db.kind === 'pglite' ? 'shared' : 'lateral');
  }

  /**
   * {@link semanticPosts} for many query vectors in one statement (`unnest … WITH ORDINALITY`);
   * one list per vector, in input order, each exactly what the single query returns.
   */
  async semanticPostsBatch(q: SemanticBatchQuery): Promise<RetrievedItem[][]> {
    if (this.separateVectors) return this.sideBatch('post', q);
    if (q.search === 'ann') return this.annBatch('post', q);
    const dims = Math.floor(q.dimensions);
    const op = q.operator ?? '<=>';
    const params = [q.vectors, q.modelId, q.strategyId, q.limit, q.maxPostsCount ?? null];
    const where = `e.model_id = $2 AND e.strategy_id = $3 AND ${PUBLIC_POST} AND ($5::int IS NULL OR t.posts_count <= $5)`;
    const queries = `unnest($1::halfvec(${dims})[]) WITH ORDINALITY AS q(v, ord)`;
    let sql: string;
    if (this.batchShape(q) === 'lateral') {
      const sem = semanticSql(op, dims, 'q.v');
      sql = postsOnce({
        select: `SELECT q.ord::int AS ord, r.post_id, r.score, r.distance AS rank_key, r.post_id AS rank_tie
         FROM ${queries} CROSS JOIN LATERAL (
         SELECT p.id AS post_id, ${sem.score} AS score, ${sem.distance} AS distance
         FROM ${this.vectors.post} e JOIN ${FROM_POSTS} ON p.id = e.post_id
         WHERE ${where} AND ${sem.defined}
         ORDER BY ${sem.distance}, p.id LIMIT $4) r`,
      });
    } else {
      const sem = semanticSql(op, dims, 'q.v', 'x.emb');
      const d = semanticSql(op, dims, '', 'y.distance');
      // OFFSET 0 keeps the distance computed once per row (a flattened subquery would repeat it in WHERE and ORDER BY).
      sql = postsOnce({
        with: `x AS MATERIALIZED (
         SELECT p.id, ${asFloats(`e.embeddings::halfvec(${dims})`, dims)} AS emb
         FROM ${this.vectors.post} e JOIN ${FROM_POSTS} ON p.id = e.post_id WHERE ${where})`,
        select: `SELECT q.ord::int AS ord, r.id AS post_id, r.score, r.distance AS rank_key, r.id AS rank_tie
         FROM ${sharedQueries(dims)} CROSS JOIN LATERAL (
         SELECT y.id, ${d.scoreOf} AS score, y.distance FROM (SELECT x.id, ${sem.distance} AS distance FROM x OFFSET 0) y
         WHERE ${d.definedOf} ORDER BY y.distance, y.id LIMIT $4) r`,
      });
    }
    return this.knownLists(
      byQuery(await this.db.query<BatchRow>(sql, params, AHEAD), q.vectors.length, 'semantic post search'),
    );
  }

  /** {@link semanticTopics} for many query vectors in one statement (see {@link semanticPostsBatch}). */
  async semanticTopicsBatch(q: SemanticBatchQuery): Promise<RetrievedItem[][]> {
    if (this.separateVectors) return this.sideBatch('topic', q);
    if (q.search === 'ann') return this.annBatch('topic', q);
    const dims = Math.floor(q.dimensions);
    const op = q.operator ?? '<=>';
    const params = [q.vectors, q.modelId, q.strategyId, q.limit, q.maxPostsCount ?? null];
    const from = `${this.vectors.topic} e JOIN topics t ON t.id = e.topic_id LEFT JOIN categories c ON c.id = t.category_id
         JOIN posts p ON ${FIRST_POST}`;
    const where = `e.model_id = $2 AND e.strategy_id = $3 AND ${PUBLIC_POST} AND ($5::int IS NULL OR t.posts_count <= $5)`;
    const queries = `unnest($1::halfvec(${dims})[]) WITH ORDINALITY AS q(v, ord)`;
    let sql: string;
    if (this.batchShape(q) === 'lateral') {
      const sem = semanticSql(op, dims, 'q.v');
      sql = postsOnce({
        select: `SELECT q.ord::int AS ord, r.post_id, r.score, r.distance AS rank_key, r.topic_id AS rank_tie
         FROM ${queries} CROSS JOIN LATERAL (
         SELECT t.id AS topic_id, p.id AS post_id, ${sem.score} AS score, ${sem.distance} AS distance
         FROM ${from} WHERE ${where} AND ${sem.defined}
         ORDER BY ${sem.distance}, t.id LIMIT $4) r`,
      });
    } else {
      const sem = semanticSql(op, dims, 'q.v', 'x.emb');
      const d = semanticSql(op, dims, '', 'y.distance');
      sql = postsOnce({
        with: `x AS MATERIALIZED (
         SELECT t.id AS topic_id, p.id AS post_id, ${asFloats(`e.embeddings::halfvec(${dims})`, dims)} AS emb FROM ${from} WHERE ${where})`,
        select: `SELECT q.ord::int AS ord, r.post_id, r.score, r.distance AS rank_key, r.topic_id AS rank_tie
         FROM ${sharedQueries(dims)} CROSS JOIN LATERAL (
         SELECT y.topic_id, y.post_id, ${d.scoreOf} AS score, y.distance
         FROM (SELECT x.topic_id, x.post_id, ${sem.distance} AS distance FROM x OFFSET 0) y
         WHERE ${d.definedOf} ORDER BY y.distance, y.topic_id LIMIT $4) r`,
      });
    }
    return this.knownLists(
      byQuery(await this.db.query<BatchRow>(sql, params, AHEAD), q.vectors.length, 'semantic topic search'),
    );
  }

  /**
   * The ANN shape for many vectors: the single ANN statement in a LATERAL per vector (always: the
   * index serves each vector on its own), and the short lists' second pass in one more such
   * statement, so each list is exactly the single query's.
   */
  private async annBatch(grain: 'post' | 'topic', q: SemanticBatchQuery): Promise<RetrievedItem[][]> {
    const first = await this.annBatchPass(grain, q);
    return this.knownLists(
      await batchSecondPass(
        q,
        first,
        () => this.iterativeScans(),
        (again) => this.annBatchPass(grain, again),
      ),
    );
  }

  private async annBatchPass(grain: 'post' | 'topic', q: SemanticBatchQuery): Promise<RetrievedItem[][]> {
    const dims = Math.floor(q.dimensions);
    const { sql, params } = annJoined(grain, this.vectors[grain], q, 'q.v', [q.vectors], true);
    const idCol = grain === 'post' ? 'r.post_id' : 'r.topic_id';
    const rows = await this.db.query<BatchRow>(
      postsOnce({
        select: `SELECT q.ord::int AS ord, r.post_id, r.score, r.distance AS rank_key, ${idCol} AS rank_tie
       FROM unnest($1::halfvec(${dims})[]) WITH ORDINALITY AS q(v, ord) CROSS JOIN LATERAL (${sql}) r`,
      }),
      params,
      { settings: annSettings(q), ...AHEAD },
    );
    return byQuery(rows, q.vectors.length, `semantic ${grain} search`);
  }

  /** {@link keywordPosts} for many questions in one statement: the single query in a LATERAL top-k per question. */
  async keywordPostsBatch(q: KeywordBatchQuery): Promise<RetrievedItem[][]> {
    const texts = await Promise.all(q.texts.map((t) => this.keywordText(t)));
    const params = [texts, q.config, q.limit, q.maxPostsCount ?? null];
    const where = `${PUBLIC_POST} AND ($4::int IS NULL OR t.posts_count <= $4)`;
    const sql = postsOnce(
      {
        select: `SELECT q.ord::int AS ord, r.post_id, r.score, r.score AS rank_key, r.post_id AS rank_tie
     FROM unnest($1::text[]) WITH ORDINALITY AS q(text, ord) CROSS JOIN LATERAL (
       SELECT p.id AS post_id, ts_rank_cd(s.search_data, query) AS score
       FROM post_search_data s JOIN ${FROM_POSTS} ON p.id = s.post_id, ${orTsquery('q.text')} AS query
       WHERE s.search_data @@ query AND ${where}
       ORDER BY score DESC, p.id LIMIT $3) r`,
      },
      'DESC',
    );
    return this.knownLists(
      byQuery(await this.db.query<BatchRow>(sql, params, AHEAD), q.texts.length, 'keyword post search'),
    );
  }

  /** {@link keywordTopics} for many questions in one statement (see {@link semanticPostsBatch}). */
  async keywordTopicsBatch(q: KeywordBatchQuery): Promise<RetrievedItem[][]> {
    const texts = await Promise.all(q.texts.map((t) => this.keywordText(t)));
    const params = [texts, q.config, q.limit, q.maxPostsCount ?? null];
    const from = `topic_search_data s JOIN topics t ON t.id = s.topic_id LEFT JOIN categories c ON c.id = t.category_id
         JOIN posts p ON ${FIRST_POST}`;
    const where = `${PUBLIC_POST} AND ($4::int IS NULL OR t.posts_count <= $4)`;
    const sql = postsOnce(
      {
        select: `SELECT q.ord::int AS ord, r.post_id, r.score, r.score AS rank_key, r.topic_id AS rank_tie
     FROM unnest($1::text[]) WITH ORDINALITY AS q(text, ord) CROSS JOIN LATERAL (
       SELECT t.id AS topic_id, p.id AS post_id, ts_rank_cd(s.search_data, query) AS score
       FROM ${from}, ${orTsquery('q.text')} AS query
       WHERE s.search_data @@ query AND ${where}
       ORDER BY score DESC, t.id LIMIT $3) r`,
      },
      'DESC',
    );
    return this.knownLists(
      byQuery(await this.db.query<BatchRow>(sql, params, AHEAD), q.texts.length, 'keyword topic search'),
    );
  }

  /**
   * Which of these post ids exist and are public (citation validity, golden checks), as of the
   * first time this run asked about each or retrieved it (a channel's statement asks the same
   * public rule): many answers cite the same posts, which are the posts retrieval returned, and
   * one query per post and run at most keeps the database out of the generation loop's hot path.
   */
  async publicPostIds(ids: number[]): Promise<Set<number>> {
    const unknown = [...new Set(ids.filter((id) => !this.visible.has(id)))];
    if (unknown.length) {
      const rows = await this.db.query<{ id: number }>(
        `SELECT p.id FROM ${FROM_POSTS} WHERE p.id = ANY($1::int[]) AND ${PUBLIC_POST}`,
        [unknown],
      );
      const found = new Set(rows.map((r) => Number(r.id)));
      for (const id of unknown) this.visible.set(id, found.has(id));
    }
    return new Set(ids.filter((id) => this.visible.get(id)));
  }

  /** Which of these topic ids exist and have at least one public post. */
  async publicTopicIds(ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.query<{ id: number }>(
      `SELECT DISTINCT t.id FROM ${FROM_POSTS} WHERE t.id = ANY($1::int[]) AND ${PUBLIC_POST}`,
      [ids],
    );
    return new Set(rows.map((r) => Number(r.id)));
  }

  /** Public posts of one topic in a post-number window (neighbourhood evidence). */
  async postsAround(topicId: number, fromNumber: number, toNumber: number): Promise<RetrievedItem[]> {
    const rows = await this.db.query<Row>(
      `SELECT ${ITEM_COLUMNS}, 0 AS score FROM ${FROM_POSTS}
       WHERE p.topic_id = $1 AND p.post_number BETWEEN $2 AND $3 AND ${PUBLIC_POST} ORDER BY p.post_number`,
      [topicId, fromNumber, toNumber],
    );
    return this.known(toItems(rows, 'neighbourhood'));
  }

  /** Titles of all public topics, for the title gate's document frequencies. */
  async publicTopicTitles(): Promise<{ topic_id: number; title: string }[]> {
    return this.db.query(
      `SELECT DISTINCT t.id AS topic_id, t.title FROM ${FROM_POSTS} WHERE ${PUBLIC_POST} ORDER BY t.id`,
    );
  }
}

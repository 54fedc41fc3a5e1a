import type { ChannelConfig, Config } from '../config/schema.js';
import { DatabaseError } from '../errors.js';
import { PUBLIC_POST, type DiscourseProfile } from '../corpus/discourse.js';

/**
 * The parts of `doctor` that look at vectors and time the channels (src/doctor/diagnose.ts runs
 * them in its order): what a check is, and the context every check reads.
 */

export type Mark = 'pass' | 'warn' | 'fail';

export interface DoctorCheck {
  /** Stable key, e.g. `server`, `tables`, `channel:semantic_posts`. */
  id: string;
  mark: Mark;
  sentence: string;
  /** Further lines (missing columns, ids, pairs). */
  details?: string[];
  /** Measured latency of a sample query, ms. */
  latency_ms?: number;
}

export type Query = <T extends object>(sql: string, params?: unknown[]) => Promise<T[]>;

/** What every check reads: the database (and the vectors' one), the config, and where checks go. */
export interface DoctorContext {
  profile: DiscourseProfile;
  config: Config;
  query: Query;
  /** The embedding tables' database: the forum's, or a side one (database.vectors_url). */
  vquery: Query;
  /** Runs one check; a database error becomes that check's failure, not the end of the report. */
  attempt: (id: string, what: string, run: () => Promise<DoctorCheck | DoctorCheck[]>) => Promise<void>;
  hasTable: (name: string) => boolean;
  now: () => number;
  checks: DoctorCheck[];
}

export const pct = (n: number, d: number) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)} %`);

/** A check the database refused: a failure naming it (anything else is a bug and propagates). */
export function failed(id: string, what: string, e: unknown): DoctorCheck {
  if (!(e instanceof DatabaseError)) throw e;
  return { id, mark: 'fail', sentence: `${what}: the database refused the check: ${e.message}` };
}

/**
 * Coverage of public content by each pair when the vectors are in another database: the public
 * ids from the forum, each pair's ids from the side, counted in memory (no query spans both).
 */
async function coverageAcross(
  query: Query,
  vquery: Query,
  grain: 'post' | 'topic',
  table: string,
  pairs: readonly { m: number; s: number }[],
): Promise<{ m: number; s: number; n: number }[]> {
  const FROM = 'posts p JOIN topics t ON t.id = p.topic_id LEFT JOIN categories c ON c.id = t.category_id';
  const pub = await query<{ id: number }>(
    `SELECT DISTINCT ${grain === 'post' ? 'p.id' : 't.id'} AS id FROM ${FROM} WHERE ${PUBLIC_POST}`,
  );
  const ids = new Set(pub.map((r) => Number(r.id)));
  const out: { m: number; s: number; n: number }[] = [];
  for (const p of pairs) {
    const rows = await vquery<{ id: number }>(
      `SELECT ${grain}_id AS id FROM ${table} WHERE model_id = $1 AND strategy_id = $2`,
      [p.m, p.s],
    );
    out.push({ m: p.m, s: p.s, n: rows.filter((r) => ids.has(Number(r.id))).length });
  }
  return out;
}

/** discourse-ai's tables per grain: type, pairs, coverage, and each semantic channel against them. */
export async function embeddingChecks(
  ctx: DoctorContext,
  semantic: readonly Extract<ChannelConfig, { kind: 'semantic' }>[],
  pgvector: string | undefined,
): Promise<void> {
  const { profile, config, query, vquery, attempt, hasTable } = ctx;
  for (const grain of ['post', 'topic'] as const) {
    const table = profile.vectors[grain];
    const channels = semantic.filter((c) => c.grain === grain);
    if (!hasTable(table) || !pgvector) continue;
    await attempt(`embeddings:${grain}`, table, async () => {
      const [type] = await vquery<{ t: string }>(
        `SELECT format_type(a.atttypid, a.atttypmod) AS t FROM pg_attribute a
         WHERE a.attrelid = to_regclass($1::text) AND a.attname = 'embeddings' AND NOT a.attisdropped`,
        [table],
      );
      const idCol = `${grain}_id`;
      const pairs = await vquery<{ m: number; s: number; n: string; d: number | null }>(
        `SELECT model_id AS m, strategy_id AS s, count(*) AS n, max(vector_dims(embeddings)) AS d
         FROM ${table} GROUP BY 1, 2 ORDER BY 1, 2`,
      );
      const [totals] = await query<{ n: string }>(
        grain === 'post'
          ? `SELECT count(*) AS n FROM posts p JOIN topics t ON t.id = p.topic_id LEFT JOIN categories c ON c.id = t.category_id WHERE ${PUBLIC_POST}`
          : `SELECT count(DISTINCT t.id) AS n FROM posts p JOIN topics t ON t.id = p.topic_id LEFT JOIN categories c ON c.id = t.category_id WHERE ${PUBLIC_POST}`,
      );
      const covered = profile.separateVectors
        ? await coverageAcross(query, vquery, grain, table, pairs)
        : await query<{ m: number; s: number; n: string }>(
            `SELECT e.model_id AS m, e.strategy_id AS s, count(DISTINCT e.${idCol}) AS n FROM ${table} e
             JOIN ${grain === 'post' ? 'posts p ON p.id = e.post_id JOIN topics t ON t.id = p.topic_id' : 'topics t ON t.id = e.topic_id JOIN posts p ON p.topic_id = t.id'}
             LEFT JOIN categories c ON c.id = t.category_id WHERE ${PUBLIC_POST} GROUP BY 1, 2`,
          );
      const publicTotal = Number(totals?.n ?? 0);
      const cover = new Map(covered.map((r) => [`${r.m}|${r.s}`, Number(r.n)]));
      const details = pairs.map(
        (p) =>
          `model_id ${p.m}, strategy_id ${p.s}: ${Number(p.n)} rows, ${p.d ?? '?'} dimensions, ${pct(cover.get(`${p.m}|${p.s}`) ?? 0, publicTotal)} of ${publicTotal} public ${grain}s`,
      );
      const out: DoctorCheck[] = [
        {
          id: `embeddings:${grain}`,
          mark: pairs.length ? 'pass' : channels.length ? 'fail' : 'warn',
          sentence: pairs.length
            ? `${table} (column embeddings: ${type?.t ?? 'unknown type'}) holds ${pairs.length} model/strategy pair${pairs.length > 1 ? 's' : ''}.`
            : `${table} is empty.`,
          details,
        },
      ];
      for (const ch of channels) {
        const p = pairs.find((x) => x.m === ch.model_id && x.s === ch.strategy_id);
        const id = `embeddings:${ch.name}`;
        const pair = `model_id ${ch.model_id}, strategy_id ${ch.strategy_id}`;
        if (!p)
          out.push({ id, mark: 'fail', sentence: `Channel ${ch.name} reads ${pair}, which has no rows in ${table}.` });
        else if (p.d !== config.embedder.dimensions)
          out.push({
            id,
            mark: 'fail',
            sentence: `Channel ${ch.name}: the stored vectors for ${pair} have ${p.d} dimensions, the configured embedder makes ${config.embedder.dimensions}.`,
          });
        else {
          const share = publicTotal ? (cover.get(`${p.m}|${p.s}`) ?? 0) / publicTotal : 0;
          out.push({
            id,
            mark: share >= 0.95 ? 'pass' : 'warn',
            sentence: `Channel ${ch.name} reads ${pair}: ${p.d} dimensions as configured, covering ${pct(cover.get(`${p.m}|${p.s}`) ?? 0, publicTotal)} of public ${grain}s${share >= 0.95 ? '' : ' (the rest can never be retrieved by this channel)'}.`,
          });
        }
      }
      return out;
    });
  }
}

/** One timed sample query per channel (a stored vector as the semantic query: no embedding model needed). */
export async function channelChecks(ctx: DoctorContext, pgvector: string | undefined): Promise<void> {
  const { profile, config, query, vquery, attempt, hasTable, now, checks } = ctx;
  for (const ch of config.retrieval.channels) {
    const table = ch.kind === 'keyword' ? `${ch.grain}_search_data` : profile.vectors[ch.grain];
    const id = `channel:${ch.name}`;
    if (!hasTable(table) || !hasTable('posts') || (ch.kind === 'semantic' && !pgvector)) {
      checks.push({
        id,
        mark: 'fail',
        sentence: `Channel ${ch.name} was not tried: what it reads is missing or not readable (see above).`,
      });
      continue;
    }
    await attempt(id, `channel ${ch.name}`, async () => {
      const limit = ch.top_k ?? config.retrieval.top_k;
      let started: number;
      let items: unknown[];
      let asked: string;
      if (ch.kind === 'semantic') {
        // A stored vector as the query: the doctor needs no embedding model to time the channel.
        const [v] = await vquery<{ v: string }>(
          `SELECT embeddings::text AS v FROM ${table} WHERE model_id = $1 AND strategy_id = $2 LIMIT 1`,
          [ch.model_id, ch.strategy_id],
        );
        if (!v) return { id, mark: 'fail', sentence: `Channel ${ch.name}: no stored vector to query with.` };
        const q = {
          vector: v.v,
          dimensions: config.embedder.dimensions,
          modelId: ch.model_id,
          strategyId: ch.strategy_id,
          operator: ch.operator,
          limit,
          search: ch.search ?? profile.defaultSearch(),
          ...(ch.ann_candidates !== undefined ? { candidates: ch.ann_candidates } : {}),
          ...(ch.ann_max_candidates !== undefined ? { maxCandidates: ch.ann_max_candidates } : {}),
          ...(ch.ef_search !== undefined ? { efSearch: ch.ef_search } : {}),
          ...(ch.probes !== undefined ? { probes: ch.probes } : {}),
        };
        asked = 'a stored vector';
        started = now();
        items = ch.grain === 'post' ? await profile.semanticPosts(q) : await profile.semanticTopics(q);
        const ms = now() - started;
        if (q.search === 'ann' && items.length < limit) {
          // A short ANN list: is it the forum (fewer public items than asked) or the index's
          // candidates eaten by visibility? The exact search of the same vector tells.
          const ex = { ...q, search: 'exact' as const };
          const exact = (ch.grain === 'post' ? await profile.semanticPosts(ex) : await profile.semanticTopics(ex))
            .length;
          if (exact > items.length)
            return {
              id,
              mark: 'warn',
              sentence: `Channel ${ch.name} (${ch.kind}, ${ch.grain}) answered ${asked} with only ${items.length} of ${limit} items in ${ms.toFixed(1)} ms, where the exact search finds ${exact}: the index's nearest candidates are mostly not public. Raise ann_candidates (and ef_search), or use search: exact.`,
              latency_ms: Math.round(ms * 10) / 10,
            };
        }
      } else {
        const [t] = await query<{ title: string }>(
          `SELECT t.title FROM posts p JOIN topics t ON t.id = p.topic_id LEFT JOIN categories c ON c.id = t.category_id
           WHERE ${PUBLIC_POST} ORDER BY t.id LIMIT 1`,
        );
        const q = { text: t?.title ?? '', config: config.database.text_search_config, limit };
        asked = `the title "${q.text.slice(0, 60)}"`;
        started = now();
        items = ch.grain === 'post' ? await profile.keywordPosts(q) : await profile.keywordTopics(q);
      }
      const ms = now() - started;
      return {
        id,
        mark: items.length ? 'pass' : 'warn',
        sentence: `Channel ${ch.name} (${ch.kind}, ${ch.grain}) answered ${asked} with ${items.length} of ${limit} items in ${ms.toFixed(1)} ms.`,
        latency_ms: Math.round(ms * 10) / 10,
      };
    });
  }
}

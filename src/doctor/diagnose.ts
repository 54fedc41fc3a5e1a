import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { PUBLIC_POST, type DiscourseProfile } from '../corpus/discourse.js';
import {
  channelChecks,
  embeddingChecks,
  failed,
  type DoctorCheck,
  type DoctorContext,
  type Mark,
  type Query,
} from './checks.js';
import { indexChecks } from './index-checks.js';
import { checkRetrievalSetup, textSearchConfigs } from '../corpus/retrieval-setup.js';

/**
 * What a database offers the configured audit, checked in plain sentences before anyone runs it:
 * the server, the Discourse tables and columns read, the text-search configuration, pgvector,
 * discourse-ai's embeddings (type, dimensions, which model/strategy pairs, their coverage of
 * public content), visibility counts, the goldens' visibility, one sample query per channel, and
 * whether the role could write, and the checks run and retrieval make before their first case
 * (checkRetrievalSetup: the same code, so the doctor fails whatever would stop a run). Every
 * statement is a read; each check catches its own database errors, so one failing check does not
 * hide the others.
 */

export type { DoctorCheck, Mark } from './checks.js';

/** The columns each table must have for the profile's queries (src/corpus/discourse.ts). */
export const COLUMNS_READ: Readonly<Record<string, readonly string[]>> = {
  posts: ['id', 'topic_id', 'post_number', 'raw', 'post_type', 'hidden', 'deleted_at', 'reply_to_post_number'],
  topics: ['id', 'title', 'slug', 'category_id', 'posts_count', 'visible', 'deleted_at', 'archetype'],
  categories: ['id', 'name', 'read_restricted'],
  post_search_data: ['post_id', 'search_data'],
  topic_search_data: ['topic_id', 'search_data'],
  ai_posts_embeddings: ['post_id', 'model_id', 'strategy_id', 'embeddings'],
  ai_topics_embeddings: ['topic_id', 'model_id', 'strategy_id', 'embeddings'],
};

/** The visibility rule, in words, as every query applies it. */
export const PUBLIC_RULE =
  'a regular post (post_type 1), not hidden, not deleted, in a visible, not deleted topic that is not a private message, in a category that is not read-restricted';

/** The lowest pgvector with `halfvec`, which the semantic queries cast to. */
const PGVECTOR_MIN = [0, 7, 0] as const;

export interface DoctorOptions {
  /** Cases whose golden ids must be public. */
  cases?: readonly Located<Case>[];
  /** Milliseconds since some origin (tests pass a fake); default performance.now. */
  now?: () => number;
  /**
   * Asks the configured services what run and retrieval ask before their first case (embedder,
   * reranker; generator and judge for run only); one sentence per service that cannot be used.
   */
  services?: () => Promise<{ retrieval: string[]; run: string[] }>;
  /**
   * The config is not the user's but the channels found in the forum (no config given): the
   * checks before the first case are those of the database only, and no cases says how to add some.
   */
  forum?: boolean;
}

function versionAtLeast(version: string, min: readonly number[]): boolean {
  const parts = version.split('.').map((p) => parseInt(p, 10) || 0);
  for (let i = 0; i < min.length; i++) {
    const a = parts[i] ?? 0;
    if (a !== min[i]) return a > min[i]!;
  }
  return true;
}

/** A table a channel reads: its name as SQL writes it, its bare name, and its schema when one is named. */
interface Needed {
  name: string;
  table: string;
  schema?: string | undefined;
}

/** Which tables the configured channels read, beside posts, topics and categories. */
function tablesNeeded(config: Config, profile: DiscourseProfile): Needed[] {
  const out = new Map<string, Needed>();
  for (const t of ['posts', 'topics', 'categories']) out.set(t, { name: t, table: t });
  const schema = config.database.vectors_schema;
  for (const ch of config.retrieval.channels) {
    const n: Needed =
      ch.kind === 'keyword'
        ? { name: `${ch.grain}_search_data`, table: `${ch.grain}_search_data` }
        : { name: profile.vectors[ch.grain], table: `ai_${ch.grain}s_embeddings`, schema };
    out.set(n.name, n);
  }
  return [...out.values()];
}

/** Runs every check; the order is the order of the report. */
export async function diagnose(
  profile: DiscourseProfile,
  config: Config,
  opts: DoctorOptions = {},
): Promise<DoctorCheck[]> {
  const query: Query = (sql, params) => profile.db.query(sql, params);
  /** The embedding tables' database: the forum's, or a side one (database.vectors_url). */
  const vquery: Query = (sql, params) => profile.vectorsDb.query(sql, params);
  const now = opts.now ?? (() => performance.now());
  const checks: DoctorCheck[] = [];
  const attempt = async (id: string, what: string, run: () => Promise<DoctorCheck | DoctorCheck[]>) => {
    try {
      const c = await run();
      checks.push(...(Array.isArray(c) ? c : [c]));
    } catch (e) {
      checks.push(failed(id, what, e));
    }
  };

  await attempt('server', 'server version', async () => {
    const [row] = await query<{ v: string; n: string }>(
      "SELECT current_setting('server_version') AS v, current_setting('server_version_num') AS n",
    );
    const num = Number(row?.n ?? 0);
    return num >= 130000
      ? { id: 'server', mark: 'pass', sentence: `PostgreSQL ${row?.v} at ${profile.db.label}.` }
      : { id: 'server', mark: 'warn', sentence: `PostgreSQL ${row?.v}: versions before 13 are not tested.` };
  });

  const present = new Map<string, Set<string>>();
  await attempt('tables', 'tables and columns', async () => {
    const needed = tablesNeeded(config, profile);
    // The catalog, not information_schema, which lists only the columns this role holds a
    // privilege on (a table it may not read would be reported missing). A table in a named schema
    // is looked up there; the others where the search path finds them.
    const columnsOf = (q: Query) =>
      q<{ s: string; t: string; c: string; readable: boolean }>(
        `SELECT n.nspname AS s, c.relname AS t, a.attname AS c, has_column_privilege(c.oid, a.attnum, 'SELECT') AS readable
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         WHERE c.relname = ANY ($1::text[]) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
           AND (n.nspname = ANY (current_schemas(false)) OR n.nspname = $2)`,
        [needed.map((n) => n.table), config.database.vectors_schema ?? null],
      );
    const rows = await columnsOf(query);
    const vrows = profile.separateVectors ? await columnsOf(vquery) : rows;
    const details: string[] = [];
    let refused = false;
    for (const n of needed) {
      const isVectors = n.table.startsWith('ai_');
      const cols = (isVectors ? vrows : rows).filter(
        (r) => r.t === n.table && (n.schema === undefined || r.s === n.schema),
      );
      if (!cols.length) {
        details.push(`table ${n.name} is missing`);
        continue;
      }
      const read = COLUMNS_READ[n.table] ?? [];
      const lacking = read.filter((c) => !cols.some((r) => r.c === c));
      const unreadable = read.filter((c) => cols.some((r) => r.c === c && !r.readable));
      if (lacking.length)
        details.push(`table ${n.name} lacks column${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')}`);
      if (unreadable.length) {
        refused = true;
        details.push(
          unreadable.length === read.length - lacking.length
            ? `table ${n.name} is there but not readable by this role (it needs SELECT on it)`
            : `table ${n.name}: column${unreadable.length > 1 ? 's' : ''} ${unreadable.join(', ')} not readable by this role`,
        );
      }
      // Only what this role can read counts as there: the checks that read it are not tried otherwise.
      if (!unreadable.length) present.set(n.name, new Set(cols.map((r) => r.c)));
    }
    return details.length
      ? {
          id: 'tables',
          mark: 'fail',
          sentence: `Some tables or columns the configured channels read are missing${refused ? ' or not readable by this role' : ''}.`,
          details,
        }
      : {
          id: 'tables',
          mark: 'pass',
          sentence: `The tables the configured channels read are there: ${needed.map((n) => n.name).join(', ')}.`,
        };
  });
  const hasTable = (t: string) => present.has(t);
  const ctx: DoctorContext = { profile, config, query, vquery, attempt, hasTable, now, checks };

  if (config.retrieval.channels.some((c) => c.kind === 'keyword')) {
    await attempt('text_search', 'text-search configuration', async () => {
      const name = config.database.text_search_config;
      const known = await textSearchConfigs(query);
      return known.includes(name)
        ? { id: 'text_search', mark: 'pass', sentence: `The text-search configuration '${name}' exists.` }
        : {
            id: 'text_search',
            mark: 'fail',
            sentence: `The text-search configuration '${name}' (database.text_search_config) does not exist; available: ${known.join(', ') || '(none)'}.`,
          };
    });
  }

  if (config.retrieval.channels.some((c) => c.kind === 'keyword')) {
    await attempt('accents', "the forum's search settings", async () => {
      const s = await profile.searchSettings();
      const locale = s.locale ? `; default_locale ${s.locale}` : '';
      return s.ignoreAccents
        ? {
            id: 'accents',
            mark: 'pass',
            sentence: `search_ignore_accents is on${locale}: the forum indexes its text without accents, so the keyword channels search each question without accents too.`,
          }
        : {
            id: 'accents',
            mark: 'pass',
            sentence: `search_ignore_accents is off (${s.source}${locale}): accents are kept in the index and in the questions.`,
          };
    });
  }

  const semantic = config.retrieval.channels.filter((c) => c.kind === 'semantic');
  let pgvector: string | undefined;
  await attempt('pgvector', 'pgvector', async () => {
    const [row] = await vquery<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'");
    pgvector = row?.v;
    const need = semantic.length ? 'fail' : 'warn';
    if (!pgvector)
      return {
        id: 'pgvector',
        mark: need,
        sentence: `pgvector is not installed in this database${semantic.length ? ': the semantic channels cannot run' : ' (only needed by semantic channels)'}.`,
      };
    return versionAtLeast(pgvector, PGVECTOR_MIN)
      ? { id: 'pgvector', mark: 'pass', sentence: `pgvector ${pgvector} is installed.` }
      : {
          id: 'pgvector',
          mark: need,
          sentence: `pgvector ${pgvector} is installed; the semantic queries need ${PGVECTOR_MIN.join('.')} or later (halfvec).`,
        };
  });

  await embeddingChecks(ctx, semantic, pgvector);

  if (hasTable('posts') && hasTable('topics') && hasTable('categories')) {
    await attempt('visibility', 'public content', async () => {
      const [r] = await query<{ all_posts: string; public_posts: string; all_topics: string; public_topics: string }>(
        `SELECT (SELECT count(*) FROM posts) AS all_posts, (SELECT count(*) FROM topics) AS all_topics,
           count(*) AS public_posts, count(DISTINCT t.id) AS public_topics
         FROM posts p JOIN topics t ON t.id = p.topic_id LEFT JOIN categories c ON c.id = t.category_id WHERE ${PUBLIC_POST}`,
      );
      const pub = Number(r?.public_posts ?? 0);
      return {
        id: 'visibility',
        mark: pub > 0 ? 'pass' : 'fail',
        sentence: `${Number(r?.public_topics ?? 0)} of ${Number(r?.all_topics ?? 0)} topics and ${pub} of ${Number(r?.all_posts ?? 0)} posts are public; only public content is ever retrieved or cited.`,
        details: [`public means ${PUBLIC_RULE}`],
      };
    });

    if (opts.forum && !opts.cases?.length)
      checks.push({ id: 'goldens', mark: 'pass', sentence: 'No cases given: pass --cases FILE to check goldens.' });
    if (opts.cases?.length) {
      await attempt('goldens', 'golden ids', async () => {
        const topicIds = [...new Set(opts.cases!.flatMap((c) => c.value.expected_topic_ids))];
        const postIds = [...new Set(opts.cases!.flatMap((c) => c.value.expected_post_ids))];
        const [topics, posts] = [await profile.publicTopicIds(topicIds), await profile.publicPostIds(postIds)];
        const details: string[] = [];
        for (const c of opts.cases!) {
          const t = c.value.expected_topic_ids.filter((id) => !topics.has(id));
          const p = c.value.expected_post_ids.filter((id) => !posts.has(id));
          if (t.length || p.length)
            details.push(
              `${c.file}:${c.line}: case ${c.value.id}: ${[t.length ? `topic ${t.join(', ')}` : '', p.length ? `post ${p.join(', ')}` : ''].filter(Boolean).join('; ')} not public or missing`,
            );
        }
        return details.length
          ? {
              id: 'goldens',
              mark: 'fail',
              sentence: `${details.length} case${details.length > 1 ? 's name' : ' names'} golden ids that are not public here: they could never be retrieved.`,
              details,
            }
          : {
              id: 'goldens',
              mark: 'pass',
              sentence: `Every golden id of the ${opts.cases!.length} cases is public (${topicIds.length} topics, ${postIds.length} posts).`,
            };
      });
    }
  }

  await channelChecks(ctx, pgvector);
  await indexChecks(ctx, pgvector);

  // The very checks run and retrieval make before their first case, database and services: what
  // fails here would stop them (exit 2).
  await attempt('preflight', 'the checks before the first case', async () => {
    const setup: string[] = [];
    try {
      await checkRetrievalSetup(profile, config);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      setup.push(...(e.problems.length ? e.problems : [e.message]));
    }
    if (opts.forum)
      return setup.length
        ? {
            id: 'preflight',
            mark: 'fail',
            sentence: 'retrieval over the channels found would stop before the first case (exit 2):',
            details: setup,
          }
        : {
            id: 'preflight',
            mark: 'pass',
            sentence: "retrieval's database checks pass for the channels found (services are checked with a config).",
          };
    const services = opts.services ? await opts.services() : { retrieval: [], run: [] };
    const both = [...setup, ...services.retrieval];
    if (both.length)
      return {
        id: 'preflight',
        mark: 'fail',
        sentence: 'run and retrieval would stop before the first case (exit 2):',
        details: [...both, ...services.run],
      };
    if (services.run.length)
      return {
        id: 'preflight',
        mark: 'fail',
        sentence: 'retrieval would pass its checks before the first case, but run would stop there (exit 2):',
        details: services.run,
      };
    return {
      id: 'preflight',
      mark: 'pass',
      sentence: `run and retrieval would pass their checks before the first case${opts.services ? ' (database and services)' : ''}.`,
    };
  });

  if (profile.db.kind === 'pglite') {
    checks.push({
      id: 'role',
      mark: 'pass',
      sentence: 'The embedded database is a private copy in this process: no one else reads or writes it.',
    });
    return checks;
  }
  await attempt('role', 'role privileges', async () => {
    const [r] = await query<{ u: string; sup: boolean; w: boolean }>(
      `SELECT current_user AS u, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS sup,
         coalesce((SELECT bool_or(has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE'))
           FROM pg_class c WHERE c.relname = ANY ($1::text[]) AND pg_table_is_visible(c.oid)), false) AS w`,
      [Object.keys(COLUMNS_READ)],
    );
    return r?.sup || r?.w
      ? {
          id: 'role',
          mark: 'warn',
          sentence: `The role ${r.u} ${r.sup ? 'is a superuser' : 'may write to the forum tables'}: ragaudit only reads, and runs every statement in a read-only transaction, but a read-only role would make that a property of the server, not of this tool.`,
        }
      : { id: 'role', mark: 'pass', sentence: `The role ${r?.u ?? '?'} cannot write to the forum tables.` };
  });

  return checks;
}

/** The worst mark: what a CLI turns into its exit code. */
export function worstMark(checks: readonly DoctorCheck[]): Mark {
  return checks.some((c) => c.mark === 'fail') ? 'fail' : checks.some((c) => c.mark === 'warn') ? 'warn' : 'pass';
}

/**
 * The database checks of `doctor`, one function each, in the order diagnose.ts runs them: the
 * server, the tables and columns read, the keyword channels' text search, pgvector, public
 * content and the goldens, the checks before the first case, the role's privileges.
 */
import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { ChannelConfig, Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { PUBLIC_POST, type DiscourseProfile } from '../corpus/discourse.js';
import { checkRetrievalSetup, textSearchConfigs } from '../corpus/retrieval-setup.js';
import type { DoctorContext, Query } from './checks.js';

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

/** The server's version: 13 or later is tested. */
export async function serverCheck(ctx: DoctorContext): Promise<void> {
  const { attempt, query, profile } = ctx;
  await attempt('server', 'server version', async () => {
    const [row] = await query<{ v: string; n: string }>(
      "SELECT current_setting('server_version') AS v, current_setting('server_version_num') AS n",
    );
    const num = Number(row?.n ?? 0);
    return num >= 130000
      ? { id: 'server', mark: 'pass', sentence: `PostgreSQL ${row?.v} at ${profile.db.label}.` }
      : { id: 'server', mark: 'warn', sentence: `PostgreSQL ${row?.v}: versions before 13 are not tested.` };
  });
}

/** The tables and columns the configured channels read; `present` gets each table's columns. */
export async function tablesCheck(ctx: DoctorContext, present: Map<string, Set<string>>): Promise<void> {
  const { attempt, query, vquery, profile, config } = ctx;
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
}

/** The keyword channels' text-search configuration, and whether the forum indexes without accents. */
export async function keywordChecks(ctx: DoctorContext): Promise<void> {
  const { attempt, query, profile, config } = ctx;
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
}

/** pgvector's presence and version; its version, when installed, for the checks that need it. */
export async function pgvectorCheck(
  ctx: DoctorContext,
  semantic: readonly Extract<ChannelConfig, { kind: 'semantic' }>[],
): Promise<string | undefined> {
  const { attempt, vquery } = ctx;
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

  return pgvector;
}

/** How much content is public, and whether every golden id of `cases` is. */
export async function contentChecks(
  ctx: DoctorContext,
  cases: readonly Located<Case>[] | undefined,
  forum = false,
): Promise<void> {
  const { attempt, query, profile, hasTable } = ctx;
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

    if (forum && !cases?.length)
      ctx.checks.push({ id: 'goldens', mark: 'pass', sentence: 'No cases given: pass --cases FILE to check goldens.' });
    if (cases?.length) {
      await attempt('goldens', 'golden ids', async () => {
        const topicIds = [...new Set(cases!.flatMap((c) => c.value.expected_topic_ids))];
        const postIds = [...new Set(cases!.flatMap((c) => c.value.expected_post_ids))];
        const [topics, posts] = [await profile.publicTopicIds(topicIds), await profile.publicPostIds(postIds)];
        const details: string[] = [];
        for (const c of cases!) {
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
              sentence: `Every golden id of the ${cases!.length} cases is public (${topicIds.length} topics, ${postIds.length} posts).`,
            };
      });
    }
  }
}

/**
 * The very checks run and retrieval make before their first case, database and services: what
 * fails here would stop them (exit 2).
 */
export async function preflightCheck(
  ctx: DoctorContext,
  askServices: (() => Promise<{ retrieval: string[]; run: string[] }>) | undefined,
  forum = false,
): Promise<void> {
  const { attempt, profile, config } = ctx;
  await attempt('preflight', 'the checks before the first case', async () => {
    const setup: string[] = [];
    try {
      await checkRetrievalSetup(profile, config);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      setup.push(...(e.problems.length ? e.problems : [e.message]));
    }
    if (forum)
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
    const services = askServices ? await askServices() : { retrieval: [], run: [] };
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
      sentence: `run and retrieval would pass their checks before the first case${askServices ? ' (database and services)' : ''}.`,
    };
  });
}

/** Whether the role could write (it should not need to: every statement is a read). */
export async function roleCheck(ctx: DoctorContext): Promise<void> {
  const { attempt, query, profile } = ctx;
  if (profile.db.kind === 'pglite') {
    ctx.checks.push({
      id: 'role',
      mark: 'pass',
      sentence: 'The embedded database is a private copy in this process: no one else reads or writes it.',
    });
    return;
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
}

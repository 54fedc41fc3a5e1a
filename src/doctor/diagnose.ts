import type { Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { Config } from '../config/schema.js';
import type { DiscourseProfile } from '../corpus/discourse.js';
import {
  channelChecks,
  embeddingChecks,
  failed,
  type DoctorCheck,
  type DoctorContext,
  type Mark,
  type Query,
} from './checks.js';
import {
  contentChecks,
  keywordChecks,
  pgvectorCheck,
  preflightCheck,
  roleCheck,
  serverCheck,
  tablesCheck,
} from './database-checks.js';
import { indexChecks } from './index-checks.js';

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
export { COLUMNS_READ, PUBLIC_RULE } from './database-checks.js';

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

/** Runs every check; the order is the order of the report. */
export async function diagnose(
  profile: DiscourseProfile,
  config: Config,
  opts: DoctorOptions = {},
): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  /** Each table the tables check found, with its columns: what the later checks may read. */
  const present = new Map<string, Set<string>>();
  const query: Query = (sql, params) => profile.db.query(sql, params);
  const ctx: DoctorContext = {
    profile,
    config,
    query,
    /** The embedding tables' database: the forum's, or a side one (database.vectors_url). */
    vquery: (sql, params) => profile.vectorsDb.query(sql, params),
    attempt: async (id, what, run) => {
      try {
        const c = await run();
        checks.push(...(Array.isArray(c) ? c : [c]));
      } catch (e) {
        checks.push(failed(id, what, e));
      }
    },
    hasTable: (t) => present.has(t),
    now: opts.now ?? (() => performance.now()),
    checks,
  };
  await serverCheck(ctx);
  await tablesCheck(ctx, present);
  await keywordChecks(ctx);
  const semantic = config.retrieval.channels.filter((c) => c.kind === 'semantic');
  const pgvector = await pgvectorCheck(ctx, semantic);
  await embeddingChecks(ctx, semantic, pgvector);
  await contentChecks(ctx, opts.cases, opts.forum);
  await channelChecks(ctx, pgvector);
  await indexChecks(ctx, pgvector);
  await preflightCheck(ctx, opts.services, opts.forum);
  await roleCheck(ctx);
  return checks;
}

/** The worst mark: what a CLI turns into its exit code. */
export function worstMark(checks: readonly DoctorCheck[]): Mark {
  return checks.some((c) => c.mark === 'fail') ? 'fail' : checks.some((c) => c.mark === 'warn') ? 'warn' : 'pass';
}

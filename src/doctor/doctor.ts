import { existsSync } from 'node:fs';
import { loadCases, type Located } from '../cases/load.js';
import type { Case } from '../cases/schema.js';
import type { LoadedConfig } from '../config/load.js';
import { DiscourseProfile } from '../corpus/discourse.js';
import type { SqlClient } from '../db/sql-client.js';
import { diagnose, worstMark, type DoctorCheck, type Mark } from './diagnose.js';
import { checkConfiguredServices } from '../wiring/services.js';
import { casePaths, demoForum, openDatabase, openVectorsDatabase } from '../wiring/context.js';
import { forumConfig } from './forum-config.js';
import type { AppEnv, AppHooks } from '../app/hooks.js';

export interface DoctorInputs extends AppEnv {
  loaded: LoadedConfig;
  /** --db, else DATABASE_URL, else the config's database (the embedded demo when it names none). */
  db?: string | undefined;
  /** Case files whose goldens are checked; default the config's (none is fine here). */
  cases?: readonly string[] | undefined;
  /**
   * No config was given, only a database: the forum is judged by the channels `init` would write
   * for it (src/doctor/forum-config.ts), with no cases but `cases` and no services.
   */
  forum?: boolean | undefined;
}

export interface DoctorReport {
  database: string;
  checks: DoctorCheck[];
  worst: Mark;
  /** What the checks were made against, when it is not a config (no config given). */
  note?: string;
}

/** Connects, runs every check, closes. Problems of the database are checks; only a failed connection throws. */
export async function runDoctor(inputs: DoctorInputs, hooks: AppHooks): Promise<DoctorReport> {
  const dbUrl = inputs.db ?? inputs.env.DATABASE_URL;
  const paths = inputs.cases?.length
    ? [...inputs.cases]
    : inputs.forum
      ? []
      : casePaths(inputs.loaded).filter((p) => existsSync(p));
  const cases: Located<Case>[] = paths.length ? loadCases(paths) : [];
  for (const text of cases.flatMap((c) => c.warnings ?? [])) hooks.event({ kind: 'warning', text });
  const db = await openDatabase(inputs.loaded.config, {
    ...(dbUrl ? { dbUrl } : {}),
    cwd: inputs.cwd,
    onProgress: (text) => hooks.event({ kind: 'status', text }),
    ...demoForum(inputs.loaded),
  });
  let vectorsDb: SqlClient | undefined;
  try {
    vectorsDb = await openVectorsDatabase(inputs.loaded.config);
    const vectorsSchema = inputs.loaded.config.database.vectors_schema;
    const profile = new DiscourseProfile(db, { vectorsSchema, vectorsDb });
    if (inputs.forum) {
      const { config, note } = await forumConfig(profile);
      const checks = await diagnose(profile, config, { cases, forum: true });
      return { database: db.label, checks, worst: worstMark(checks), note };
    }
    const config = inputs.loaded.config;
    const checks = await diagnose(profile, config, {
      cases,
      services: () => checkConfiguredServices(config, inputs.env),
    });
    return { database: db.label, checks, worst: worstMark(checks) };
  } finally {
    await vectorsDb?.close();
    await db.close();
  }
}

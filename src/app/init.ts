import { existsSync, mkdirSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { starterCases, starterConfig } from '../config/starter.js';
import { connectPostgres } from '../db/sql-client.js';
import { detectDatabase, type DetectedDatabase } from '../corpus/detect.js';
import { DiscourseProfile } from '../corpus/discourse.js';
import { InputError } from '../errors.js';
import { writeArtifact } from '../io/artifacts.js';
import { urlSecrets } from '../llm/remote.js';
import type { AppEnv } from './hooks.js';

export interface InitInputs extends AppEnv {
  /** The database to look at (read-only). */
  db: string;
  /** The config file to write. */
  out: string;
  /** Config name (a slug). */
  name: string;
  /** Overwrite existing files. */
  force: boolean;
  /** The date written in the files' comments. */
  date: string;
}

export interface InitResult {
  detected: DetectedDatabase;
  config: string;
  cases: string;
  /** Semantic channels were written enabled (an embeddings server is known). */
  semantic: boolean;
}

/** Looks at the database and writes a starting config and seed cases beside it. */
export async function runInit(inputs: InitInputs): Promise<InitResult> {
  const configFile = resolve(inputs.cwd, inputs.out);
  const casesFile = configFile.replace(/(\.ya?ml)?$/, '.cases.yml');
  for (const f of [configFile, casesFile])
    if (existsSync(f) && !inputs.force)
      throw new InputError(`${f} exists: choose another --out, or --force to replace it`);
  const db = await connectPostgres(inputs.db);
  let detected: DetectedDatabase;
  try {
    detected = await detectDatabase(new DiscourseProfile(db));
  } finally {
    await db.close();
  }
  const semantic = Boolean(inputs.env.EMBEDDING_BASE_URL);
  mkdirSync(dirname(configFile), { recursive: true });
  // The URL's password must not reach the files: refused by the writer if it ever did.
  const secrets = urlSecrets(inputs.db);
  writeArtifact(
    configFile,
    starterConfig(detected, {
      name: inputs.name,
      urlVariable: 'DATABASE_URL',
      casesFile: relative(dirname(configFile), casesFile),
      embedderKnown: semantic,
      date: inputs.date,
    }),
    { secrets },
  );
  writeArtifact(casesFile, starterCases(detected, inputs.date), { secrets });
  return { detected, config: configFile, cases: casesFile, semantic };
}

import type { LoadedConfig } from '../config/load.js';
import { backfillEmbeddings, checkTargetSchema, type BackfillReport } from '../corpus/embed-backfill.js';
import { KNOWN_STRATEGIES } from '../corpus/embedding-text.js';
import { InputError } from '../errors.js';
import { demoForum, describeComponent, openDatabase } from '../wiring/context.js';
import { createEmbedder } from '../wiring/providers.js';
import type { AppEnv, AppHooks } from './hooks.js';

export interface EmbedInputs extends AppEnv {
  loaded: LoadedConfig;
  /** The forum: --db, else DATABASE_URL, else the config's database. */
  db?: string | undefined;
  target: string;
  targetSchema?: string | undefined;
  modelId: number;
  strategies: number[];
  topics: boolean;
  batchSize?: number | undefined;
  signal?: AbortSignal;
}

/** Embeds the forum's public posts (and topics) with the config's embedder into the target. */
export async function runEmbed(inputs: EmbedInputs, hooks: AppHooks): Promise<BackfillReport> {
  // Bad input is told before any database is opened.
  if (inputs.targetSchema !== undefined) checkTargetSchema(inputs.targetSchema);
  const unknown = inputs.strategies.filter((s) => !KNOWN_STRATEGIES.includes(s));
  if (unknown.length)
    throw new InputError(
      `--strategy ${unknown.join(', ')}: known strategies are ${KNOWN_STRATEGIES.join(' (native), ')} (enriched)`,
    );
  const embedder = createEmbedder(inputs.loaded.config, inputs.env);
  hooks.event({
    kind: 'component',
    role: 'embedder',
    label: describeComponent(embedder, 'semantic embedding model').label,
  });
  const dbUrl = inputs.db ?? inputs.env.DATABASE_URL;
  const source = await openDatabase(inputs.loaded.config, {
    ...(dbUrl ? { dbUrl } : {}),
    cwd: inputs.cwd,
    onProgress: (text) => hooks.event({ kind: 'status', text }),
    ...demoForum(inputs.loaded),
  });
  const progress = hooks.progress('embed');
  try {
    return await backfillEmbeddings({
      source,
      target: { url: inputs.target, ...(inputs.targetSchema ? { schema: inputs.targetSchema } : {}) },
      embedder,
      model_id: inputs.modelId,
      strategies: inputs.strategies,
      topics: inputs.topics,
      connect_timeout_ms: inputs.loaded.config.database.connect_timeout_ms,
      ...(inputs.batchSize ? { batch_size: inputs.batchSize } : {}),
      onProgress: (done, total) => progress.update(done, total),
      ...(inputs.signal ? { signal: inputs.signal } : {}),
    });
  } finally {
    progress.stop();
    await source.close();
  }
}

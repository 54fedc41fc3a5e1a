import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../paths.js';
import { configDigest } from '../store/config-digest.js';
import { publicConfig } from '../store/results-file.js';
import { SCHEMA_VERSION, type RunResult } from '../model/results.js';
import type { RunContext } from './context.js';

/** The package version, read once from package.json. */
export const TOOL_VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
})();

/** The fields every results file starts with. */
export function resultHeader(
  ctx: Pick<RunContext, 'config' | 'loaded' | 'db' | 'components' | 'graph'>,
  kind: RunResult['kind'],
  warnings: string[],
): Omit<RunResult, 'summary' | 'cases'> {
  const config = publicConfig(ctx.config);
  return {
    schema_version: SCHEMA_VERSION,
    tool: { name: 'ragaudit', version: TOOL_VERSION },
    kind,
    name: ctx.config.name,
    // Free text a user wrote, masked like the config that holds it.
    note: config.note as string,
    created_at: new Date().toISOString(),
    config_source: ctx.loaded.source,
    config,
    config_digest: configDigest(config),
    database: ctx.db.label,
    components: ctx.components,
    warnings,
    nodes: ctx.graph.nodes.map((n) => ({ name: n.name, kind: n.kind, grain: n.grain })),
  };
}

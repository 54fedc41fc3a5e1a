import { join, relative } from 'node:path';
import { loadCases } from '../cases/load.js';
import type { LoadedConfig } from '../config/load.js';
import { writeArtifact } from '../io/artifacts.js';
import { matrixMarkdown } from '../reports/matrix-table.js';
import { TOOL_VERSION } from '../wiring/header.js';
import { assertSameCases, matrixLabels, matrixNodes, type MatrixEntry } from '../runs/matrix.js';
import { timestamp } from '../store/results-file.js';
import { auditAndWrite } from './audit.js';
import type { AppEnv, AppHooks } from './hooks.js';
import { checkOutputDir } from './output-paths.js';
import { configCasePaths, openPipeline, outputDir } from './pipeline.js';
import { retrieveAndWrite } from './retrieval.js';

export interface MatrixInputs extends AppEnv {
  /** The configs, loaded and checked, in the order given. */
  configs: LoadedConfig[];
  /** Case files for every config, resolved; default: the configs' (which must agree). */
  cases?: readonly string[] | undefined;
  db?: string | undefined;
  /** The directory of the table (resolved) when --out gave one; default: the first config's output_dir. */
  out?: string | undefined;
  retrievalOnly: boolean;
}

export interface MatrixOutcome {
  entries: MatrixEntry[];
  /** The comparison table written as markdown. */
  table: string;
  /** Cases that ended in error, over every config. */
  errors: number;
}

/**
 * `matrix`: each config over the same cases, one after the other (a results file per config),
 * then the comparison table of their evidence nodes.
 */
export async function runMatrix(inputs: MatrixInputs, hooks: AppHooks): Promise<MatrixOutcome> {
  const loadeds = inputs.configs;
  const labels = matrixLabels(loadeds.map((l) => ({ name: l.config.name, source: l.source })));
  loadeds.forEach((l, i) => (l.config.name = labels[i]!));
  // Case problems surface before any database is opened.
  if (inputs.cases?.length) loadCases([...inputs.cases]);
  else {
    assertSameCases(
      loadeds.map((l) => {
        const paths = configCasePaths(l);
        return { source: l.source, paths, cases: loadCases(paths) };
      }),
    );
  }

  const entries: MatrixEntry[] = [];
  const secrets: string[] = [];
  let errors = 0;
  for (const [i, loaded] of loadeds.entries()) {
    const label = labels[i]!;
    hooks.event({ kind: 'config', index: i + 1, total: loadeds.length, label, source: loaded.source });
    const { ctx, cases, warnings } = await openPipeline({ ...inputs, loaded, models: !inputs.retrievalOnly }, hooks);
    try {
      const opts = { outputDir: outputDir(loaded, inputs.cwd), label, env: inputs.env };
      const { result, files } = inputs.retrievalOnly
        ? await retrieveAndWrite(ctx, cases, warnings, hooks, opts)
        : await auditAndWrite(ctx, cases, warnings, hooks, { ...opts, kind: 'run', env: inputs.env });
      entries.push({ label, source: loaded.source, result, files, ...matrixNodes(ctx) });
      secrets.push(...ctx.secrets);
      errors += result.summary.retrieval.errors;
    } finally {
      await ctx.close();
    }
  }

  const createdAt = new Date();
  const casesLabel = (inputs.cases?.length ? inputs.cases : configCasePaths(loadeds[0]!))
    .map((p) => relative(inputs.cwd, p) || '.')
    .join(', ');
  const md = matrixMarkdown(entries, {
    cases: casesLabel,
    createdAt: createdAt.toISOString(),
    version: TOOL_VERSION,
  });
  const dir = inputs.out ?? outputDir(loadeds[0]!, inputs.cwd);
  checkOutputDir(dir, inputs.out ? '--out' : 'output_dir');
  const table = writeArtifact(join(dir, `${timestamp(createdAt)}-matrix.md`), md, { secrets });
  return { entries, table, errors };
}

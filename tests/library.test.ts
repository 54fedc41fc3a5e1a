/** The package's library entry exposes the pipeline's pieces and loads without side effects. */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as lib from '../src/index.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The names `export { … }` and `export type { … }` statements of src/index.ts give (`x as y`: y). */
function indexExports(): string[] {
  const code = readFileSync(join(ROOT, 'src', 'index.ts'), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  return [...code.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((s) => s.trim().replace(/^type\s+/, ''))
      .filter(Boolean)
      .map((s) => s.split(/\s+as\s+/).pop()!),
  );
}

/** The names in the first column of docs/library.md's tables (backticked, call signatures cut). */
function documentedNames(): string[] {
  const md = readFileSync(join(ROOT, 'docs', 'library.md'), 'utf8');
  return md
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split('|')[1]!.matchAll(/`([A-Za-z_]\w*)/g)].map((m) => m[1]!));
}

describe('library entry', () => {
  it('exports the stages, not the CLI', () => {
    const names = [
      'loadConfig',
      'loadCases',
      'connectPostgres',
      'openDemoDatabase',
      'RetrievalGraph',
      'rrf',
      'zoneOf',
      'createRunContext',
      'runRetrieval',
      'buildAuditSetup',
      'runAudit',
    ];
    names.push(
      'evaluateTrec',
      'calibrate',
      'createJudgeSetup',
      'compareRuns',
      'evaluateReleaseGate',
      'loadReleaseGate',
      'readResults',
      'writeResults',
      'reportHtml',
      'metricsMarkdown',
      'createAudit',
      'providerHelp',
      'settingsFromEnv',
    );
    for (const name of names) expect(typeof (lib as Record<string, unknown>)[name], name).toBe('function');
    // The CLI is the bin and the `ragaudit/cli` subpath: the library carries no argv handling.
    expect('main' in lib).toBe(false);
    expect(lib.SCHEMA_VERSION).toBe(1);
    // The same zone rule as the CLI: -4 and 0 are the original audit's thresholds.
    expect([
      lib.zoneOf(-4.5, { abstain_below: -4, weak_below: 0 }),
      lib.zoneOf(-1, { abstain_below: -4, weak_below: 0 }),
      lib.zoneOf(0, { abstain_below: -4, weak_below: 0 }),
    ]).toEqual(['empty', 'weak', 'normal']);
  });

  it('exports the short list docs/library.md documents, and nothing else', () => {
    const exported = indexExports();
    expect(new Set(exported).size).toBe(exported.length);
    expect([...exported].sort()).toEqual([...new Set(documentedNames())].sort());
    // What the module gives at run time is within that list (types leave nothing at run time).
    for (const name of Object.keys(lib)) expect(exported, name).toContain(name);
  });
});

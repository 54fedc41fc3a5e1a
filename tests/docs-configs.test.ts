/**
 * The configs the docs show as files (a ```yaml block whose first line is `# file: configs/X.yml`)
 * load as written: schema, cross-field rules and `${VAR:-default}` interpolation, and the case,
 * probe and input-gate paths they name exist where the file says to save it.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { PACKAGE_ROOT } from '../src/paths.js';

const DOCS = join(PACKAGE_ROOT, 'docs');

/** Every config file block of the docs: the page, the path it is saved under, its text. */
function configBlocks(): { page: string; path: string; text: string }[] {
  return readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .flatMap((page) =>
      [...readFileSync(join(DOCS, page), 'utf8').matchAll(/^```yaml\n(# file: (\S+)\n[\s\S]*?)^```$/gm)].map((m) => ({
        page,
        path: m[2]!,
        text: m[1]!,
      })),
    );
}

const blocks = configBlocks();

describe('configs shown in the docs', () => {
  it('the local-models recipe shows its two configs', () => {
    expect(blocks.filter((b) => b.page === 'local-models.md').map((b) => b.path)).toEqual([
      'configs/local.yml',
      'configs/local-forum.yml',
    ]);
  });

  it.each(blocks.map((b) => [`${b.page}: ${b.path}`, b] as const))('%s loads as written', (_name, b) => {
    const file = join(mkdtempSync(join(tmpdir(), 'ragaudit-docs-config-')), basename(b.path));
    writeFileSync(file, b.text);
    // The environment a reader has set in the recipe (a database for a forum config); the rest
    // comes from the ${VAR:-default} defaults.
    const { config } = loadConfig(file, { DATABASE_URL: 'postgres://auditor@127.0.0.1:5432/forum' });
    expect(config.name).toMatch(/\S/);
    const saved = dirname(join(PACKAGE_ROOT, b.path));
    for (const p of [...config.cases, ...config.probes, ...(config.input_gate ? [config.input_gate] : [])])
      expect([p, existsSync(resolve(saved, p))]).toEqual([p, true]);
  });
});

/** Every config shipped in configs/ loads and passes the cross-field rules. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { PACKAGE_ROOT } from '../src/paths.js';

const dirs = [join(PACKAGE_ROOT, 'configs'), join(PACKAGE_ROOT, 'configs', 'examples')];
const files = dirs.flatMap((d) =>
  readdirSync(d)
    .filter((f) => f.endsWith('.yml'))
    .map((f) => join(d, f)),
);

describe('shipped configs', () => {
  it.each(files)('%s loads', (file) => {
    // The production example reads its database from the environment; the others need nothing.
    const { config } = loadConfig(file, { DATABASE_URL: 'postgres://auditor:pw@127.0.0.1:5432/forum' });
    expect(config.name).toMatch(/\S/);
    expect(config.note).toMatch(/\S/);
  });
});

/**
 * The config a results file stores, read back typed (src/config/stored.ts): each section checked
 * against its part of the config schema, masked secrets dropped, a section that does not fit left
 * out without hiding the others. The reports, calibrate, the zone A/B, the judge-trust check and
 * the label directory read it instead of re-parsing `unknown`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storedConfig } from '../src/config/stored.js';
import { readResults } from '../src/store/results-file.js';

const REFERENCE = join(import.meta.dirname, '..', 'results', 'reference');

describe('the stored config', () => {
  it('reads back every section a run of this version wrote, with the types of a loaded config', () => {
    const file = readdirSync(REFERENCE).find((f) => f.endsWith('-demo.json'))!;
    const result = readResults(join(REFERENCE, file));
    const stored = storedConfig(result);
    expect(Object.keys(stored)).toEqual(Object.keys(result.config));
    // The reference run's thresholds (results/reference/README.md: the demo's defaults).
    expect(stored.zones).toEqual({ abstain_below: -4, weak_below: 0 });
    expect(stored.rerank?.name).toBe('rerank');
    expect(stored.cases).toEqual(result.config.cases);
  });

  it('drops masked secrets and leaves out only the sections that do not fit', () => {
    const stored = storedConfig({
      config: {
        zones: { abstain_below: -2, weak_below: 1 },
        // api_key was masked when the file was written: without it the section still fits.
        rerank: { name: 'rr', node: 'fused', provider: 'offline', model: 'lexical', api_key: '***' },
        language: 'xx',
        cases: ['cases/a.yml', 7],
      },
    });
    expect(stored.zones).toEqual({ abstain_below: -2, weak_below: 1 });
    expect(stored.rerank).toMatchObject({ name: 'rr', node: 'fused', enabled: true });
    expect(stored.rerank).not.toHaveProperty('api_key');
    // Not a known language, not a list of paths: absent, as in a file that never had them.
    expect(stored).not.toHaveProperty('language');
    expect(stored).not.toHaveProperty('cases');
  });
});

/** The package's library entry exposes the pipeline's pieces and loads without side effects. */
import { describe, expect, it } from 'vitest';
import * as lib from '../src/index.js';

describe('library entry', () => {
  it('exports the stages and the CLI without running it', () => {
    for (const name of ['loadConfig', 'loadCases', 'connectPostgres', 'openDemoDatabase', 'RetrievalGraph', 'rrf', 'zoneOf', 'runAudit', 'evaluateTrec', 'calibrate', 'createJudgeSetup', 'reportHtml', 'main']) {
      expect(typeof (lib as Record<string, unknown>)[name], name).toBe('function');
    }
    expect(lib.SCHEMA_VERSION).toBe(1);
    // The same zone rule as the CLI: -4 and 0 are the seeds' thresholds.
    expect([lib.zoneOf(-4.5, { abstain_below: -4, weak_below: 0 }), lib.zoneOf(-1, { abstain_below: -4, weak_below: 0 }), lib.zoneOf(0, { abstain_below: -4, weak_below: 0 })]).toEqual(['empty', 'weak', 'normal']);
  });
});

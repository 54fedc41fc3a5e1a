/** The package's library entry exposes the pipeline's pieces and loads without side effects. */
import { describe, expect, it } from 'vitest';
import * as lib from '../src/index.js';

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
});

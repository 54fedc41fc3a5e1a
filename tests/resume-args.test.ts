/**
 * The resume command a run prints: the options that shape its config, paths made absolute,
 * values quoted for a shell and masked like every output; the case flags are left to the ledger,
 * which keeps them (and a resume without them reads them back).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resumeArgs, shellWord } from '../src/cli/resume-args.js';
import { caseSelection, resumedSelection, storedSelection } from '../src/store/resume-selection.js';
import type { OptionSpecs } from '../src/cli/options.js';

const SPECS: OptionSpecs = {
  config: { type: 'string', value: 'FILE', doc: '' },
  db: { type: 'string', value: 'URL', doc: '' },
  cases: { type: 'string', multiple: true, value: 'PATH', doc: '' },
  name: { type: 'string', value: 'NAME', doc: '' },
  'system-append': { type: 'string', multiple: true, value: 'NAME', doc: '' },
  shard: { type: 'string', value: 'I/N', doc: '' },
  batch: { type: 'boolean', doc: '' },
  'no-report': { type: 'boolean', doc: '' },
  resume: { type: 'string', value: 'RUN', doc: '' },
};

describe('the resume command', () => {
  it('repeats the config-shaping options, absolute paths, case flags left out, secrets masked', () => {
    const args = resumeArgs(
      {
        config: 'configs/a.yml',
        db: 'postgres://audit:s3cret-pw@db:5432/forum',
        cases: ['cases/x.yml'],
        name: 'my run',
        'system-append': ['short', 'cite'],
        shard: '2/4',
        batch: true,
        'no-report': false,
        resume: 'old',
      },
      SPECS,
      '/work',
    );
    expect(args).toEqual([
      '--config',
      '/work/configs/a.yml',
      '--db',
      // The password never reaches the console (quoted: a shell would expand the *).
      "'postgres://audit:***@db:5432/forum'",
      '--name',
      "'my run'",
      '--system-append',
      'short',
      '--system-append',
      'cite',
      '--batch',
    ]);
  });

  it('quotes a word a shell would split or expand, and only then', () => {
    expect(shellWord('/a/b-c_d.yml')).toBe('/a/b-c_d.yml');
    expect(shellWord("it's $HOME")).toBe(`'it'\\''s $HOME'`);
  });
});

describe('the case flags kept in the ledger', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-resume-args-'));
  const ledger = join(dir, 'r.ledger.jsonl');
  writeFileSync(
    ledger,
    `${JSON.stringify({ ledger: 1, run_id: 'r', kind: 'run', config_digest: 'd', created_at: 'x', cases: 2, selection: caseSelection(['/c/q.yml'], { index: 2, count: 4 }) })}\n`,
  );

  it('are read from the header line; a resume without flags takes them, one with flags keeps its own', () => {
    expect(storedSelection(ledger)).toEqual({ cases: ['/c/q.yml'], shard: '2/4' });
    expect(resumedSelection({}, ledger, dir)).toEqual({ cases: ['/c/q.yml'], shard: { index: 2, count: 4 } });
    // A run id resolves in the output directory as the runner resolves it.
    expect(resumedSelection({}, 'r', dir)).toEqual({ cases: ['/c/q.yml'], shard: { index: 2, count: 4 } });
    expect(resumedSelection({ cases: ['/own.yml'] }, ledger, dir)).toEqual({ cases: ['/own.yml'] });
    // Not a resume, or no such ledger (opening it for the resume says so): the flags as given.
    expect(resumedSelection({}, undefined, dir)).toEqual({});
    expect(resumedSelection({}, join(dir, 'none.ledger.jsonl'), dir)).toEqual({});
    expect(caseSelection(undefined, undefined)).toBeUndefined();
  });
});

/**
 * Console messages said once and helpfully: an error names its command once (no
 * `ragaudit run: run: …`), and an unknown command, option or gate metric is answered with the
 * nearest known name (exit 2).
 */
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../src/cli/command.js';
import { commandMessage, main } from '../src/cli/main.js';
import { InputError } from '../src/errors.js';
import { loadReleaseGate } from '../src/reports/release-gate.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { closestName, editDistance } from '../src/suggest.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIO = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    isTTY: false,
    cwd: PACKAGE_ROOT,
    env: { COLUMNS: '200' },
  };
  const code = await main(args, io);
  return { code, out, err };
}

describe('an error names its command once', () => {
  it('an unknown option of run: `ragaudit run: Unknown option …`, not `run: run:`', async () => {
    const r = await cli(['run', '--not-an-option']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^ragaudit run: Unknown option '--not-an-option'/);
    expect(r.err).not.toContain('run: run:');
  });

  it('compare without files, and compare --gate with one: the command and its flag, said once', async () => {
    const none = await cli(['compare']);
    expect(none.code).toBe(2);
    expect(none.err).toBe("ragaudit compare: expected one or more results files (see 'ragaudit compare --help')\n");
    const one = await cli(['compare', '--gate', 'cases/demo/gate.yml', 'x.json']);
    expect(one.code).toBe(2);
    expect(one.err).toMatch(/^ragaudit compare --gate: a gate needs two or more distinct results files/);
  });

  it('a message that does not start with its command gets it; one that does keeps its own', () => {
    expect(commandMessage('run', 'cases.yml:3: question: Required')).toBe(
      'ragaudit run: cases.yml:3: question: Required',
    );
    expect(commandMessage('run', 'run --gate: bad')).toBe('ragaudit run --gate: bad');
    // A sentence that merely starts with the same word is not a prefix.
    expect(commandMessage('run', 'run stopped: the server went away')).toBe(
      'ragaudit run: run stopped: the server went away',
    );
    expect(commandMessage('gate', new InputError('gate: expected one RESULTS.json, got 0').message)).toBe(
      'ragaudit gate: expected one RESULTS.json, got 0',
    );
  });
});

describe('did you mean', () => {
  it('edit distance counts insertions, deletions, substitutions and adjacent transpositions', () => {
    // Hand-counted: kitten → sitting is k→s, e→i, +g (3); "ab" → "ba" is one transposition.
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(closestName('--concurency', ['--config', '--concurrency'])).toBe('--concurrency');
    expect(closestName('--xyz', ['--config', '--concurrency'])).toBeUndefined();
    expect(closestName('hit5', ['hit_at_5', 'mrr_at_10'])).toBe('hit_at_5');
  });

  it('an unknown command: the nearest command, exit 2', async () => {
    const r = await cli(['compre']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      "ragaudit: unknown command 'compre'; did you mean 'compare'? (ragaudit --help lists the commands)\n",
    );
    // Nothing near: the list of commands instead.
    const far = await cli(['frobnicate']);
    expect(far.code).toBe(2);
    expect(far.err).toContain("ragaudit: unknown command 'frobnicate'\n\nragaudit ");
    expect(far.err).not.toContain('did you mean');
  });

  it('an unknown option: the nearest option of that command, exit 2', async () => {
    const r = await cli(['run', '--concurency', '2']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      "ragaudit run: Unknown option '--concurency'; did you mean '--concurrency'? (see 'ragaudit run --help')\n",
    );
    // A command with positionals: node's advice about '--' gives way to the suggestion.
    const g = await cli(['gate', 'x.json', '--rule', 'g.yml']);
    expect(g.code).toBe(2);
    expect(g.err).toBe(
      "ragaudit gate: Unknown option '--rule'; did you mean '--rules'? (see 'ragaudit gate --help')\n",
    );
  });

  it('an unknown metric in a gate file: the nearest metric, with file:line, exit 2', async () => {
    let message = '';
    try {
      loadReleaseGate('g.yml', 'hit_at_5: {min: 0.5}\npass_rat: {min: 1}\n');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain("g.yml:2: pass_rat: unknown metric; did you mean 'pass_rate'? (known: hit_at_5,");
  });
});

/**
 * Exit codes of `ragaudit run` through main(): 2 for bad config, flags or an unreachable
 * database, with messages that say where the problem is (file:line, host:port) and stack traces
 * only under --verbose. Exit codes 0 (all cases completed) and 1 (some ended in error) are
 * asserted by audit-wire.test.ts and audit-faults.test.ts on real runs.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, removeWorkDirs, runCli, workDir } from './fixtures/audit/harness.js';

const STACK_LINE = /^\s+at .+:\d+:\d+\)?$/m;

describe('ragaudit run exit codes', () => {
  const cwd = workDir('exit');
  afterAll(removeWorkDirs);

  it('exits 2 on a config with an unknown key, naming file:line and the key', async () => {
    const file = join(FIXTURES, 'unknown-key.yml');
    const run = await runCli(['run', '--config', file], { cwd, env: {} });
    expect(run.code).toBe(2);
    expect(run.out).toBe('');
    expect(run.err).toContain(`ragaudit run: invalid config ${file}`);
    expect(run.err).toContain(`${file}:5: generator: unknown key 'temprature'`);
    expect(run.err).not.toMatch(STACK_LINE);
  });

  it('exits 2 on bad generation flags, before opening anything', async () => {
    const bad = [
      // Flags are validated by the config schema, the flag named.
      [
        ['--generator', 'mistral:large'],
        '--generator mistral:large: generator.provider: Invalid option: expected one of "offline"|"openai"|"anthropic"',
      ],
      [['--generator', 'openai'], '--generator: expected PROVIDER:MODEL'],
      [['--concurrency', '0'], '--concurrency 0: generator.concurrency: Too small: expected number to be >0'],
      [['--weak-below=-5'], '--weak-below -5: zones.abstain_below: must be below weak_below (-4 ≥ -5)'],
      [['--retries', '3'], "Unknown option '--retries'"],
    ] as const;
    for (const [flags, message] of bad) {
      const run = await runCli(['run', ...flags], { cwd, env: {} });
      expect([flags.join(' '), run.code]).toEqual([flags.join(' '), 2]);
      expect(run.err).toContain(message);
    }
  });

  it('exits 2 when the database cannot be reached, naming host:port without the password', async () => {
    const url = 'postgres://u:p4ssw0rd-db@127.0.0.1:1/x';
    const quiet = await runCli(['run', '--db', url], { cwd, env: {} });
    expect(quiet.code).toBe(2);
    expect(quiet.err).toMatch(/^ragaudit run: cannot connect to PostgreSQL at postgres:\/\/127\.0\.0\.1:1\/x: /m);
    expect(quiet.err).not.toMatch(STACK_LINE);
    expect(quiet.err).not.toContain('p4ssw0rd');

    const verbose = await runCli(['run', '--db', url, '--verbose'], { cwd, env: {} });
    expect(verbose.code).toBe(2);
    expect(verbose.err).toContain('127.0.0.1:1');
    expect(verbose.err).toMatch(/^DatabaseError: cannot connect/m);
    expect(verbose.err).toMatch(STACK_LINE);
    expect(verbose.err).not.toContain('p4ssw0rd');
  });

  it('takes DATABASE_URL from the environment when --db is absent', async () => {
    const run = await runCli(['run'], { cwd, env: { DATABASE_URL: 'postgres://u:p4ssw0rd-db@127.0.0.1:1/fromenv' } });
    expect(run.code).toBe(2);
    expect(run.err).toContain('127.0.0.1:1/fromenv');
    expect(run.err).not.toContain('p4ssw0rd');
  });
});

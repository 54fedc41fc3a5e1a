/**
 * `--shard I/N` and `ragaudit merge`: four shards of a run on the embedded demo, merged, give the
 * results of the same run done in one piece — every case record and every figure, timings aside —
 * and shards that do not make one run are refused, each problem named.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';

const CASES = join(import.meta.dirname, '..', 'cases', 'demo', 'questions-core.yml');
// Conversations too: the merge recomputes the case-set blocks (generation_sets, conversations).
const CONVERSATIONS = join(import.meta.dirname, '..', 'cases', 'conversations', 'demo.yml');

type Json = Record<string, unknown>;
const read = (dir: string, suffix: string): Json => {
  const f = readdirSync(dir).find((x) => x.endsWith(suffix));
  expect(f, `a file ending ${suffix} in ${dir}`).toBeDefined();
  return JSON.parse(readFileSync(join(dir, f!), 'utf8')) as Json;
};

/** Timings differ from run to run: every latency (and the batch throughput) is left out. */
function withoutTimings(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutTimings);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !['latency_ms', 'latency', 'retrieval_batch', 'created_at', 'cached'].includes(k))
        .map(([k, x]) => [k, withoutTimings(x)]),
    );
  return v;
}

describe.each([
  ['retrieval', []],
  ['run', ['--no-report']],
] as const)('%s in four shards, merged', (command, extra) => {
  let dir: string;
  beforeAll(async () => {
    dir = workDir(`shard-${command}`);
    const base = [command, '--cases', CASES, '--cases', CONVERSATIONS, ...extra];
    if (command === 'retrieval') base.push('--no-report');
    expect((await runCli(dir, [...base, '--out', 'whole'])).code).toBe(0);
    for (const i of [1, 2, 3, 4]) {
      const r = await runCli(dir, [...base, '--shard', `${i}/4`, '--out', `shard${i}`]);
      expect(r.code, r.err).toBe(0);
    }
  }, 240_000);
  afterAll(() => removeWorkDirs());

  const shardFiles = () =>
    [1, 2, 3, 4].map((i) => {
      const d = join(dir, `shard${i}`);
      return join(
        `shard${i}`,
        readdirSync(d).find((f) => f.endsWith(`-shard-${i}-of-4.json`))!,
      );
    });

  it('each shard holds its share of the cases, named by shard', () => {
    const sizes = [1, 2, 3, 4].map(
      (i) => (read(join(dir, `shard${i}`), `-shard-${i}-of-4.json`).cases as unknown[]).length,
    );
    const whole = (read(join(dir, 'whole'), '.json').cases as unknown[]).length;
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(whole);
    expect(Math.min(...sizes)).toBeGreaterThan(0);
  });

  it('the merge equals the run done in one piece', async () => {
    const r = await runCli(dir, ['merge', ...shardFiles(), '--out', 'merged', '--no-report']);
    expect(r.code, r.err).toBe(0);
    const whole = read(join(dir, 'whole'), '.json');
    const merged = read(join(dir, 'merged'), '.json');
    expect(merged.name).toBe(whole.name);
    expect(merged.shard).toBeUndefined();
    expect(merged.config_digest).toBe(whole.config_digest);
    expect(withoutTimings(merged.cases)).toEqual(withoutTimings(whole.cases));
    expect(withoutTimings(merged.summary)).toEqual(withoutTimings(whole.summary));
    // The per-query latency is over every shard's sample timings (type-7 median by hand: the
    // middle value, or the mean of the two middle ones), never over the records' batch shares.
    const posts = [1, 2, 3, 4]
      .flatMap((i) => {
        const shard = read(join(dir, `shard${i}`), `-shard-${i}-of-4.json`).summary as Json;
        return (shard.retrieval_batch as { latency_sample_ms: { nodes?: Record<string, number> }[] }).latency_sample_ms;
      })
      .flatMap((t) => (t.nodes ? [t.nodes.posts!] : []))
      .sort((x, y) => x - y);
    const mid = (posts.length - 1) / 2;
    const latency = ((merged.summary as Json).retrieval as { latency: Record<string, { median: number; n: number }> })
      .latency;
    expect(latency.posts!.n).toBe(posts.length);
    expect(posts.length).toBeGreaterThan(4);
    expect(latency.posts!.median).toBeCloseTo((posts[Math.floor(mid)]! + posts[Math.ceil(mid)]!) / 2, 9);
    // The whole run's summary keys, in its order (key order is part of the file's bytes).
    const keys = Object.keys(whole.summary as Json).filter((k) => k !== 'retrieval_batch');
    expect(Object.keys(merged.summary as Json)).toEqual(keys);
    expect(keys).toEqual(
      command === 'run'
        ? ['retrieval', 'generation', 'generation_sets', 'conversations', 'judge', 'verdicts']
        : ['retrieval', 'conversations'],
    );
  });

  /** Shard 2/4 run again with `extra` flags into `dir/<out>`; its results file, relative to dir. */
  async function shardTwoWith(out: string, flags: string[]): Promise<string> {
    const base = [command, '--cases', CASES, '--cases', CONVERSATIONS, ...extra];
    if (command === 'retrieval') base.push('--no-report');
    const r = await runCli(dir, [...base, ...flags, '--shard', '2/4', '--out', out]);
    expect(r.code, r.err).toBe(0);
    return join(
      out,
      readdirSync(join(dir, out)).find((f) => f.endsWith('-shard-2-of-4.json'))!,
    );
  }

  it('merges shards run under different --name values: the name is not configuration', async () => {
    const [a, , c, d] = shardFiles() as [string, string, string, string];
    const named = await shardTwoWith('shard2-named', ['--name', 'elsewhere']);
    const r = await runCli(dir, ['merge', a, named, c, d, '--out', 'merged-named', '--no-report']);
    expect(r.code, r.err).toBe(0);
    const whole = read(join(dir, 'whole'), '.json');
    const merged = read(join(dir, 'merged-named'), '.json');
    expect(merged.config_digest).toBe(whole.config_digest);
    expect(withoutTimings(merged.cases)).toEqual(withoutTimings(whole.cases));
  }, 120_000);

  // Declared for `run` alone (a test skipped for `retrieval` would count as skipped in CI).
  if (command === 'run')
    it('refuses a shard run with another zone threshold (exit 2, naming it)', async () => {
      const [a, , c, d] = shardFiles() as [string, string, string, string];
      const weak = await shardTwoWith('shard2-weak', ['--weak-below', '1']);
      const r = await runCli(dir, ['merge', a, weak, c, d, '--out', 'bad-weak', '--no-report']);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${weak}: its config (config_digest) differs from ${a}'s`);
      expect(existsSync(join(dir, 'bad-weak'))).toBe(false);
    }, 120_000);

  it('each shard carries a digest of each record, recomputable from the file alone', () => {
    for (const i of [1, 2, 3, 4]) {
      const shard = read(join(dir, `shard${i}`), `-shard-${i}-of-4.json`);
      // docs/scale.md: the first 16 hex digits of SHA-256 over each record's compact JSON.
      const expected = (shard.cases as unknown[]).map((c) =>
        createHash('sha256').update(JSON.stringify(c)).digest('hex').slice(0, 16),
      );
      expect((shard.shard as Json).record_digests).toEqual(expected);
    }
  });

  /** Shard 1/4 rewritten into `dir/<out>` after `edit` changed its JSON; its path, relative to dir. */
  function editedShardOne(out: string, edit: (shard: Json & { cases: Json[] }) => void): string {
    const [a] = shardFiles() as [string];
    const shard = JSON.parse(readFileSync(join(dir, a), 'utf8')) as Json & { cases: Json[] };
    edit(shard);
    mkdirSync(join(dir, out), { recursive: true });
    const file = join(out, basename(a));
    writeFileSync(join(dir, file), JSON.stringify(shard, null, 1));
    return file;
  }

  it('refuses a shard whose records changed since it was written: an edited answer, a renamed case (exit 2, naming file and case)', async () => {
    const [, b, c, d] = shardFiles() as [string, string, string, string];
    let editedId = '';
    const edited = editedShardOne('edited', (shard) => {
      const record = shard.cases.find((r) => r.status === 'ok')!;
      editedId = record.id as string;
      if (command === 'run') record.answer = `${record.answer as string} (and one more claim)`;
      else record.question = `${record.question as string} (edited)`;
    });
    const r1 = await runCli(dir, ['merge', edited, b, c, d, '--out', 'bad-edited', '--no-report']);
    expect(r1.code).toBe(2);
    expect(r1.err).toContain(`${edited}: case ${editedId} (record `);
    expect(r1.err).toContain('is not the record this shard wrote');

    const renamed = editedShardOne('renamed', (shard) => {
      shard.cases[0]!.id = 'someone-else';
    });
    const r2 = await runCli(dir, ['merge', renamed, b, c, d, '--out', 'bad-renamed', '--no-report']);
    expect(r2.code).toBe(2);
    expect(r2.err).toContain(`${renamed}: case someone-else (record 1) is not the record this shard wrote`);
    for (const out of ['bad-edited', 'bad-renamed']) expect(existsSync(join(dir, out))).toBe(false);
  });

  it('refuses an error record without its error text (exit 2, naming file and case)', async () => {
    const [, b, c, d] = shardFiles() as [string, string, string, string];
    let id = '';
    const silent = editedShardOne('silent', (shard) => {
      const record = shard.cases[0]!;
      id = record.id as string;
      record.status = 'error';
      delete record.error;
    });
    const r = await runCli(dir, ['merge', silent, b, c, d, '--out', 'bad-silent', '--no-report']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`case ${id}: status error without its error text`);
    expect(r.err).toContain(join(dir, silent));
    expect(existsSync(join(dir, 'bad-silent'))).toBe(false);
  });

  it('refuses a missing shard, a shard twice, and a file that is not a shard (exit 2, nothing written)', async () => {
    const [a, b, c, d] = shardFiles() as [string, string, string, string];
    const missing = await runCli(dir, ['merge', a, b, c, '--out', 'bad']);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/shard 4\/4 is missing/);
    const twice = await runCli(dir, ['merge', a, b, c, d, a, '--out', 'bad']);
    expect(twice.code).toBe(2);
    expect(twice.err).toMatch(/shard 1\/4 again/);
    const whole = join(
      'whole',
      readdirSync(join(dir, 'whole')).find((f) => f.endsWith('.json'))!,
    );
    const notShard = await runCli(dir, ['merge', a, whole, '--out', 'bad']);
    expect(notShard.code).toBe(2);
    expect(notShard.err).toMatch(/not a shard's results \(no shard block\)/);
    const bad = join(dir, 'bad');
    expect(existsSync(bad) ? readdirSync(bad).filter((f) => f.endsWith('.json')) : []).toEqual([]);
  });
});

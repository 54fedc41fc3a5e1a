/**
 * `--shard I/N` and `ragaudit merge`: four shards of a run on the embedded demo, merged, give the
 * results of the same run done in one piece — every case record and every figure, timings aside —
 * and shards that do not make one run are refused, each problem named.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

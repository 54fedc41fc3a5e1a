import { describe, expect, it } from 'vitest';
import { parseShardSpec, selectShard, shardOf } from '../src/cases/shard.js';
import { InputError } from '../src/errors.js';

describe('shards', () => {
  it('parses I/N and env/N (RAGAUDIT_SHARD 1-based first, then JOB_COMPLETION_INDEX 0-based)', () => {
    expect(parseShardSpec('2/4')).toEqual({ index: 2, count: 4 });
    expect(parseShardSpec('env/4', { RAGAUDIT_SHARD: '3' })).toEqual({ index: 3, count: 4 });
    expect(parseShardSpec('env/4', { JOB_COMPLETION_INDEX: '0' })).toEqual({ index: 1, count: 4 });
    expect(parseShardSpec('env/4', { RAGAUDIT_SHARD: '4', JOB_COMPLETION_INDEX: '0' })).toEqual({ index: 4, count: 4 });
  });

  it.each([
    ['0/4', /outside 1\.\.4/],
    ['5/4', /outside 1\.\.4/],
    ['1/0', /N a whole number/],
    ['x/2', /not a whole number/],
    ['1.5/2', /not a whole number/],
    ['2', /expected I\/N/],
    ['env/4', /neither RAGAUDIT_SHARD/],
  ])('refuses %s with a message naming the flag', (spec, message) => {
    const run = () => parseShardSpec(spec, {});
    expect(run).toThrow(InputError);
    expect(run).toThrow(message);
    expect(run).toThrow(`--shard ${spec}`);
  });

  it('refuses an env index out of range or not a number', () => {
    expect(() => parseShardSpec('env/4', { JOB_COMPLETION_INDEX: '4' })).toThrow(/index is 5, outside 1\.\.4/);
    expect(() => parseShardSpec('env/4', { RAGAUDIT_SHARD: 'two' })).toThrow(/RAGAUDIT_SHARD='two'/);
  });

  it('puts a case on the shard its id hashes to', () => {
    // Expected values computed independently with Python:
    //   int.from_bytes(hashlib.sha256(id.encode()).digest()[:8], 'big') % N + 1
    // a → 0xca978112ca1bbdca, case-001 → 0xe1ad9bf98d3af729, réglage-été → 0xbd8f7ac249182739.
    expect(shardOf('a', 4)).toBe(3);
    expect(shardOf('a', 7)).toBe(5);
    expect(shardOf('case-001', 4)).toBe(2);
    expect(shardOf('case-001', 7)).toBe(5);
    expect(shardOf('réglage-été', 4)).toBe(2);
    expect(shardOf('réglage-été', 7)).toBe(7);
    expect(shardOf('anything', 1)).toBe(1);
  });

  it('partitions a list: disjoint, complete, order and positions kept', () => {
    const ids = Array.from({ length: 500 }, (_, i) => `q-${i}`);
    const shards = [1, 2, 3, 4].map((index) => selectShard(ids, (s) => s, { index, count: 4 }));
    const all = shards.flatMap((s) => s.positions);
    expect(all.length).toBe(500);
    expect(new Set(all).size).toBe(500);
    for (const s of shards) {
      expect(s.total).toBe(500);
      expect(s.items).toEqual(s.positions.map((p) => ids[p]));
      expect([...s.positions].sort((a, b) => a - b)).toEqual(s.positions);
      // Balanced enough to be worth the machines: 125 expected per shard.
      expect(s.items.length).toBeGreaterThan(80);
    }
  });
});

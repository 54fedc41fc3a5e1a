import { createHash } from 'node:crypto';
import { InputError } from '../errors.js';

/**
 * Sharding a case set across machines run by an existing engine (a CI matrix, a Kubernetes
 * Indexed Job): every shard loads the same cases and keeps those whose stable hash falls on its
 * index, so the partition needs no coordination and does not move when shards run in any order.
 * Indexes are 1-based in flags (`--shard 2/4`, as test runners write them).
 */
export interface ShardSpec {
  /** 1-based. */
  index: number;
  count: number;
}

/** Where a shard index may be read from when the flag says `env/N`. */
export const SHARD_ENV = {
  /** Kubernetes Indexed Job: the pod's completion index, 0-based. */
  kubernetes: 'JOB_COMPLETION_INDEX',
  /** Any CI matrix: set it from the matrix value, 1-based (e.g. `RAGAUDIT_SHARD: ${{ matrix.shard }}`). */
  matrix: 'RAGAUDIT_SHARD',
} as const;

const MAX_SHARDS = 10_000;

function integer(text: string): number | undefined {
  return /^\d+$/.test(text) ? Number(text) : undefined;
}

/**
 * Parses `I/N` (1 ≤ I ≤ N) or `env/N`, which takes I from RAGAUDIT_SHARD (1-based) or else
 * JOB_COMPLETION_INDEX (0-based, plus one). Every problem names the flag and what was read.
 */
export function parseShardSpec(text: string, env: Readonly<Record<string, string | undefined>> = {}): ShardSpec {
  const m = /^([^/]+)\/([^/]+)$/.exec(text.trim());
  const count = m ? integer(m[2]!) : undefined;
  if (!m || count === undefined || count < 1 || count > MAX_SHARDS)
    throw new InputError(`--shard ${text}: expected I/N with N a whole number from 1 to ${MAX_SHARDS} (e.g. 2/4, or env/4)`);
  let index: number | undefined;
  if (m[1] === 'env') {
    const fromMatrix = env[SHARD_ENV.matrix];
    const fromJob = env[SHARD_ENV.kubernetes];
    if (fromMatrix !== undefined && fromMatrix !== '') {
      index = integer(fromMatrix);
      if (index === undefined)
        throw new InputError(`--shard ${text}: ${SHARD_ENV.matrix}='${fromMatrix}' is not a whole number (1-based)`);
    } else if (fromJob !== undefined && fromJob !== '') {
      const zeroBased = integer(fromJob);
      if (zeroBased === undefined)
        throw new InputError(`--shard ${text}: ${SHARD_ENV.kubernetes}='${fromJob}' is not a whole number (0-based)`);
      index = zeroBased + 1;
    } else
      throw new InputError(
        `--shard ${text}: neither ${SHARD_ENV.matrix} (1-based, from a CI matrix) nor ${SHARD_ENV.kubernetes} (0-based, Kubernetes Indexed Job) is set`,
      );
  } else {
    index = integer(m[1]!);
    if (index === undefined) throw new InputError(`--shard ${text}: the index '${m[1]}' is not a whole number`);
  }
  if (index < 1 || index > count)
    throw new InputError(`--shard ${text}: the index is ${index}, outside 1..${count} (indexes are 1-based)`);
  return { index, count };
}

/**
 * The 1-based shard a case id falls on: the first 8 bytes of SHA-256 over the id's UTF-8 bytes,
 * read as an unsigned big-endian integer, modulo N, plus one. Depends on the id alone, so it is
 * the same on every machine, Node version and case-file order.
 */
export function shardOf(id: string, count: number): number {
  const head = createHash('sha256').update(id, 'utf8').digest().readBigUInt64BE(0);
  return Number(head % BigInt(count)) + 1;
}

/** What a shard keeps of a case list: the items and their positions in the whole list. */
export interface ShardSelection<T> {
  items: T[];
  /** 0-based position of each kept item in the unsharded list (for an exact merge). */
  positions: number[];
  /** How many cases the unsharded list holds. */
  total: number;
}

export function selectShard<T>(list: readonly T[], idOf: (item: T) => string, spec: ShardSpec): ShardSelection<T> {
  const items: T[] = [];
  const positions: number[] = [];
  list.forEach((item, i) => {
    if (shardOf(idOf(item), spec.count) === spec.index) {
      items.push(item);
      positions.push(i);
    }
  });
  return { items, positions, total: list.length };
}

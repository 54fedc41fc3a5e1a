/**
 * The config a results file stores (`config`, secrets masked as `***`), read back typed: each
 * section is checked against its own part of the config schema, so a reader gets `zones`,
 * `cases`, `rerank`, `language`… with the types a loaded config has, or no section at all when
 * the stored one is missing or does not fit this version's schema. A section is read on its own:
 * one section a newer or older ragaudit wrote differently does not hide the others.
 */
import type { RunResult } from '../model/results.js';
import { ConfigSchema, type Config } from './schema.js';

/** A stored config, section by section: a section is there when the file has it and it fits the schema. */
export type StoredConfig = { [K in keyof Config]?: Config[K] };

/** The stored config without its masked secrets (`***`): as a loaded config that named none. */
export function unmaskConfig(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(unmaskConfig);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== '***')
        .map(([k, x]) => [k, unmaskConfig(x)]),
    );
  return v;
}

const read = new WeakMap<object, StoredConfig>();

/** The typed sections of a results file's stored config (read once per file read). */
export function storedConfig(result: Pick<RunResult, 'config'>): StoredConfig {
  const hit = read.get(result.config);
  if (hit) return hit;
  const shape: Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown } }> = ConfigSchema.shape;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(unmaskConfig(result.config) as Record<string, unknown>)) {
    const parsed = shape[key]?.safeParse(value);
    if (parsed?.success) out[key] = parsed.data;
  }
  read.set(result.config, out as StoredConfig);
  return out as StoredConfig;
}

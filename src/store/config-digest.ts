import { createHash } from 'node:crypto';

/**
 * Settings that change how a run is carried out, not what it measures: concurrency, timeouts,
 * retries, pool sizes, the circuit breaker, provider batch APIs, the judge's drift canary, and
 * where outputs and caches go.
 * Left out of the digest wherever they appear, so a run slowed by rate limits resumes at a lower
 * concurrency and shards run on different machines merge.
 */
const OPERATIONAL_KEYS = new Set([
  'concurrency',
  'timeout_ms',
  'retries',
  'max_retry_after_ms',
  'statement_timeout_ms',
  'connections',
  'circuit_breaker',
  'batch',
  // The judge's drift canary checks the judge; it changes no figure.
  'canary',
  'output_dir',
  'cache_dir',
]);

/**
 * Top-level keys that name a run, not configure it: its name (which `--name`, `--shard` and
 * `matrix` labels set) and its one-line note.
 */
const NAMING_KEYS = new Set(['name', 'note']);

/**
 * The digest of the configuration that decides a run's figures: the public config (secrets
 * removed) without its naming and operational settings, keys sorted at every level, SHA-256, the
 * first 12 hex digits. Results, ledgers (`--resume` checks it), `merge` and the probe canary all
 * use this one definition.
 */
export function configDigest(config: Record<string, unknown>): string {
  const canonical = (v: unknown, top = false): unknown =>
    Array.isArray(v)
      ? v.map((x) => canonical(x))
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([k]) => !OPERATIONAL_KEYS.has(k) && !(top && NAMING_KEYS.has(k)))
              // Code-unit order: a locale's collation differs from machine to machine.
              .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
              .map(([k, x]) => [k, canonical(x)]),
          )
        : v;
  return createHash('sha256')
    .update(JSON.stringify(canonical(config, true)))
    .digest('hex')
    .slice(0, 12);
}

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, redact, SECRET_PARAMS } from '../errors.js';
import type { Config } from '../config/schema.js';
import { RunResultSchema, type RunResult } from './results-schema.js';

/** `YYYYMMDD-HHMMSS` in UTC. */
export function timestamp(d = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

/** Config fields that hold secrets themselves (whole names: `max_tokens` is not one). */
const SECRET_FIELDS = /^(api_?key|password|secret|token)$/i;

/**
 * A URL with its password and credential query parameters masked; a string that looks like a
 * URL with credentials but does not parse is replaced whole, since its parts cannot be told apart.
 */
export function scrubUrl(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return redact(text);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return /@|[?&]/.test(text) ? '(unparseable URL, not shown)' : text;
  }
  if (u.password) u.password = '***';
  for (const k of [...u.searchParams.keys()]) if (SECRET_PARAMS.includes(k.toLowerCase())) u.searchParams.set(k, '***');
  // redact also masks a token given as a web URL's user name, and every registered secret value.
  return redact(u.toString());
}

/** The config with every secret removed: api keys dropped, credentials in URLs masked. */
export function publicConfig(config: Config): Record<string, unknown> {
  const scrub = (v: unknown, key = ''): unknown => {
    if (SECRET_FIELDS.test(key)) return v === undefined ? undefined : '***';
    if (typeof v === 'string') return scrubUrl(v);
    if (Array.isArray(v)) return v.map((x) => scrub(x));
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const s = scrub(x, k);
        if (s !== undefined) out[k] = s;
      }
      return out;
    }
    return v;
  };
  return scrub(config) as Record<string, unknown>;
}

/**
 * Top-level config keys that say where outputs go (`--out` sets output_dir), not what is
 * measured: two runs of one config written to different places are the same configuration.
 */
const LOCATION_KEYS = new Set(['output_dir', 'cache_dir']);

/** A stable digest of the public config (same config, same digest, wherever its outputs go). */
export function configDigest(config: Record<string, unknown>): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canonical) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, canonical(x)])) : v;
  const measured = Object.fromEntries(Object.entries(config).filter(([k]) => !LOCATION_KEYS.has(k)));
  return createHash('sha256').update(JSON.stringify(canonical(measured))).digest('hex').slice(0, 12);
}

/** Validates and writes `<dir>/<stamp>-<name>.json` (and the digest beside it); returns the paths. */
export function writeResults(dir: string, result: RunResult, markdown: string, opts: { secrets?: string[]; stamp?: string } = {}): { json: string; md: string } {
  const stamp = opts.stamp ?? timestamp(new Date(result.created_at));
  const parsed = RunResultSchema.safeParse(result);
  if (!parsed.success) {
    throw new Error(`internal: results do not match the schema: ${parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `${stamp}-${result.name}`);
  const text = JSON.stringify(parsed.data, null, 1);
  // A secret must never reach a results file, whatever path it took.
  assertNoSecrets(text + markdown, opts.secrets ?? []);
  writeFileSync(`${base}.json.tmp`, text);
  renameSync(`${base}.json.tmp`, `${base}.json`);
  writeFileSync(`${base}.md`, markdown);
  return { json: `${base}.json`, md: `${base}.md` };
}

/** Reads and validates a results file; problems name the file and the field. */
export function readResults(file: string): RunResult {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`${file}: not a readable JSON results file: ${(e as Error).message}`);
  }
  const version = (data as { schema_version?: unknown })?.schema_version;
  if (version !== undefined && version !== 1) throw new InputError(`${file}: schema_version ${String(version)} is not supported (this ragaudit reads 1)`);
  const parsed = RunResultSchema.safeParse(data);
  if (!parsed.success) {
    throw new InputError(
      `${file}: not a valid ragaudit results file`,
      parsed.error.issues.slice(0, 20).map((i) => `${file}: ${i.path.join('.') || '(top)'}: ${i.message}`),
    );
  }
  return parsed.data;
}

/** Throws when any known secret value (API keys, passwords in use) occurs in `text`. */
export function assertNoSecrets(text: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    if (secret.length >= 6 && text.includes(secret)) throw new Error('internal: refusing to write output that carries a configured secret');
  }
}

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, redact, SECRET_PARAMS } from '../errors.js';
import { refuseSecrets, writeArtifact, writeArtifactStream, type ArtifactWrite } from '../io/artifacts.js';
import type { Config } from '../config/schema.js';
import { CaseRecordSchema, RunResultSchema, type CaseRecord, type RunResult } from '../model/results.js';

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
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, x]) => [k, canonical(x)]),
          )
        : v;
  const measured = Object.fromEntries(Object.entries(config).filter(([k]) => !LOCATION_KEYS.has(k)));
  return createHash('sha256')
    .update(JSON.stringify(canonical(measured)))
    .digest('hex')
    .slice(0, 12);
}

/** The header fields of a results file, validated apart from the cases (one record at a time). */
const ResultHeaderSchema = RunResultSchema.omit({ cases: true });

/** JSON text placed `depth` levels deep in a document indented by one space per level. */
const nested = (json: string, depth: number) => json.replace(/\n/g, `\n${' '.repeat(depth)}`);

/**
 * Writes `<dir>/<stamp>-<name>.json` (and the digest beside it); returns the paths.
 *
 * The results JSON is streamed: the header fields, then the cases one by one, each validated and
 * serialised on its own, through the artifact writer (temp file renamed over the target). No single string
 * holds the whole document (a run of tens of thousands of cases exceeds the longest string V8
 * can build), and the bytes are the same as `JSON.stringify(result, null, 1)`, so every reader
 * reads the files as before. On any failure the temp file is removed and no partial file is left.
 */
export function writeResults(
  dir: string,
  result: RunResult,
  markdown: string,
  opts: { secrets?: string[]; stamp?: string } = {},
): { json: string; md: string } {
  const stamp = opts.stamp ?? timestamp(new Date(result.created_at));
  const { cases, ...head } = result;
  const parsedHead = ResultHeaderSchema.safeParse(head);
  if (!parsedHead.success) {
    throw new Error(
      `internal: results do not match the schema: ${parsedHead.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join('.')}: ${i.message}`)
        .join('; ')}`,
    );
  }
  const base = join(dir, `${stamp}-${result.name}`);
  const artifact = { secrets: opts.secrets ?? [], label: 'results' };
  // The digest is checked before the results file is written: a refused digest leaves nothing.
  refuseSecrets(`${base}.md`, markdown, artifact.secrets);
  // A stamp given is a run id (unique, made with the ledger): its file is replaced on resume.
  // Without one, two runs of the same name in the same second must not replace each other.
  const json = writeArtifactStream(
    `${base}.json`,
    // The summary is written as given once it is valid: its blocks keep the order they were made in
    // (a re-judged file keeps its stored blocks first and its new judge block last).
    (write) => streamResults(write, { ...parsedHead.data, summary: head.summary }, cases),
    opts.stamp !== undefined ? artifact : { ...artifact, alternative: (n) => `${base}-${n}.json` },
  );
  const md = `${json.slice(0, -'.json'.length)}.md`;
  writeArtifact(md, markdown, artifact);
  return { json, md };
}

/** The streamed body of {@link writeResults}: header fields, then each case validated on its own. */
function streamResults(put: ArtifactWrite, head: Record<string, unknown>, cases: readonly CaseRecord[]): void {
  put('{');
  for (const [k, v] of Object.entries(head))
    if (v !== undefined) put(`\n ${JSON.stringify(k)}: ${nested(JSON.stringify(v, null, 1), 1)},`);
  put('\n "cases": [');
  cases.forEach((c, i) => {
    const parsed = CaseRecordSchema.safeParse(c);
    if (!parsed.success) {
      throw new Error(
        `internal: case ${c.id} does not match the results schema: ${parsed.error.issues
          .slice(0, 3)
          .map((x) => `${x.path.join('.')}: ${x.message}`)
          .join('; ')}`,
      );
    }
    put(`${i ? ',' : ''}\n  ${nested(JSON.stringify(parsed.data, null, 1), 2)}`);
  });
  put(cases.length ? '\n ]\n}' : ']\n}');
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
  if (version !== undefined && version !== 1)
    throw new InputError(`${file}: schema_version ${String(version)} is not supported (this ragaudit reads 1)`);
  const parsed = RunResultSchema.safeParse(data);
  if (!parsed.success) {
    throw new InputError(
      `${file}: not a valid ragaudit results file`,
      parsed.error.issues.slice(0, 20).map((i) => `${file}: ${i.path.join('.') || '(top)'}: ${i.message}`),
    );
  }
  return parsed.data;
}

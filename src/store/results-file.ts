import { existsSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { InputError, isSecretParam, redact } from '../errors.js';
import { refuseSecrets, writeArtifact, writeArtifactStream, type ArtifactWrite } from '../io/artifacts.js';
import type { Config } from '../config/schema.js';
import {
  CaseRecordSchema,
  RunResultSchema,
  SCHEMA_VERSION,
  type CaseRecord,
  type RunResult,
} from '../model/results.js';
import { jsonlLines, type JsonlLine } from '../io/jsonl.js';
import { arrayStore, LARGE_RUN_CASES, LightRecords, type CaseStore } from './case-store.js';
import { isCheckedRecord, maskedRecord } from './record-check.js';
import { recordDigest } from './record-digest.js';

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
  for (const k of [...u.searchParams.keys()]) if (isSecretParam(k)) u.searchParams.set(k, '***');
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

/** The header fields of a results file, validated apart from the cases (one record at a time). */
const ResultHeaderSchema = RunResultSchema.omit({ cases: true });

/** The `schema_version` of a results file whose cases are in a JSON Lines file beside it. */
export const RESULTS_JSONL_VERSION = 2;

/**
 * The small JSON of a results file of format 2: the header and summary of format 1, then the name
 * of the JSON Lines file beside it that holds the cases (one record a line, in case order) and
 * how many it holds.
 */
const JsonlHeaderSchema = RunResultSchema.omit({ cases: true, schema_version: true }).extend({
  schema_version: z.literal(RESULTS_JSONL_VERSION),
  cases_file: z.string(),
  cases_count: z.number().int().nonnegative(),
});

/**
 * How a results file is written: `json`, one document with the cases inside (format 1, what
 * every version of ragaudit reads); `jsonl`, a small JSON with the header and summary and a
 * `<stem>.cases.jsonl` beside it (format 2).
 */
export type ResultsFormat = 'json' | 'jsonl';

/**
 * A run's results as a run or a reader holds them. A large run (above {@link LARGE_RUN_CASES}
 * cases) keeps light records in `cases` (src/store/case-store.ts: every figure, not the bulk) and
 * the full records in `caseStore`, on disk; {@link writeResults} writes the cases from the store.
 */
export type StoredRun = RunResult & { readonly caseStore?: CaseStore };

/** The format a results file gets: as asked, else JSON Lines above {@link LARGE_RUN_CASES} cases. */
export function resultsFormatFor(cases: number, asked?: ResultsFormat): ResultsFormat {
  return asked ?? (cases > LARGE_RUN_CASES ? 'jsonl' : 'json');
}

/**
 * `value` as JSON placed `depth` levels deep in a document indented by one space per level: the
 * engine's own indentation of `value` inside `depth` arrays, cut out of them. (Re-indenting the
 * text of each case with a replace took ~0.1 s of a 200-case run's 4.6 MB results file, and left
 * strings that cost as much again to encode.)
 */
function nestedJson(value: unknown, depth: number): string {
  let wrapped = value;
  for (let d = 0; d < depth; d++) wrapped = [wrapped];
  // Before the value, per level k = 1..depth: "[", a newline and k spaces; after it, per level
  // k = depth-1..0: a newline, k spaces and "]".
  const before = 2 * depth + (depth * (depth + 1)) / 2;
  const after = 2 * depth + (depth * (depth - 1)) / 2;
  const json = JSON.stringify(wrapped, null, 1);
  return json.slice(before, json.length - after);
}

/**
 * A case record as it will be written, masked, or an internal error naming the case and field. A
 * record this process checked before storing it (src/store/record-check.ts) is frozen and masked
 * since: it is written as it is, not checked twice. Another (read from a file) is masked here.
 */
function validCase(c: CaseRecord): CaseRecord {
  if (isCheckedRecord(c)) return c;
  const parsed = CaseRecordSchema.safeParse(c);
  if (!parsed.success) {
    throw new Error(
      `internal: case ${c.id} does not match the results schema: ${parsed.error.issues
        .slice(0, 3)
        .map((x) => `${x.path.join('.')}: ${x.message}`)
        .join('; ')}`,
    );
  }
  return maskedRecord(parsed.data);
}

/**
 * Writes `<dir>/<stamp>-<name>.json` (and the digest beside it); returns the paths. Format 1
 * (`json`) holds the cases; format 2 (`jsonl`, the default above {@link LARGE_RUN_CASES} cases)
 * writes them to `<stem>.cases.jsonl` first and then the small `<stem>.json` that names it.
 *
 * Both are streamed: the header fields, then the cases one by one, each validated and
 * serialised on its own, through the artifact writer (temp file renamed over the target). No single string
 * holds the whole document (a run of tens of thousands of cases exceeds the longest string V8
 * can build); format 1's bytes are the same as `JSON.stringify(result, null, 1)`, so every reader
 * reads the files as before. On any failure the temp file is removed and no partial file is left.
 */
export function writeResults(
  dir: string,
  result: StoredRun,
  markdown: string,
  opts: { secrets?: string[]; stamp?: string; format?: ResultsFormat } = {},
): { json: string; md: string } {
  const stamp = opts.stamp ?? timestamp(new Date(result.created_at));
  const { cases: inMemory, caseStore, ...head } = result;
  const cases: CaseStore = caseStore ?? arrayStore(inMemory);
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
  // The summary is written as given once it is valid: its blocks keep the order they were made in
  // (a re-judged file keeps its stored blocks first and its new judge block last).
  const header = { ...parsedHead.data, summary: head.summary };
  let json: string;
  if (resultsFormatFor(cases.size, opts.format) === 'jsonl') {
    json = writeJsonlResults(base, header, cases, artifact, opts.stamp !== undefined);
  } else {
    // A shard's header, written before its cases, carries their digests: one pass to take them.
    if (header.shard) {
      const record_digests: string[] = [];
      for (const c of cases.records()) record_digests.push(recordDigest(JSON.stringify(validCase(c))));
      header.shard = { ...header.shard, record_digests };
    }
    // A stamp given is a run id (unique, made with the ledger): its file is replaced on resume.
    // Without one, two runs of the same name in the same second must not replace each other.
    json = writeArtifactStream(
      `${base}.json`,
      (write, writeMasked) => streamResults(write, writeMasked, header, cases.records()),
      opts.stamp !== undefined ? artifact : { ...artifact, alternative: (n) => `${base}-${n}.json` },
    );
  }
  const md = `${json.slice(0, -'.json'.length)}.md`;
  writeArtifact(md, markdown, artifact);
  return { json, md };
}

/** The cases file of a format-2 results file `<stem>.json`. */
export const casesFileOf = (json: string) => `${json.slice(0, -'.json'.length)}.cases.jsonl`;

/**
 * Format 2: `<stem>.cases.jsonl` (one validated record a line), then `<stem>.json`. Without a
 * replace (no run id), the stem is the first whose two files are both free.
 */
function writeJsonlResults(
  base: string,
  header: Record<string, unknown>,
  cases: CaseStore,
  artifact: { secrets: string[]; label: string },
  replace: boolean,
): string {
  let json = `${base}.json`;
  for (let n = 2; !replace && (existsSync(json) || existsSync(casesFileOf(json))); n++) {
    if (n > 1000) throw new InputError(`${base}.json: 1000 files with this name already exist`);
    json = `${base}-${n}.json`;
  }
  const casesFile = casesFileOf(json);
  let count = 0;
  const digests: string[] = [];
  writeArtifactStream(
    casesFile,
    (_put, putMasked) => {
      for (const c of cases.records()) {
        // The digest is of the line as written: the record masked already (validCase).
        const line = JSON.stringify(validCase(c));
        putMasked(`${line}\n`);
        digests.push(recordDigest(line));
        count++;
      }
    },
    artifact,
  );
  const { schema_version: _v1, ...rest } = header;
  // A shard carries its records' digests (its header is written after them).
  if (rest.shard && typeof rest.shard === 'object') rest.shard = { ...rest.shard, record_digests: digests };
  const doc = {
    schema_version: RESULTS_JSONL_VERSION,
    ...rest,
    cases_file: basename(casesFile),
    cases_count: count,
  };
  const checked = JsonlHeaderSchema.safeParse(doc);
  if (!checked.success) throw new Error(`internal: ${json}: ${checked.error.issues[0]?.message ?? 'invalid header'}`);
  try {
    return writeArtifact(json, JSON.stringify(doc, null, 1), artifact);
  } catch (e) {
    rmSync(casesFile, { force: true });
    throw e;
  }
}

/** The streamed body of {@link writeResults}: header fields, then each case validated on its own. */
function streamResults(
  put: ArtifactWrite,
  putMasked: ArtifactWrite,
  head: Record<string, unknown>,
  cases: Iterable<CaseRecord>,
): void {
  put('{');
  for (const [k, v] of Object.entries(head)) if (v !== undefined) put(`\n ${JSON.stringify(k)}: ${nestedJson(v, 1)},`);
  put('\n "cases": [');
  let i = 0;
  for (const c of cases) putMasked(`${i++ ? ',' : ''}\n  ${nestedJson(validCase(c), 2)}`);
  put(i ? '\n ]\n}' : ']\n}');
}

/** Header fields of a results file: everything but the summary and the cases. */
export type ResultsHeader = Omit<RunResult, 'summary' | 'cases'>;

/**
 * A results file opened for reading, whichever its format: the header and summary read, the
 * cases read on demand, one record at a time, in case order. Problems name the file and field,
 * and for a case of a JSON Lines file the file and line.
 */
export interface OpenedResults {
  file: string;
  format: ResultsFormat;
  header: ResultsHeader;
  summary: RunResult['summary'];
  /** How many cases the file holds. */
  count: number;
  /** Format 2: the JSON Lines file holding the cases. */
  casesFile?: string;
  /** The cases in order; each call reads them again (a format-2 file from disk, line by line). */
  cases(): Generator<CaseRecord>;
  /**
   * Each case's compact JSON as the file holds it, in order, unchecked (what a record digest is
   * taken over): a format-2 file's lines as written, or each record of a format-1 file serialised
   * again. Each call reads the file again.
   */
  recordJson(): Generator<string>;
}

const issuesOf = (file: string, error: z.ZodError, limit = 20) =>
  error.issues.slice(0, limit).map((i) => `${file}: ${i.path.join('.') || '(top)'}: ${i.message}`);

/** Opens a results file of either format (see {@link OpenedResults}). */
export function openResults(file: string): OpenedResults {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`${file}: not a readable JSON results file: ${(e as Error).message}`);
  }
  const version = data && typeof data === 'object' && 'schema_version' in data ? data.schema_version : undefined;
  if (version === RESULTS_JSONL_VERSION) return openJsonl(file, data);
  if (version !== undefined && version !== 1)
    throw new InputError(
      `${file}: schema_version ${String(version)} is not supported (this ragaudit reads 1 and ${RESULTS_JSONL_VERSION})`,
    );
  const parsed = RunResultSchema.safeParse(data);
  if (!parsed.success) throw new InputError(`${file}: not a valid ragaudit results file`, issuesOf(file, parsed.error));
  const { cases, summary, ...header } = parsed.data;
  return {
    file,
    format: 'json',
    header,
    summary,
    count: cases.length,
    *cases() {
      yield* cases;
    },
    *recordJson() {
      const raw = (JSON.parse(readFileSync(file, 'utf8')) as { cases: unknown[] }).cases;
      for (const c of raw) yield JSON.stringify(c);
    },
  };
}

/** A record of a format-2 cases file from its line, checked; a problem names the file and line. */
export function caseOfLine(casesFile: string, line: Pick<JsonlLine, 'text' | 'no' | 'ended'>): CaseRecord {
  let value: unknown;
  try {
    value = JSON.parse(line.text);
  } catch (e) {
    const cut = line.ended ? '' : ' (the last line is cut short: the file is torn)';
    throw new InputError(`${casesFile}:${line.no}: not a JSON line${cut}: ${(e as Error).message}`);
  }
  const record = CaseRecordSchema.safeParse(value);
  if (!record.success)
    throw new InputError(
      `${casesFile}:${line.no}: not a valid case record`,
      issuesOf(`${casesFile}:${line.no}`, record.error, 5),
    );
  return record.data;
}

function openJsonl(file: string, data: unknown): OpenedResults {
  const parsed = JsonlHeaderSchema.safeParse(data);
  if (!parsed.success) throw new InputError(`${file}: not a valid ragaudit results file`, issuesOf(file, parsed.error));
  const { cases_file, cases_count, summary, schema_version: _v, ...rest } = parsed.data;
  if (basename(cases_file) !== cases_file || !cases_file.endsWith('.jsonl'))
    throw new InputError(`${file}: cases_file must name a .jsonl file beside it, got '${cases_file}'`);
  const casesFile = join(dirname(file), cases_file);
  if (!existsSync(casesFile))
    throw new InputError(`${file}: its cases file ${casesFile} is missing (the two files travel together)`);
  const header: ResultsHeader = { schema_version: SCHEMA_VERSION, ...rest };
  return {
    file,
    format: 'jsonl',
    header,
    summary,
    count: cases_count,
    casesFile,
    *cases() {
      let n = 0;
      for (const line of jsonlLines(casesFile)) {
        if (!line.text.trim()) continue;
        n++;
        yield caseOfLine(casesFile, line);
      }
      if (n !== cases_count)
        throw new InputError(`${casesFile}: ${n} cases, but ${file} says ${cases_count} (the pair does not match)`);
    },
    *recordJson() {
      for (const line of jsonlLines(casesFile)) if (line.text.trim()) yield line.text;
    },
  };
}

/**
 * Reads and validates a results file of either format, every case in memory; problems name the
 * file and the field. `light`: light records (src/store/case-store.ts), for readers of figures
 * (compare, calibrate) over files of any size.
 */
export function readResults(file: string, opts: { light?: boolean } = {}): RunResult {
  return resultsOf(openResults(file), opts);
}

/** The results of an opened file with every case in memory (`light`: light records). */
export function resultsOf(opened: OpenedResults, opts: { light?: boolean } = {}): RunResult {
  const light = opts.light ? new LightRecords() : undefined;
  const cases: CaseRecord[] = [];
  for (const c of opened.cases()) cases.push(light ? light.of(c) : c);
  return { ...opened.header, summary: opened.summary, cases };
}

/**
 * The one way ragaudit writes an output file (results, digests, reports, calibration, zone A/B,
 * compare, matrix, JUnit, TREC). Every artifact is:
 * - atomic: written to `<file>.<pid>.tmp` in the same directory, then renamed over the target, so
 *   a reader never sees half a file and a crash leaves the previous file whole; on any failure the
 *   temp file is removed;
 * - secret-scanned: text carrying a secret value (registered with `rememberSecrets`, or passed in)
 *   is refused before it reaches the disk, by the one rule in `carriesSecret`;
 * - masked: what is left of credentials by form (a URL's password, a credential query parameter,
 *   a value shaped like a token) is masked by `redact` on its way to the disk, so a results file
 *   read back from an older version or a forum passage quoting a token is written without it;
 * - for JSON, stamped and validated: the document carries `schema_version` and `kind`, and is
 *   checked against a zod schema when one is given.
 * Errors name the path. Imports nothing but node, zod and the error classes, so every layer can use it.
 */
import { closeSync, existsSync, linkSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { z } from 'zod';
import { carriesSecret, RagauditError, redact } from '../errors.js';

export interface ArtifactOptions {
  /** Secret values to refuse besides those registered with `rememberSecrets`. */
  secrets?: readonly (string | undefined)[];
  /** What the file is, for error messages (`cannot write the results <file>: …`). */
  label?: string;
  /**
   * Never replace an existing file: the artifact takes the first free name among `file`,
   * `alternative(2)`, `alternative(3)`… (at most 1000). Without it the target is replaced.
   */
  alternative?: (n: number) => string;
}

/** Appends text to the artifact being written (checked for secrets and masked before it is kept). */
export type ArtifactWrite = (text: string) => void;

/** Bytes gathered before one write call. */
const CHUNK = 1 << 20;

/** The temp file an artifact is written to before it is renamed: same directory, this process. */
export function tempPathFor(file: string): string {
  return `${file}.${process.pid}.tmp`;
}

/** Throws, naming the file, when `text` carries a secret value (to refuse early, before other files). */
export function refuseSecrets(file: string, text: string, secrets: ArtifactOptions['secrets']): void {
  if (carriesSecret(text, secrets))
    throw new RagauditError(`internal: refusing to write ${file}: the output carries a configured secret`);
}

/**
 * Writes an artifact whose body is produced piece by piece: `body` calls `write` with each piece,
 * so no single string needs to hold the whole document. A piece masked already (a checked case
 * record, src/store/record-check.ts) may go through `writeMasked` instead: checked for secrets,
 * not scanned a second time. Returns the path written (which differs from `file` only with
 * `alternative`).
 */
export function writeArtifactStream(
  file: string,
  body: (write: ArtifactWrite, writeMasked: ArtifactWrite) => void,
  opts: ArtifactOptions = {},
): string {
  const tmp = tempPathFor(file);
  try {
    mkdirSync(dirname(file), { recursive: true });
    const fd = openSync(tmp, 'w');
    try {
      // Each piece is encoded into one reused buffer at once, so no piece outlives its call: held
      // until a flush, the pieces of a large file lived long enough to fill the old generation of
      // the heap with garbage (hundreds of MB while a 100,000-case results file was written).
      const buf = Buffer.allocUnsafe(CHUNK);
      let size = 0;
      const flush = () => {
        writeAll(fd, buf, size);
        size = 0;
      };
      const put = (text: string) => {
        const bytes = Buffer.byteLength(text);
        if (size + bytes > CHUNK) flush();
        if (bytes > CHUNK) writeAll(fd, Buffer.from(text), bytes);
        else size += buf.write(text, size);
      };
      body(
        (piece) => {
          refuseSecrets(file, piece, opts.secrets);
          // Content rules only: they never cross a quote, so a JSON or HTML piece stays well formed.
          put(redact(piece, 'content'));
        },
        (piece) => {
          refuseSecrets(file, piece, opts.secrets);
          put(piece);
        },
      );
      flush();
    } finally {
      closeSync(fd);
    }
    if (!opts.alternative) {
      renameSync(tmp, file);
      return file;
    }
    return placeNew(tmp, file, opts.alternative);
  } catch (e) {
    rmSync(tmp, { force: true });
    if (e instanceof RagauditError || (e as Error).message?.startsWith('internal:')) throw e;
    throw new RagauditError(`cannot write ${opts.label ? `the ${opts.label} ` : ''}${file}: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

/** Writes the first `bytes` bytes of `data` (a write may take fewer than asked). */
function writeAll(fd: number, data: Buffer, bytes: number): void {
  for (let at = 0; at < bytes;) at += writeSync(fd, data, at, bytes - at);
}

/** Writes a text artifact (Markdown, HTML, SVG, XML, TREC lines); returns its path. */
export function writeArtifact(file: string, text: string, opts: ArtifactOptions = {}): string {
  // Checked whole as well: a secret must not hide across the pieces of a streamed body.
  refuseSecrets(file, text, opts.secrets);
  return writeArtifactStream(file, (write) => write(text), opts);
}

/** What every JSON artifact starts with: its format version and what it is. */
export interface ArtifactHeader {
  schema_version: number;
  kind: string;
}

/**
 * Writes a JSON artifact (indented by one space, as every ragaudit JSON file) after validating it
 * against `schema` when given; the parsed document is what is written. Returns its path.
 */
export function writeJsonArtifact<T extends ArtifactHeader>(
  file: string,
  data: T,
  opts: ArtifactOptions & { schema?: z.ZodType<T>; trailingNewline?: boolean } = {},
): string {
  let doc: T = data;
  if (opts.schema) {
    const parsed = opts.schema.safeParse(data);
    if (!parsed.success) {
      throw new Error(
        `internal: ${file}: the ${data.kind} document does not match its schema: ${parsed.error.issues
          .slice(0, 5)
          .map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`)
          .join('; ')}`,
      );
    }
    doc = parsed.data;
  }
  if (!Number.isInteger(doc.schema_version) || typeof doc.kind !== 'string' || !doc.kind) {
    throw new Error(`internal: ${file}: a JSON artifact needs an integer schema_version and a kind`);
  }
  return writeArtifact(file, `${JSON.stringify(doc, null, 1)}${opts.trailingNewline ? '\n' : ''}`, opts);
}

/**
 * Moves `tmp` to `file`, or `alternative(2)`, `(3)`… when taken, without ever replacing a file
 * (a hard link fails when the name exists); returns the name used. Where hard links are not
 * supported the first free name is taken by rename.
 */
function placeNew(tmp: string, file: string, alternative: (n: number) => string): string {
  for (let n = 1; n <= 1000; n++) {
    const candidate = n === 1 ? file : alternative(n);
    try {
      linkSync(tmp, candidate);
      rmSync(tmp);
      return candidate;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'ENOSYS') throw e;
      if (existsSync(candidate)) continue;
      renameSync(tmp, candidate);
      return candidate;
    }
  }
  throw new RagauditError(`${file}: 1000 files with this name already exist`);
}

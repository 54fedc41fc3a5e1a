/**
 * The label store: what people said about answers and about pooled retrieval candidates, as
 * plain JSON Lines files, one file per labeller (`<dir>/<labeller>.jsonl`), one line per label.
 *
 * - A label is appended and the file is fsynced before the page is told it was saved: a crash
 *   loses nothing already acknowledged. A failed write is undone and answered as an error. A torn
 *   last line (the machine died mid-write) is skipped and reported when read, never fatal, and
 *   cut off before the next append so that label does not join it.
 * - One file per labeller keeps git merges trivial: two people labelling the same week never
 *   touch the same file, and each file only grows at its end.
 * - A later label of the same item by the same labeller replaces the earlier one (corrections,
 *   going back with "previous"); the earlier line stays in the file as history.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { appendLine, unendedLastLine, type WriteFn } from '../io/jsonl.js';
import type { CaseRecord } from '../model/results.js';

/** A labeller's name: also the label file's name, so a slug. */
export const LABELLER_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,39}$/;

export const YesNoUnsure = z.enum(['yes', 'no', 'unsure']);
export const StanceLabel = z.enum(['answered', 'hedged', 'abstained']);
export const Relevance = z.enum(['relevant', 'partly', 'not']);

const common = {
  v: z.literal(1),
  labeller: z.string().regex(LABELLER_PATTERN),
  /** ISO time the label was given. */
  at: z.string(),
  case_id: z.string(),
  note: z.string().max(4000).optional(),
};

/** A person's reading of one answer. */
export const AnswerLabelSchema = z
  .object({
    ...common,
    queue: z.literal('answer'),
    /** Digest of the results file the answer was read from (provenance). */
    results: z.string(),
    /** Digest of what was labelled (question, sources as shown, answer): labels follow the answer, not the file. */
    answer_digest: z.string(),
    faithful: YesNoUnsure.optional(),
    stance: StanceLabel.optional(),
    /** Cited source n → does it support what cites it. */
    citations: z.record(z.string().regex(/^\d+$/), YesNoUnsure).optional(),
  })
  .strict();
export type AnswerLabel = z.infer<typeof AnswerLabelSchema>;

/** A person's reading of one pooled retrieval candidate. */
export const PoolLabelSchema = z
  .object({
    ...common,
    queue: z.literal('pool'),
    /** Digest of the pool file the candidate came from (provenance). */
    pool: z.string(),
    post_id: z.number().int(),
    topic_id: z.number().int(),
    relevance: Relevance,
  })
  .strict();
export type PoolLabel = z.infer<typeof PoolLabelSchema>;

export const LabelSchema = z.discriminatedUnion('queue', [AnswerLabelSchema, PoolLabelSchema]);
export type Label = z.infer<typeof LabelSchema>;

/** A short digest of bytes or text (sha256, 16 hex digits). */
export function shortDigest(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex').slice(0, 16);
}

/** The digest of a file's bytes (results and pool files: provenance of a label). */
export function fileDigest(file: string): string {
  return shortDigest(readFileSync(file));
}

/** What a person reads when labelling an answer: the digest labels are matched by. */
export function answerDigest(r: Pick<CaseRecord, 'id' | 'question' | 'sources' | 'answer'>): string {
  const sources = (r.sources ?? []).map((s) => [s.n, s.post_id, s.excerpt]);
  return shortDigest(JSON.stringify([r.id, r.question, sources, r.answer ?? null]));
}

/** The key of the item a label is about: a later label with the same key replaces an earlier one. */
export function labelKey(l: Label): string {
  return l.queue === 'answer'
    ? `answer\u0000${l.case_id}\u0000${l.answer_digest}`
    : `pool\u0000${l.case_id}\u0000${l.post_id}`;
}

export function labelFile(dir: string, labeller: string): string {
  if (!LABELLER_PATTERN.test(labeller))
    throw new InputError(
      `labeller '${labeller}': expected a short name of lowercase letters, digits, . _ - (it names the label file)`,
    );
  return join(dir, `${labeller}.jsonl`);
}

export interface AppendOptions {
  /** The write call (a test passes one that fails as a full disk does); default `fs.writeSync`. */
  write?: WriteFn;
  /** Told when a partial last line is cut off before the append (file:line and what was done). */
  warn?: (message: string) => void;
}

/** A label that could not be written: nothing of it was kept (or, if `cut` is false, a partial line may be). */
export class LabelWriteError extends Error {
  constructor(
    readonly file: string,
    /** The system error code (ENOSPC: the disk is full), when there is one. */
    readonly code: string | undefined,
    reason: string,
    cut: boolean,
  ) {
    super(
      `the label was not saved: ${file}: ${reason}${cut ? '' : '; the file may end in a partial line, which the next save cuts off'}`,
    );
  }

  /** No room left (HTTP 507 to the page). */
  get diskFull(): boolean {
    return this.code === 'ENOSPC' || this.code === 'EDQUOT';
  }
}

/**
 * Appends one label to its labeller's file and fsyncs it; returns the label as stored. A write
 * that fails (a full disk) is undone (the file is cut back to its size before) and thrown as a
 * {@link LabelWriteError}, so the next label never lands on the end of a partial line. A partial
 * last line already there (a crash mid-write) is cut off first, with a warning; an unended last
 * line that is a whole label (an edited file) is kept and ended instead, as reading counts it.
 */
export function appendLabel(dir: string, label: Label, opts: AppendOptions = {}): Label {
  const parsed = LabelSchema.parse(label);
  mkdirSync(dir, { recursive: true });
  const file = labelFile(dir, parsed.labeller);
  const tail = existsSync(file) ? unendedLastLine(file) : null;
  const fd = openSync(file, 'a');
  let keep = fstatSync(fd).size;
  try {
    if (tail) {
      if (parseLabelLine(tail.text).label) appendLine(fd, '', opts.write);
      else {
        ftruncateSync(fd, tail.offset);
        opts.warn?.(
          `${file}:${tail.no}: a partial last line (${tail.bytes} bytes, an interrupted write) was cut off before appending`,
        );
      }
      keep = fstatSync(fd).size;
    }
    appendLine(fd, JSON.stringify(parsed), opts.write);
    fsyncSync(fd);
  } catch (e) {
    let cut = true;
    try {
      ftruncateSync(fd, keep);
      fsyncSync(fd);
    } catch {
      cut = false;
    }
    const err = e as NodeJS.ErrnoException;
    throw new LabelWriteError(file, err.code, err.message, cut);
  } finally {
    closeSync(fd);
  }
  return parsed;
}

export interface LabelRead {
  /** The latest label of each item per labeller, in file order of their latest line. */
  labels: Label[];
  /** Lines that could not be read, as `file:line: reason` (a torn last line after a crash). */
  skipped: string[];
}

/** Where a label line starts: JSON.stringify writes `v` first, and inside a string its quotes would be escaped. */
const LINE_START = '{"v":1,';

/** One line as a label, or why not. */
function parseLabelLine(line: string): { label: Label; error?: undefined } | { label?: undefined; error: string } {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return { error: 'not a JSON line (an interrupted write?)' };
  }
  const parsed = LabelSchema.safeParse(data);
  if (parsed.success) return { label: parsed.data };
  const issue = parsed.error.issues[0];
  return { error: issue ? `${issue.path.join('.') || '(line)'}: ${issue.message}` : 'invalid' };
}

/** Parses one label file's text: later lines of the same item replace earlier ones. */
export function parseLabelLines(file: string, text: string): LabelRead {
  const latest = new Map<string, Label>();
  const skipped: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let r = parseLabelLine(line);
    // A save appended onto a partial line (before saves were undone on failure): the label after it is whole.
    const at = r.label ? -1 : line.lastIndexOf(LINE_START);
    if (at > 0) {
      const rest = parseLabelLine(line.slice(at));
      if (rest.label) {
        skipped.push(
          `${file}:${i + 1}: a partial label (an interrupted write) precedes a whole one: the partial part is skipped`,
        );
        r = rest;
      }
    }
    if (!r.label) {
      skipped.push(`${file}:${i + 1}: ${r.error}`);
      return;
    }
    const key = labelKey(r.label);
    latest.delete(key);
    latest.set(key, r.label);
  });
  return { labels: [...latest.values()], skipped };
}

/** Every label in a directory (every `*.jsonl`), labeller files in name order; a missing directory has none. */
export function readLabels(dir: string): LabelRead {
  if (!existsSync(dir)) return { labels: [], skipped: [] };
  const out: LabelRead = { labels: [], skipped: [] };
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .sort()) {
    const file = join(dir, name);
    const r = parseLabelLines(file, readFileSync(file, 'utf8'));
    const own = name.slice(0, -'.jsonl'.length);
    // A line whose labeller is not its file's would be counted twice after a copy: refuse it.
    for (const l of r.labels) {
      if (l.labeller === own) out.labels.push(l);
      else out.skipped.push(`${file}: a label by '${l.labeller}' in ${own}'s file is ignored`);
    }
    out.skipped.push(...r.skipped);
  }
  return out;
}

/** The labellers present, in name order. */
export function labellers(labels: readonly Label[]): string[] {
  return [...new Set(labels.map((l) => l.labeller))].sort();
}

/**
 * What the label server holds: the items of its two queues (answers of results files, candidates
 * of a pool file), each labeller's order of them, and the labels given so far, read from the
 * label store at start and kept current as labels arrive.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { InputError } from '../errors.js';
import { answerDigest, fileDigest, labelKey, readLabels, type Label } from '../judge/label-file.js';
import type { CaseRecord, RunResult } from '../model/results.js';
import { mulberry32 } from '../scoring/statistics.js';
import { readRunResults } from '../app/results-input.js';
import { defaultLabelsDir } from './agreement.js';
import { PoolFileSchema, type PoolCandidate, type PoolFile } from './pooling.js';

export interface AnswerItem {
  queue: 'answer';
  key: string;
  run: string;
  results: string;
  /** The generator's label when it is an offline stand-in (shown with the answer), else null. */
  standIn: string | null;
  record: CaseRecord;
  digest: string;
}
export interface PoolItem {
  queue: 'pool';
  key: string;
  case_id: string;
  question: string;
  pool: string;
  candidate: PoolCandidate;
}
export type Item = AnswerItem | PoolItem;
export type Queue = Item['queue'];

/** One results file the answers come from. */
export interface LoadedRun {
  file: string;
  result: RunResult;
  digest: string;
}

/** The items of a queue in a labeller's own order (a seeded shuffle: the same name, the same order). */
function shuffled<T>(items: readonly T[], labeller: string, queue: string): T[] {
  const seed = parseInt(createHash('sha256').update(`${queue}\u0000${labeller}`).digest('hex').slice(0, 8), 16);
  const rand = mulberry32(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The answers to label: every `ok` case with an answer, keyed by its file's position. */
function answerItems(runs: readonly LoadedRun[]): AnswerItem[] {
  const names = runs.map((r) => r.result.name);
  return runs.flatMap((r, i) =>
    r.result.cases
      .filter((c) => c.status === 'ok' && typeof c.answer === 'string')
      .map((record): AnswerItem => {
        const run = names.filter((n) => n === names[i]).length > 1 ? `${names[i]}#${i + 1}` : names[i]!;
        return {
          queue: 'answer',
          key: `a:${i}:${record.id}`,
          run,
          results: r.digest,
          standIn: r.result.components.generator?.offline ? r.result.components.generator.label : null,
          record,
          digest: answerDigest(record),
        };
      }),
  );
}

/** The candidates of a pool file, or none without one; a file that is not a pool is an input error. */
function poolItems(poolPath: string | undefined): PoolItem[] {
  if (!poolPath) return [];
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(poolPath, 'utf8'));
  } catch (e) {
    throw new InputError(`${poolPath}: cannot read the pool file: ${(e as Error).message}`);
  }
  const parsed = PoolFileSchema.safeParse(data);
  if (!parsed.success) throw new InputError(`${poolPath}: not a pool file (written by ragaudit pool)`);
  const pool: PoolFile = parsed.data;
  const digest = fileDigest(poolPath);
  return pool.questions.flatMap((q) =>
    q.candidates.map((candidate): PoolItem => ({
      queue: 'pool',
      key: `p:${q.case_id}:${candidate.post_id}`,
      case_id: q.case_id,
      question: q.question,
      pool: digest,
      candidate,
    })),
  );
}

/** The queues, the label store's folder, and the labels given, per labeller. */
export class LabelState {
  readonly runs: LoadedRun[];
  readonly answers: AnswerItem[];
  readonly pool: PoolItem[];
  readonly labelsDir: string;
  /** labeller → label key → latest label: what the store holds, kept current as labels arrive. */
  private readonly given = new Map<string, Map<string, Label>>();
  private readonly order = new Map<string, Item[]>();

  constructor(inputs: {
    results: readonly string[];
    pool?: string | undefined;
    labels?: string | undefined;
    cwd: string;
    warn?: ((message: string) => void) | undefined;
  }) {
    this.runs = inputs.results
      .map((f) => resolve(inputs.cwd, f))
      .map((file) => ({ file, result: readRunResults(file, 'label'), digest: fileDigest(file) }));
    this.answers = answerItems(this.runs);
    this.pool = poolItems(inputs.pool ? resolve(inputs.cwd, inputs.pool) : undefined);
    this.labelsDir = inputs.labels
      ? resolve(inputs.cwd, inputs.labels)
      : this.runs[0]
        ? defaultLabelsDir(this.runs[0].result, inputs.cwd)
        : resolve(inputs.cwd, 'labels');
    const start = readLabels(this.labelsDir);
    for (const w of start.skipped) inputs.warn?.(w);
    for (const l of start.labels) this.remember(l);
  }

  /** Keeps a label as the latest of its labeller for its item. */
  remember(l: Label): void {
    const mine = this.given.get(l.labeller) ?? new Map<string, Label>();
    mine.set(labelKey(l), l);
    this.given.set(l.labeller, mine);
  }

  /** The latest label `labeller` gave `it`, if any. */
  labelOf(labeller: string, it: Item): Label | undefined {
    const key =
      it.queue === 'answer'
        ? `answer\u0000${it.record.id}\u0000${it.digest}`
        : `pool\u0000${it.case_id}\u0000${it.candidate.post_id}`;
    return this.given.get(labeller)?.get(key);
  }

  /** A queue in the labeller's own order (made once per labeller and queue). */
  queueOf(labeller: string, queue: Queue): Item[] {
    const k = `${queue}\u0000${labeller}`;
    let items = this.order.get(k);
    if (!items) {
      items = shuffled<Item>(queue === 'answer' ? this.answers : this.pool, labeller, queue);
      this.order.set(k, items);
    }
    return items;
  }

  /** How far the labeller is in a queue, and the first item left to label. */
  progress(labeller: string, queue: Queue): { total: number; done: number; first_open: number } {
    const items = this.queueOf(labeller, queue);
    const done = items.filter((it) => this.labelOf(labeller, it)).length;
    const open = items.findIndex((it) => !this.labelOf(labeller, it));
    return { total: items.length, done, first_open: open < 0 ? 0 : open };
  }
}

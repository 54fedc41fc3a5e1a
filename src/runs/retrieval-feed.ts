import type { Config } from '../config/schema.js';
import type { CaseRecord } from '../model/results.js';
import type { RetrievalBatchSummary, RetrievalSummary } from '../model/summary.js';
import { DEFAULT_BATCH_SIZE, type ChannelBatch, type NodeResult, type RetrievalGraph } from '../retrieval/graph.js';
import { redact } from '../errors.js';
import { recordedMs } from './retrieve-case.js';
import { retrievalLatency, sampleLatency } from '../summary/retrieval-summary.js';

/** How many questions are retrieved one query at a time to measure the per-query latency. */
export const LATENCY_SAMPLE = 16;

/** The sample size a config asks for (`retrieval.latency_sample`), as feed options; none: the default. */
export function configuredSample(config: Pick<Config, 'retrieval'>): Pick<RetrievalFeedOptions, 'latencySample'> {
  const n = config.retrieval.latency_sample;
  return n === undefined ? {} : { latencySample: n };
}

export interface RetrievalFeedOptions {
  /** Distinct questions per batched statement (default {@link DEFAULT_BATCH_SIZE}). */
  batchSize?: number;
  /** Distinct questions retrieved one query at a time, one after the other, apart from the batches (default {@link LATENCY_SAMPLE}; 0: none). */
  latencySample?: number;
  /** `false`: every question through the per-query path, as before batching existed. */
  batch?: boolean;
  /**
   * When the latency sample is taken (the last distinct questions; the first with `start`): `end`
   * (default), as soon as every batch's statements are done, while the batched cases are still
   * being answered; `idle`, when the caller asks ({@link RetrievalFeed.takeSample}) once its cases
   * are done, so nothing else runs beside it; `start`, before any batch (batches wait for it). The
   * sample measures the engine warm in `end` and `idle`, not the first statements of the process.
   */
  sampleAt?: 'start' | 'end' | 'idle';
  /**
   * Size of the first batch; each next one doubles, up to `batchSize` (default: `batchSize`). A
   * small first batch lets consumers start at once while the larger ones are prepared.
   */
  firstBatch?: number;
}

/** What the feed did, for the run's summary. */
export interface RetrievalFeedStats {
  /** Distinct questions in the sample (per-query path, one at a time). */
  sample: number;
  /** Each sample question's per-query latency by node, in the order taken, or why it failed. */
  sampled: SampleTiming[];
  /** Distinct questions in batches. */
  batched: number;
  batches: number;
  batchSize: number;
  /** Batches that failed as a whole, whose questions then took the per-query path. */
  fallbacks: number;
  /** From the first batch's statements to the last batched question completed, ms (null: no batch). */
  wallMs: number | null;
  /** The batches' embedding calls and statements, each batch's wall summed, ms. */
  statementsMs: number;
}

type Prepared = { batch: ChannelBatch } | { error: unknown };

/**
 * One question of the latency sample, as the results keep it (`retrieval_batch.latency_sample_ms`):
 * each node's latency on the per-query path, ms, and whether its lists are those the batches gave
 * the run's cases (absent when no case read them: every case asking it was stopped before
 * retrieval); `error` instead when the per-query path failed.
 */
export type SampleTiming = NonNullable<RetrievalBatchSummary['latency_sample_ms']>[number];

type TimedSample = Extract<SampleTiming, { nodes: unknown }>;

/** A node's list as compared between the two paths: post, topic and score of each item, in order. */
function listsKey(nodes: Record<string, NodeResult>): string {
  return JSON.stringify(
    Object.entries(nodes).map(([name, n]) => [name, n.grain, n.items.map((i) => [i.post_id, i.topic_id, i.score])]),
  );
}

/**
 * Retrieval of a run's questions, computed ahead of the stages that consume it. The questions
 * are known up front (in the order the run will ask for them); each distinct question is
 * retrieved once, however many cases ask it, in batches: one embedding call and one statement per
 * channel for a batch's questions (src/retrieval/graph.ts), whose lists are exactly those of the
 * per-query path. A batch's statements start when one of its questions is first asked for, and
 * the next two batches' start at the same time, so a consumer never waits for a batch behind the
 * one it reads (generation overlaps retrieval) while memory holds about three batches of lists.
 * A batch that fails as a whole sends its questions through the per-query path, so that each
 * meets its own error.
 *
 * The latency sample is a measurement apart, not a way for cases to get their lists: a few
 * distinct questions (the last ones; the first with `sampleAt: 'start'`) go through the per-query
 * path one at a time, so their latencies are those of a single question, and their lists are
 * compared with those the batches gave the cases. No case waits for it.
 */
export class RetrievalFeed {
  private readonly sampleOf = new Set<string>();
  private readonly batchOf = new Map<string, { b: number; k: number }>();
  private readonly batchQuestions: string[][] = [];
  private readonly prepared = new Map<number, Promise<Prepared>>();
  /** Questions of each batch not asked for yet: a batch's lists are dropped once all were read. */
  private readonly batchLeft: number[] = [];
  /** Cases still to ask for each question: the question's lists are dropped after the last. */
  private readonly remaining = new Map<string, number>();
  private readonly memo = new Map<string, Promise<Record<string, NodeResult>>>();
  private readonly sampleAt: 'start' | 'end' | 'idle';
  /** The sample, once started; its timings in the order taken. */
  private sampling: Promise<void> | undefined;
  private readonly sampled: SampleTiming[] = [];
  /**
   * The lists of each sample question (see {@link listsKey}) from whichever path gave them first,
   * until the other does and the two are compared (the sample's timing then says whether they agree).
   */
  private readonly firstLists = new Map<string, { key: string; timing?: TimedSample }>();
  /** Batches whose statements were started, and how many of those have settled. */
  private readonly started = new Set<number>();
  private settledBatches = 0;
  private readonly size: number;
  private fallbacks = 0;
  private statementsMs = 0;
  private firstBatchAt: number | null = null;
  private lastBatchedAt: number | null = null;
  private readonly completions = new Set<Promise<unknown>>();

  /** `questions`: one per case, in the order the cases will ask (repeats allowed). */
  constructor(
    private readonly graph: RetrievalGraph,
    questions: readonly string[],
    opts: RetrievalFeedOptions = {},
  ) {
    for (const q of questions) this.remaining.set(q, (this.remaining.get(q) ?? 0) + 1);
    const distinct = [...this.remaining.keys()];
    const batching = opts.batch !== false;
    const sample = batching ? Math.min(distinct.length, Math.max(0, opts.latencySample ?? LATENCY_SAMPLE)) : 0;
    this.size = Math.max(1, opts.batchSize ?? DEFAULT_BATCH_SIZE);
    this.sampleAt = opts.sampleAt ?? 'end';
    const sampled = this.sampleAt === 'start' ? distinct.slice(0, sample) : distinct.slice(distinct.length - sample);
    for (const q of sampled) this.sampleOf.add(q);
    let size = Math.min(this.size, Math.max(1, opts.firstBatch ?? this.size));
    if (batching)
      for (let from = 0; from < distinct.length; from += size, size = Math.min(this.size, size * 2)) {
        const b = this.batchQuestions.length;
        const list = distinct.slice(from, from + size);
        this.batchQuestions.push(list);
        this.batchLeft.push(list.length);
        list.forEach((q, k) => this.batchOf.set(q, { b, k }));
      }
  }

  /**
   * The node lists of a question, computed once and shared by its cases. A question not given up
   * front (a conversation's query condensed by a model), or asked more often than given, takes
   * the per-query path on its own and leaves the batches' bookkeeping as it is.
   */
  get(question: string): Promise<Record<string, NodeResult>> {
    if (!this.remaining.has(question)) {
      const p = this.graph.run(question);
      this.track(p);
      return p;
    }
    let p = this.memo.get(question);
    if (!p) {
      p = this.compute(question);
      this.memo.set(question, p);
      this.track(p);
    }
    const left = this.remaining.get(question)! - 1;
    if (left > 0) this.remaining.set(question, left);
    else {
      this.remaining.delete(question);
      this.memo.delete(question);
    }
    return p;
  }

  /**
   * Starts the statements of the batches the first question asked would start (the first and the
   * two after it) before any case asks: a run calls it once its retrieval services answered their
   * check, while it is still waiting for the models'.
   */
  start(): void {
    for (let b = 0; b < Math.min(3, this.batchQuestions.length); b++) void this.prepare(b);
  }

  private track(p: Promise<unknown>): void {
    const settled = p.then(
      () => undefined,
      () => undefined,
    );
    this.completions.add(settled);
    void settled.then(() => this.completions.delete(settled));
  }

  private compute(question: string): Promise<Record<string, NodeResult>> {
    const at = this.batchOf.get(question);
    if (at === undefined) return this.graph.run(question);
    return this.fromBatch(question, at.b, at.k);
  }

  /**
   * Takes the latency sample if it has not started yet, and waits for it: a caller with
   * `sampleAt: 'idle'` calls it once its cases are done; any caller, before it summarises.
   */
  takeSample(): Promise<void> {
    if (!this.sampling) {
      // One question at a time, nothing of the feed's beside it: each latency is that of a question alone.
      this.sampling = (async () => {
        for (const question of this.sampleOf) {
          try {
            const nodes = await this.graph.run(question);
            const timing: TimedSample = {
              question,
              nodes: Object.fromEntries(Object.entries(nodes).map(([name, n]) => [name, recordedMs(n.latencyMs)])),
            };
            this.compareLists(question, listsKey(nodes), timing);
            this.sampled.push(timing);
          } catch (e) {
            this.sampled.push({ question, error: redact(e instanceof Error ? e.message : String(e)) });
          }
        }
      })();
      this.track(this.sampling);
    }
    return this.sampling;
  }

  /**
   * Counts a settled batch; once the last has, a sample taken at the `end` starts at once, while
   * the batched cases are still being answered, instead of holding up the run's tail.
   */
  private batchSettled(): void {
    this.settledBatches++;
    if (this.sampleAt === 'end' && this.settledBatches === this.batchQuestions.length) void this.takeSample();
  }

  private async fromBatch(question: string, b: number, k: number): Promise<Record<string, NodeResult>> {
    const got = await this.prepare(b);
    // The next batches' statements run while this one's questions are fused, reranked and
    // answered: two ahead, so the database is not left idle while a batch is being read.
    for (const next of [b + 1, b + 2])
      if (next < this.batchQuestions.length && !this.started.has(next)) void this.prepare(next);
    if (--this.batchLeft[b]! === 0) this.prepared.delete(b);
    if ('error' in got) return this.graph.run(question);
    const nodes = await this.graph.completePrepared(question, got.batch.prepared[k]!);
    this.lastBatchedAt = performance.now();
    if (this.sampleOf.has(question)) this.compareLists(question, listsKey(nodes));
    return nodes;
  }

  /** Keeps a sample question's lists from one path, or compares them with the other's (`timing`: the sample's). */
  private compareLists(question: string, key: string, timing?: TimedSample): void {
    const first = this.firstLists.get(question);
    if (!first) {
      this.firstLists.set(question, { key, ...(timing ? { timing } : {}) });
      return;
    }
    this.firstLists.delete(question);
    const sampled = timing ?? first.timing;
    if (sampled) sampled.same_lists = first.key === key;
  }

  private prepare(b: number): Promise<Prepared> {
    let p = this.prepared.get(b);
    if (!p) {
      // Batches wait for a sample taken first, so that its latencies are those of a question alone.
      this.started.add(b);
      p = (this.sampleAt === 'start' ? this.takeSample() : Promise.resolve()).then(() => {
        this.firstBatchAt ??= performance.now();
        return this.graph.prepareBatch(this.batchQuestions[b]!).then(
          (batch): Prepared => {
            this.statementsMs += batch.timing.wallMs;
            this.batchSettled();
            return { batch };
          },
          (error: unknown): Prepared => {
            this.fallbacks++;
            this.batchSettled();
            return { error };
          },
        );
      });
      this.prepared.set(b, p);
      this.track(p);
    }
    return p;
  }

  /** Waits until no statement or completion the feed started is still running (before the database closes). */
  async settle(): Promise<void> {
    while (this.completions.size) await Promise.all([...this.completions]);
  }

  /** Whether a question was given to a batch. */
  inBatches(question: string): boolean {
    return this.batchOf.has(question);
  }

  stats(): RetrievalFeedStats {
    const batched = this.batchQuestions.reduce((a, l) => a + l.length, 0);
    return {
      sample: this.sampleOf.size,
      sampled: this.sampled,
      batched,
      batches: this.batchQuestions.length,
      batchSize: this.size,
      fallbacks: this.fallbacks,
      statementsMs: this.statementsMs,
      wallMs: this.firstBatchAt !== null && this.lastBatchedAt !== null ? this.lastBatchedAt - this.firstBatchAt : null,
    };
  }
}

/**
 * The retrieval summary's latency and batch figures of a run whose retrieval went through a
 * feed: `latency` is the latency of one question alone (the sample, its raw timings kept in
 * `latency_sample_ms` so the figure can be recomputed), and the batch block says what was
 * batched, how fast, and each node's share of the batches' time. Undefined when nothing was
 * batched (the summary's latency is then already per question, from the records).
 */
export function feedSummary(
  feed: RetrievalFeed,
  records: readonly CaseRecord[],
  nodes: readonly string[],
): { latency: RetrievalSummary['latency']; batch: RetrievalBatchSummary } | undefined {
  const stats = feed.stats();
  if (!stats.batches) return undefined;
  // What a record's retrieval searched for: its question, or a conversation's retrieval query.
  // Cases stopped by an intent rule asked for no retrieval; a query condensed by a model was not
  // known up front and took the per-query path (and a case whose condensation failed, none).
  const batched = records.filter((r) => r.status !== 'gated' && feed.inBatches(r.retrieval_query?.text ?? r.question));
  return {
    latency: sampleLatency(stats.sampled, nodes),
    batch: {
      latency_sample: stats.sampled.filter((s) => 'nodes' in s).length,
      latency_sample_ms: stats.sampled,
      batched: batched.length,
      distinct_questions: stats.batched,
      batches: stats.batches,
      batch_size: stats.batchSize,
      fallbacks: stats.fallbacks,
      wall_ms: Math.round(stats.wallMs ?? 0),
      cases_per_s: stats.wallMs ? Math.round((batched.length / stats.wallMs) * 1000) : null,
      statements_ms: Math.round(stats.statementsMs),
      latency_share: retrievalLatency(batched, nodes),
    },
  };
}

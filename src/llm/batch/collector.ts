/**
 * Batch mode for a run: chat models whose `complete` does not call the provider but enqueues the
 * request; once every case of the run is waiting on a model (nothing else can move), the queued
 * requests go up as one batch per model (several above the client's `maxRequests`), and each
 * waiting call is answered from the batch's results, matched by custom_id. A case thus goes
 * through the same code as in a synchronous run; it only waits longer.
 *
 * - {@link BatchScheduler}: which cases are live, which are waiting, and when to submit.
 * - {@link BatchCollector}: the requests of one batch client (generator or judge), their
 *   submission, the wait, the results; batches already submitted by an interrupted run (from the
 *   journal, the run's ledger) are polled again instead of being submitted twice.
 * - {@link batchCachedModel}: the ChatModel a run uses, the response cache in front of the
 *   collector (same keys as `cachedModel`), so answered requests are never asked again.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { JudgeParseError, ProviderError, type ProviderFault } from '../../errors.js';
import { requestKeyParts, type ResponseCache } from '../cache.js';
import type { ChatModel, Completion, CompletionRequest } from '../types.js';
import type { BatchClient, BatchErrorKind, BatchRequest, BatchResult, BatchStatus } from './types.js';

/** A batch as the run's ledger keeps it: written before the run waits on it. */
export interface BatchJournalEntry {
  /** The collector's role: `generator` or `judge`. */
  role: string;
  /** The batch client's id (`provider:model`). */
  client: string;
  /** The provider's batch id. */
  id: string;
  custom_ids: string[];
}

/** Where a collector keeps its batches (the run's ledger), so an interrupted run resumes by polling. */
export interface BatchJournal {
  /** Batches an earlier run submitted and never collected. */
  readonly open: readonly BatchJournalEntry[];
  /** Called once a batch is submitted, before waiting on it; must be written durably. */
  submitted(entry: BatchJournalEntry): void;
  /** Called once every result of the batch was handed out. */
  collected(batchId: string): void;
}

/** The custom_id of a request: `<case>-<stage>-<request hash>`, within `[a-zA-Z0-9_-]{1,64}`. */
export function batchCustomId(caseId: string | undefined, stage: string, requestKey: string): string {
  return `${caseSlug(caseId)}-${stageTail(stage, requestKey)}`;
}

/** The part of a custom_id after the case: the same request gives the same tail in every run. */
function stageTail(stage: string, requestKey: string): string {
  return `${stage}-${requestKey.slice(0, 10)}`;
}

const SLUG = /^[a-zA-Z0-9_-]{1,40}$/;

/** A case id as it may appear in a custom_id: itself when it fits, else sanitised with a short hash. */
export function caseSlug(caseId: string | undefined): string {
  if (caseId === undefined) return 'call';
  if (SLUG.test(caseId)) return caseId;
  const h = createHash('sha256').update(caseId).digest('hex').slice(0, 8);
  return `${caseId.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 31)}_${h}`;
}

/**
 * Decides when the queued requests are submitted: when every live case waits on a batch model
 * (it cannot move before an answer comes back). At most `busy` cases work at once outside that
 * waiting (retrieval, scoring), as many as a synchronous run would.
 */
export class BatchScheduler {
  private readonly current = new AsyncLocalStorage<{ caseId: string | undefined }>();
  private live = 0;
  private parked = 0;
  private free: number;
  private readonly queue: (() => void)[] = [];
  private readonly collectors: BatchCollector[] = [];

  constructor(busy: number) {
    this.free = Math.max(1, busy);
  }

  /** @internal a collector registers itself. */
  add(c: BatchCollector): void {
    this.collectors.push(c);
  }

  /** The case the calling code runs for (undefined outside {@link runCase}). */
  caseId(): string | undefined {
    return this.current.getStore()?.caseId;
  }

  /** Whether the calling code runs inside {@link runCase}. */
  inCase(): boolean {
    return this.current.getStore() !== undefined;
  }

  /** Runs one case: live until it settles; its model calls may wait on a batch. */
  runCase<T>(caseId: string | undefined, fn: () => Promise<T>): Promise<T> {
    return this.current.run({ caseId }, async () => {
      this.live++;
      await this.acquire();
      try {
        return await fn();
      } finally {
        this.release();
        this.live--;
        this.check();
      }
    });
  }

  /** Waits on `p` as a case that cannot move before it settles (its working slot goes to another case). */
  async park<T>(p: Promise<T>): Promise<T> {
    this.parked++;
    this.release();
    this.check();
    try {
      return await p;
    } finally {
      this.parked--;
      await this.acquire();
    }
  }

  private acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  private release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.free++;
  }

  /** Submits what is queued once every live case is waiting. */
  private check(): void {
    if (this.live === 0 || this.parked < this.live) return;
    for (const c of this.collectors) c.flush();
  }
}

interface Entry {
  key: string;
  tail: string;
  customId: string;
  request: CompletionRequest;
  promise: Promise<Completion>;
  resolve: (c: Completion) => void;
  reject: (e: unknown) => void;
  settled: boolean;
}

export interface BatchCollectorOptions {
  /** `generator` or `judge`: names the batches in messages and the ledger. */
  role: string;
  /** Short tag in the custom_ids (`g`, `j`). */
  stage: string;
  /** Progress in words (submitted, polled, ended). */
  onEvent?: ((text: string) => void) | undefined;
}

const FAULT: Record<BatchErrorKind, ProviderFault> = {
  failed: 'server',
  invalid: 'client',
  expired: 'server',
  canceled: 'server',
};

const describeCounts = (s: BatchStatus) => {
  const c = s.counts;
  const parts = [`${c.succeeded} succeeded`];
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.expired) parts.push(`${c.expired} expired`);
  if (c.canceled) parts.push(`${c.canceled} canceled`);
  if (c.processing) parts.push(`${c.processing} processing`);
  return `${s.providerStatus}${c.total ? ` (${parts.join(', ')} of ${c.total})` : ''}`;
};

/** The requests of one batch client during a run. */
export class BatchCollector {
  private readonly queued = new Map<string, Entry>();
  /** Every unsettled entry, by request key (queued or in a batch). */
  private readonly pending = new Map<string, Entry>();
  private journal: BatchJournal | undefined;
  /** Tail → the open batch of an earlier run holding that request, and its custom_id there. */
  private resumable = new Map<string, { batch: BatchJournalEntry; customId: string }>();
  /** Batches submitted (not resumed) by this collector. */
  submittedBatches = 0;
  /** Each batch's submission and collection while under way (see {@link settled}). */
  private readonly underWay = new Set<Promise<void>>();

  constructor(
    readonly client: BatchClient,
    readonly scheduler: BatchScheduler,
    private readonly opts: BatchCollectorOptions,
  ) {
    scheduler.add(this);
  }

  get role(): string {
    return this.opts.role;
  }

  /** Keeps batches in `journal` and resumes its open batches of this role and client. */
  attach(journal: BatchJournal): void {
    this.journal = journal;
    this.resumable = new Map();
    for (const b of journal.open) {
      if (b.role !== this.opts.role || b.client !== this.client.id) continue;
      for (const id of b.custom_ids) {
        const tail = id.slice(id.lastIndexOf('-', id.lastIndexOf('-') - 1) + 1);
        this.resumable.set(tail, { batch: b, customId: id });
      }
    }
  }

  /** The answer to `req` (cache key `key`), once a batch holding it has ended. */
  complete(key: string, req: CompletionRequest): Promise<Completion> {
    let entry = this.pending.get(key);
    if (!entry) {
      const tail = stageTail(this.opts.stage, key);
      let resolve!: (c: Completion) => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<Completion>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      // Every case waiting on it handles a rejection; this keeps a failure met before anyone waits from being unhandled.
      promise.catch(() => undefined);
      // A second case asking the very same request waits on this entry (one line in the batch).
      entry = {
        key,
        tail,
        customId: `${caseSlug(this.scheduler.caseId())}-${tail}`,
        request: req,
        promise,
        resolve,
        reject,
        settled: false,
      };
      this.pending.set(key, entry);
      this.queued.set(key, entry);
    }
    return this.scheduler.park(entry.promise);
  }

  /** Submits the queued requests (or polls the earlier batches that hold them). */
  flush(): void {
    if (this.queued.size === 0) return;
    const entries = [...this.queued.values()];
    this.queued.clear();
    const resumed = new Map<string, { batch: BatchJournalEntry; entries: Entry[] }>();
    const fresh: Entry[] = [];
    for (const e of entries) {
      const r = this.resumable.get(e.tail);
      if (!r) {
        fresh.push(e);
        continue;
      }
      e.customId = r.customId;
      const group = resumed.get(r.batch.id) ?? { batch: r.batch, entries: [] };
      group.entries.push(e);
      resumed.set(r.batch.id, group);
    }
    for (const { batch, entries: group } of resumed.values()) {
      // Requests arriving later are submitted afresh: this batch's results are read once.
      for (const [tail, r] of this.resumable) if (r.batch.id === batch.id) this.resumable.delete(tail);
      const byId = new Map(group.map((e) => [e.customId, e]));
      // The batch was submitted with all of these: a request no case asks again gets a stand-in (its result is dropped).
      const requests: BatchRequest[] = batch.custom_ids.map((id) => ({
        custom_id: id,
        request: byId.get(id)?.request ?? { system: '', messages: [] },
      }));
      this.opts.onEvent?.(
        `${this.opts.role} batch ${batch.id} (${batch.custom_ids.length} requests, submitted before the interruption): polling it again`,
      );
      this.track(this.collect(batch.id, requests, group));
    }
    const max = Math.max(1, this.client.maxRequests);
    for (let i = 0; i < fresh.length; i += max) this.track(this.submit(fresh.slice(i, i + max)));
  }

  private track(work: Promise<void>): void {
    this.underWay.add(work);
    void work.finally(() => this.underWay.delete(work));
  }

  /**
   * Resolves once every batch submitted or resumed so far is collected and its journal line
   * written. A case is answered as soon as its own result is read, before the batch's last line:
   * a run that ended there wrote its results while the ledger still said the batch was open.
   */
  async settled(): Promise<void> {
    while (this.underWay.size) await Promise.allSettled([...this.underWay]);
  }

  private async submit(entries: Entry[]): Promise<void> {
    const requests = entries.map((e) => ({ custom_id: e.customId, request: e.request }));
    let batchId: string;
    try {
      ({ batchId } = await this.client.submit(requests));
    } catch (e) {
      this.fail(entries, e);
      return;
    }
    this.submittedBatches++;
    try {
      this.journal?.submitted({
        role: this.opts.role,
        client: this.client.id,
        id: batchId,
        custom_ids: requests.map((r) => r.custom_id),
      });
    } catch (e) {
      this.fail(entries, e);
      return;
    }
    this.opts.onEvent?.(
      `${this.opts.role} batch ${batchId}: ${requests.length} ${requests.length === 1 ? 'request' : 'requests'} submitted to ${this.client.id}`,
    );
    await this.collect(batchId, requests, entries);
  }

  /** Waits for a batch, hands each result to its entry, and notes the batch collected. */
  private async collect(batchId: string, requests: BatchRequest[], entries: Entry[]): Promise<void> {
    const byId = new Map(entries.map((e) => [e.customId, e]));
    const since = Date.now();
    try {
      const results = this.client.wait(batchId, requests, {
        onPoll: (s, n) => {
          if (n > 1 || s.status === 'ended')
            this.opts.onEvent?.(`${this.opts.role} batch ${batchId}: ${describeCounts(s)}`);
        },
        // An unreadable line costs its own request (or those left without a line), said here once.
        onUnreadable: (message) => this.opts.onEvent?.(`${this.opts.role} batch ${batchId}: ${message}`),
      });
      for await (const r of results) {
        const e = byId.get(r.custom_id);
        if (e) this.settle(e, r, batchId, Date.now() - since);
      }
    } catch (e) {
      // The batch stays open in the journal: a resumed run polls it again.
      this.fail(entries, e);
      return;
    }
    this.fail(
      entries,
      new ProviderError(`${this.client.id}: batch ${batchId} gave no result for this request`, {
        provider: this.client.id,
        retryable: false,
        fault: 'answer',
      }),
    );
    try {
      this.journal?.collected(batchId);
    } catch {
      // Every entry is settled; a ledger that misses this line only makes a resume poll the batch once more.
    }
  }

  /** `waitedMs`: how long this run waited on the batch, the answer's latency (the provider reports none). */
  private settle(e: Entry, r: BatchResult, batchId: string, waitedMs: number): void {
    if (e.settled) return;
    e.settled = true;
    this.pending.delete(e.key);
    const o = r.outcome;
    if ('ok' in o) {
      e.resolve({ ...o.ok, latencyMs: waitedMs });
      return;
    }
    const { kind, message, raw } = o.error;
    // An answer that does not match its schema is a parse error, as from the synchronous client (the judge retries once).
    if (raw !== undefined) e.reject(new JudgeParseError(message, raw));
    else
      e.reject(
        new ProviderError(`${kind} in ${this.opts.role} batch ${batchId}: ${message}`, {
          provider: this.client.id,
          retryable: false,
          fault: FAULT[kind],
        }),
      );
  }

  private fail(entries: readonly Entry[], error: unknown): void {
    for (const e of entries) {
      if (e.settled) continue;
      e.settled = true;
      this.pending.delete(e.key);
      e.reject(error);
    }
  }
}

/**
 * A ChatModel of a batch run: `model` (the synchronous client of the same model: its id, cache
 * scope and preflight) behind the response cache, with `collector` instead of its `complete`.
 * Cache keys are those of `cachedModel`, so batch and synchronous runs share answers.
 */
export function batchCachedModel(
  model: ChatModel,
  cache: ResponseCache,
  collector: BatchCollector,
  extraKey: object = {},
): ChatModel {
  const self: ChatModel = {
    id: model.id,
    offline: model.offline,
    ...(model.cacheScope !== undefined && { cacheScope: model.cacheScope }),
    ...(model.preflight && { preflight: () => model.preflight!() }),
    async complete<T = unknown>(req: CompletionRequest<T>): Promise<Completion<T>> {
      // A call outside a run's case (e.g. one answer asked alone) is a case of its own.
      if (!collector.scheduler.inCase()) return collector.scheduler.runCase(undefined, () => self.complete(req));
      const key = cache.key(requestKeyParts(model.id, req as CompletionRequest<unknown>, extraKey, model.cacheScope));
      const hit = await cache.get(key);
      if (hit) return { ...(hit as Completion<T>), cached: true };
      const fresh = await collector.complete(key, req as CompletionRequest<unknown>);
      await cache.set(key, fresh);
      return fresh as Completion<T>;
    },
  };
  return self;
}

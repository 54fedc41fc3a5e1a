/**
 * The batch collector on its own, over an in-memory batch client: requests are submitted only
 * once every live case waits (one batch per round, split above maxRequests), two cases asking the
 * same request share one line and neither waits forever, a call outside a case is answered, and
 * an open batch of the journal is polled instead of submitted again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ResponseCache } from '../src/llm/cache.js';
import {
  BatchCollector,
  BatchScheduler,
  batchCachedModel,
  type BatchClient,
  type BatchJournal,
  type BatchJournalEntry,
  type BatchRequest,
  type BatchResult,
  type BatchStatus,
  type ResultsOptions,
  type WaitOptions,
} from '../src/llm/batch/index.js';
import type { ChatModel, CompletionRequest } from '../src/llm/types.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const cache = () => {
  const d = mkdtempSync(join(tmpdir(), 'ragaudit-collector-'));
  dirs.push(d);
  return new ResponseCache(d);
};

const ENDED: BatchStatus = {
  status: 'ended',
  counts: { total: 0, processing: 0, succeeded: 0, failed: 0, canceled: 0, expired: 0 },
  providerStatus: 'ended',
};

/** A batch client in memory: answers `echo: <question>`, a question 'fail' as a failed request. */
class MemoryBatchClient implements BatchClient {
  readonly id = 'memory:model';
  readonly batches = new Map<string, readonly BatchRequest[]>();
  readonly polled: string[] = [];
  constructor(readonly maxRequests = 100) {}
  submit(requests: readonly BatchRequest[]): Promise<{ batchId: string }> {
    const batchId = `b${this.batches.size + 1}`;
    this.batches.set(batchId, requests);
    return Promise.resolve({ batchId });
  }
  poll(): Promise<BatchStatus> {
    return Promise.resolve(ENDED);
  }
  waitUntilEnded(batchId: string): Promise<BatchStatus> {
    this.polled.push(batchId);
    return Promise.resolve(ENDED);
  }
  async *results<T>(
    _batchId: string,
    requests: readonly BatchRequest<T>[],
    opts: ResultsOptions = {},
  ): AsyncGenerator<BatchResult<T>> {
    await Promise.resolve();
    for (const [i, r] of requests.entries()) {
      const q = r.request.messages.at(-1)?.content ?? '';
      // A question 'torn': its line cannot be read (reported, as a client does, then its request fails).
      if (q === 'torn') opts.onUnreadable?.(`GET memory (line ${i + 1}): not JSON`);
      yield {
        custom_id: r.custom_id,
        outcome:
          q === 'fail' || q === 'torn'
            ? { error: { kind: 'failed', message: q === 'torn' ? 'its result line cannot be read' : 'boom' } }
            : { ok: { text: `echo: ${q}`, usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 0, model: 'model' } },
      };
    }
  }
  async *wait<T>(
    batchId: string,
    requests: readonly BatchRequest<T>[],
    opts: WaitOptions = {},
  ): AsyncGenerator<BatchResult<T>> {
    await this.waitUntilEnded(batchId);
    yield* this.results(batchId, requests, opts);
  }
}

const sync: ChatModel = {
  id: 'memory:model',
  offline: false,
  complete: () => Promise.reject(new Error('the synchronous model must not be called in batch mode')),
};
const ask = (q: string): CompletionRequest => ({ system: 's', messages: [{ role: 'user', content: q }] });

function setup(opts: { maxRequests?: number; journal?: BatchJournal } = {}) {
  const client = new MemoryBatchClient(opts.maxRequests);
  const scheduler = new BatchScheduler(2);
  const events: string[] = [];
  const collector = new BatchCollector(client, scheduler, {
    role: 'generator',
    stage: 'g',
    onEvent: (t) => events.push(t),
  });
  if (opts.journal) collector.attach(opts.journal);
  const model = batchCachedModel(sync, cache(), collector);
  return { client, scheduler, model, events };
}

describe('BatchCollector', () => {
  it('submits one batch once every case waits, two rounds as two batches; shared requests share a line', async () => {
    const { client, scheduler, model } = setup();
    const cases = ['c1', 'c2', 'c3', 'c4'];
    const answers = await Promise.all(
      cases.map((id, i) =>
        scheduler.runCase(id, async () => {
          // c3 and c4 ask the same first question; each case then asks a second one.
          const first = await model.complete(ask(i >= 2 ? 'same' : `q-${id}`));
          const second = await model.complete(ask(`again-${id}`));
          return [first.text, second.text];
        }),
      ),
    );
    expect(answers).toEqual([
      ['echo: q-c1', 'echo: again-c1'],
      ['echo: q-c2', 'echo: again-c2'],
      ['echo: same', 'echo: again-c3'],
      ['echo: same', 'echo: again-c4'],
    ]);
    expect([...client.batches.values()].map((b) => b.length)).toEqual([3, 4]);
    const first = client.batches.get('b1')!.map((r) => r.custom_id);
    expect(first.every((id) => /^c[1-4]-g-[0-9a-f]{10}$/.test(id))).toBe(true);
  });

  it('splits a round above maxRequests; a failed request rejects only its case', async () => {
    const { client, scheduler, model } = setup({ maxRequests: 2 });
    const out = await Promise.allSettled(
      ['a', 'b', 'fail', 'd', 'e'].map((q) => scheduler.runCase(q, () => model.complete(ask(q)))),
    );
    expect([...client.batches.values()].map((b) => b.length)).toEqual([2, 2, 1]);
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const failed = out[2]!;
    expect(failed.status === 'rejected' && String(failed.reason)).toMatch(/failed in generator batch b\d: boom/);
  });

  it('an unreadable result line is reported with its batch and rejects only its own case', async () => {
    const { scheduler, model, events } = setup();
    const [torn, fine] = await Promise.allSettled([
      scheduler.runCase('a', () => model.complete(ask('torn'))),
      scheduler.runCase('b', () => model.complete(ask('fine'))),
    ]);
    expect(torn.status).toBe('rejected');
    expect(String((torn as PromiseRejectedResult).reason)).toContain('its result line cannot be read');
    expect(fine).toMatchObject({ status: 'fulfilled', value: { text: 'echo: fine' } });
    expect(events).toContain('generator batch b1: GET memory (line 1): not JSON');
  });

  it('answers a call made outside any case', async () => {
    const { client, model } = setup();
    expect((await model.complete(ask('alone'))).text).toBe('echo: alone');
    expect(client.batches.size).toBe(1);
  });

  it('polls an open batch of the journal for the requests it holds, and submits the others', async () => {
    // The first run: one batch submitted, noted in the journal, never collected.
    const first = setup();
    const noted: BatchJournalEntry[] = [];
    await first.scheduler.runCase('x', () => first.model.complete(ask('held')));
    for (const [id, reqs] of first.client.batches)
      noted.push({ role: 'generator', client: 'memory:model', id, custom_ids: reqs.map((r) => r.custom_id) });
    const collected: string[] = [];
    const journal: BatchJournal = {
      open: noted.map((b) => ({ ...b, id: `old-${b.id}` })),
      submitted: () => undefined,
      collected: (id) => void collected.push(id),
    };
    const again = setup({ journal });
    const out = await Promise.all([
      again.scheduler.runCase('x', () => again.model.complete(ask('held'))),
      again.scheduler.runCase('y', () => again.model.complete(ask('new'))),
    ]);
    expect(out.map((c) => c.text)).toEqual(['echo: held', 'echo: new']);
    expect(again.client.polled).toContain('old-b1');
    // Only the new request was submitted.
    expect([...again.client.batches.values()].map((b) => b.map((r) => r.request.messages[0]!.content))).toEqual([
      ['new'],
    ]);
    expect(collected).toContain('old-b1');
  });
});

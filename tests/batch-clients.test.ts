/**
 * The batch API clients against local fakes of the OpenAI Batch API and Anthropic Message
 * Batches: every request ends with an answer or an explicit error, polls and their backoff are
 * counted through the injected sleep and clock (no wall time), a known batch id is resumed
 * without a second batch, and a malformed answer is an error naming provider and endpoint.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InputError, ProviderError } from '../src/errors.js';
import { AnthropicChatModel } from '../src/llm/anthropic.js';
import { OpenAIChatModel } from '../src/llm/openai.js';
import {
  AnthropicBatchClient,
  OpenAIBatchClient,
  type AnthropicBatchClientOptions,
  type BatchOutcome,
  type BatchRequest,
  type BatchResult,
  type BatchStatus,
  type OpenAIBatchClientOptions,
} from '../src/llm/batch/index.js';
import type { CompletionRequest } from '../src/llm/types.js';
import { rejection } from './helpers/faults.js';
import {
  AnthropicBatchServer,
  MESSAGE_BATCHES,
  messageBatchResultsRoute,
  messageBatchRoute,
} from './servers/anthropic-batch-server.js';
import { anthropicServer, MESSAGES } from './servers/anthropic-server.js';
import { BATCHES, batchRoute, FILES, fileContentRoute, OpenAIBatchServer } from './servers/openai-batch-server.js';
import { CHAT, openAIServer } from './servers/openai-server.js';
import { ProviderServer, reply, replyText, status } from './servers/provider-server.js';
import { serveDuringSuite } from './servers/suite.js';

const OPENAI_KEY = 'sk-test-BATCH-abcdef123456';
const ANTHROPIC_KEY = 'sk-ant-test-BATCH-abcdef123456';

const Verdict = z.object({ verdict: z.enum(['supported', 'unsupported']), reason: z.string() });

/** A clock that only moves when the client sleeps, and the delays it asked for. */
function fakeTime() {
  let t = 0;
  const delays: number[] = [];
  return {
    delays,
    now: () => t,
    sleep: async (ms: number) => {
      delays.push(ms);
      t += ms;
    },
  };
}

const ask = (content: string, extra: Partial<CompletionRequest> = {}): CompletionRequest => ({
  system: 'You are terse.',
  messages: [{ role: 'user', content }],
  ...extra,
});

/** q1…qN, q2 asking for a structured verdict. */
function requests(n: number): BatchRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    custom_id: `q${i + 1}`,
    request:
      i === 1
        ? ask(`question ${i + 1}`, { schema: { name: 'faithfulness verdict', zod: Verdict }, maxTokens: 40 })
        : ask(`question ${i + 1}`, { temperature: 0 }),
  }));
}

/** Every result by custom_id, failing on a custom_id given twice. */
async function collect<T>(results: AsyncIterable<BatchResult<T>>): Promise<Map<string, BatchOutcome<T>>> {
  const out = new Map<string, BatchOutcome<T>>();
  for await (const r of results) {
    expect(out.has(r.custom_id), `${r.custom_id} given twice`).toBe(false);
    out.set(r.custom_id, r.outcome);
  }
  return out;
}

function ok<T>(o: BatchOutcome<T> | undefined) {
  if (!o || !('ok' in o)) throw new Error(`expected an answer, got ${JSON.stringify(o)}`);
  return o.ok;
}

function err<T>(o: BatchOutcome<T> | undefined) {
  if (!o || !('error' in o)) throw new Error(`expected an error, got ${JSON.stringify(o)}`);
  return o.error;
}

describe('OpenAIBatchClient', () => {
  const server = new OpenAIBatchServer({ json: () => ({ verdict: 'supported', reason: 'cited' }) });
  const served = serveDuringSuite(server);
  const chat = openAIServer({ chat: () => '{"verdict":"supported","reason":"cited"}' });
  const chatServed = serveDuringSuite(chat);

  const client = (o: Partial<OpenAIBatchClientOptions> = {}) => {
    const time = fakeTime();
    const c = new OpenAIBatchClient({
      model: 'test-model',
      baseURL: `${served.url}/v1`,
      apiKey: OPENAI_KEY,
      pollMinMs: 1000,
      pollMaxMs: 4000,
      minDelayMs: 5,
      sleep: time.sleep,
      now: time.now,
      ...o,
    });
    return { c, time };
  };

  it('uploads one JSONL file, creates one batch, and answers every request with usage and parsed JSON', async () => {
    server.script = {
      answer: (body, id) => (id === 'q2' ? '{"verdict":"supported","reason":"cited"}' : `answer to ${body.model}`),
    };
    const { c } = client();
    const reqs = requests(3);
    const { batchId } = await c.submit(reqs);
    const out = await collect(c.wait(batchId, reqs));

    expect([...out.keys()].sort()).toEqual(['q1', 'q2', 'q3']);
    expect(ok(out.get('q1'))).toMatchObject({
      text: 'answer to test-model',
      model: 'test-model',
      usage: { inputTokens: 11, outputTokens: 4 },
      latencyMs: 0,
    });
    expect(ok(out.get('q2')).json).toEqual({ verdict: 'supported', reason: 'cited' });
    expect(server.count(FILES)).toBe(1);
    expect(server.creations).toBe(1);

    const upload = server.uploads.at(-1)!;
    expect(upload.purpose).toBe('batch');
    expect(upload.lines.map((l) => [l.custom_id, l.method, l.url])).toEqual([
      ['q1', 'POST', '/v1/chat/completions'],
      ['q2', 'POST', '/v1/chat/completions'],
      ['q3', 'POST', '/v1/chat/completions'],
    ]);
    expect(server.last(BATCHES).body).toEqual({
      input_file_id: upload.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    for (const r of server.requests) expect(r.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
  });

  it('sends each line the very body OpenAIChatModel sends, json_schema included', async () => {
    const reqs = requests(2);
    const { c } = client({ extraBody: { top_k: 5 } });
    await c.submit(reqs);
    const sync = new OpenAIChatModel({
      model: 'test-model',
      baseURL: `${chatServed.url}/v1`,
      apiKey: OPENAI_KEY,
      extraBody: { top_k: 5 },
    });
    for (const [i, r] of reqs.entries()) {
      await sync.complete(r.request);
      expect(server.uploads.at(-1)!.lines[i]!.body).toEqual(chat.last(CHAT).body);
    }
    expect(server.uploads.at(-1)!.lines[1]!.body).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'faithfulness_verdict', strict: true } },
    });
  });

  it('polls with a doubling delay bounded by pollMaxMs, counted through the injected sleep', async () => {
    server.script = { polls: 4 };
    const { c, time } = client();
    const reqs = requests(2);
    const { batchId } = await c.submit(reqs);
    const seen: [number, BatchStatus][] = [];
    const final = await c.waitUntilEnded(batchId, { onPoll: (s, n) => seen.push([n, s]) });

    expect(server.count(batchRoute(batchId))).toBe(5);
    expect(time.delays).toEqual([1000, 2000, 4000, 4000]);
    expect(seen.map(([n, s]) => [n, s.status, s.providerStatus])).toEqual([
      [1, 'in_progress', 'validating'],
      [2, 'in_progress', 'in_progress'],
      [3, 'in_progress', 'in_progress'],
      [4, 'in_progress', 'in_progress'],
      [5, 'ended', 'completed'],
    ]);
    expect(seen[0]![1].counts).toMatchObject({ total: 2, processing: 2, succeeded: 0 });
    expect(final.counts).toMatchObject({ total: 2, processing: 0, succeeded: 2, failed: 0 });
  });

  it('gives up waiting at maxWaitMs on the injected clock, with a poll on the limit', async () => {
    server.script = { polls: 100 };
    const { c, time } = client({ maxWaitMs: 5000 });
    const { batchId } = await c.submit(requests(1));
    const e = await rejection(c.waitUntilEnded(batchId), ProviderError);
    expect(time.delays).toEqual([1000, 2000, 2000]);
    expect(server.count(batchRoute(batchId))).toBe(4);
    expect(e.message).toMatch(/openai batch: batch batch_\d+ is still in_progress after 5 s/);
    expect(e.message).toContain('wait for the same id again later');
  });

  it('resumes a known batch id: polls it and never creates a second batch', async () => {
    server.script = { polls: 1 };
    const reqs = requests(3);
    const { batchId } = await client().c.submit(reqs);
    // Another process (a resumed run) knows only the id and the requests.
    const { c } = client();
    const out = await collect(c.wait(batchId, reqs));
    expect(out.size).toBe(3);
    for (const o of out.values()) ok(o);
    expect(server.creations).toBe(1);
    expect(server.count(FILES)).toBe(1);
    expect(server.count(batchRoute(batchId))).toBe(3);
  });

  it('maps error-file lines back by custom_id: a server error fails, a 400 is invalid', async () => {
    server.script = { failed: { q1: 500, q3: 400 } };
    const { c } = client();
    const reqs = requests(3);
    const { batchId } = await c.submit(reqs);
    const out = await collect(c.wait(batchId, reqs));
    expect(err(out.get('q1'))).toEqual({
      kind: 'failed',
      message: 'openai batch: 500: The server had an error while processing your request. (server_error)',
    });
    expect(err(out.get('q3'))).toMatchObject({ kind: 'invalid', message: expect.stringContaining('Invalid value') });
    expect(ok(out.get('q2')).json).toEqual({ verdict: 'supported', reason: 'cited' });
    expect((await c.poll(batchId)).counts).toMatchObject({ succeeded: 1, failed: 2 });
  });

  it('an expired batch: requests without output are expired errors, with or without batch_expired lines', async () => {
    for (const expiredLines of [false, true]) {
      server.script = { end: 'expired', unanswered: ['q2', 'q3'], expiredLines };
      const { c } = client();
      const reqs = requests(3);
      const { batchId } = await c.submit(reqs);
      const out = await collect(c.wait(batchId, reqs));
      expect(ok(out.get('q1')).text).toBe('echo: question 1');
      expect(err(out.get('q2')).kind).toBe('expired');
      expect(err(out.get('q3')).kind).toBe('expired');
      expect(out.size).toBe(3);
    }
  });

  it('a request missing from both files of a completed batch is an explicit error', async () => {
    server.script = { unanswered: ['q2'] };
    const { c } = client();
    const reqs = requests(3);
    const { batchId } = await c.submit(reqs);
    const out = await collect(c.wait(batchId, reqs));
    expect(err(out.get('q2'))).toEqual({
      kind: 'failed',
      message: `openai batch: batch ${batchId} ended (completed) without a line for this request in its output or error file`,
    });
    expect(out.size).toBe(3);
  });

  it('a torn output line costs its own request, not the batch: every readable line is answered, the torn one named', async () => {
    for (const tear of ['cut', 'garbled'] as const) {
      server.script = { torn: { q2: tear } };
      const { c } = client();
      const reqs = requests(4);
      const { batchId } = await c.submit(reqs);
      const reported: string[] = [];
      const out = await collect(c.wait(batchId, reqs, { onUnreadable: (m) => reported.push(m) }));
      expect(out.size).toBe(4);
      for (const n of [1, 3, 4]) expect(ok(out.get(`q${n}`)).text).toBe(`echo: question ${n}`);
      const fileId = server.filesOf(batchId).output!;
      expect(reported).toHaveLength(1);
      expect(reported[0]).toMatch(
        new RegExp(
          `^openai batch: malformed answer \\(not JSON: .*\\) from GET .*/files/${fileId}/content \\(line 2\\)$`,
        ),
      );
      // Cut short, the line still shows its custom_id: q2 gets that line's error. Garbled, it does
      // not: q2 is the request left without a line, and its error names the line that was unreadable.
      expect(err(out.get('q2'))).toEqual({
        kind: 'failed',
        message:
          tear === 'cut'
            ? `its result line cannot be read: ${reported[0]}`
            : `openai batch: batch ${batchId} ended (completed) without a line for this request in its output or error file; a line of the results could not be read: ${reported[0]}`,
      });
    }
  });

  it('a batch that failed validation makes every request invalid, with the reason', async () => {
    server.script = { end: 'failed' };
    const { c } = client();
    const reqs = requests(2);
    const { batchId } = await c.submit(reqs);
    const out = await collect(c.wait(batchId, reqs));
    for (const id of ['q1', 'q2']) {
      expect(err(out.get(id))).toMatchObject({
        kind: 'invalid',
        message: expect.stringContaining('line 1: This line is not parseable as valid JSON.'),
      });
    }
  });

  it('an answer that does not match its schema fails that request only, keeping the raw text', async () => {
    server.script = { answer: (_b, id) => (id === 'q2' ? '{"verdict":"maybe"}' : 'fine') };
    const { c } = client();
    const reqs = requests(3);
    const { batchId } = await c.submit(reqs);
    const out = await collect(c.wait(batchId, reqs));
    expect(err(out.get('q2'))).toMatchObject({
      kind: 'failed',
      message: expect.stringContaining('faithfulness verdict: answer does not match the schema'),
      raw: '{"verdict":"maybe"}',
    });
    expect(ok(out.get('q1')).text).toBe('fine');
    expect(ok(out.get('q3')).text).toBe('fine');
  });

  it('retries a transient poll failure and a broken result download, and says so in the delays', async () => {
    const { c, time } = client();
    const reqs = requests(2);
    const { batchId } = await c.submit(reqs);
    server.enqueue(batchRoute(batchId), status(503));
    expect((await c.poll(batchId)).status).toBe('ended');
    expect(time.delays).toHaveLength(1);
    const fileId = server.filesOf(batchId).output!;
    server.enqueue(fileContentRoute(fileId), status(502));
    const out = await collect(c.results(batchId, reqs));
    expect(out.size).toBe(2);
    expect(server.count(fileContentRoute(fileId))).toBe(2);
  });

  it('a failed batch creation is not retried (it may exist), a 429 is', async () => {
    const { c } = client();
    server.enqueue(BATCHES, status(500));
    const e = await rejection(c.submit(requests(1)), ProviderError);
    expect(e.message).toContain('not retried, since the server may have created the batch');
    expect(server.creations).toBe(1);
    server.reset();
    server.enqueue(BATCHES, status(429, { error: { message: 'slow down' } }, { 'retry-after-ms': '7' }));
    await c.submit(requests(1));
    expect(server.creations).toBe(2);
  });

  it('malformed answers are errors naming the provider and the endpoint', async () => {
    const { c } = client({ retries: 0 });
    server.enqueue(BATCHES, reply({ object: 'batch' }));
    const created = await rejection(c.submit(requests(1)), ProviderError);
    expect(created.message).toMatch(
      /^openai batch: malformed answer \(id: .*\) from POST http:\/\/127\.0\.0\.1:\d+\/v1\/batches$/,
    );

    const reqs = requests(2);
    const { batchId } = await c.submit(reqs);
    server.enqueue(batchRoute(batchId), replyText('<html>Bad gateway</html>', { contentType: 'text/html' }));
    const polled = await rejection(c.poll(batchId), ProviderError);
    expect(polled.message).toContain(`openai batch: malformed answer (not JSON: <html>Bad gateway</html>) from GET`);
    expect(polled.message).toContain(`/v1/batches/${batchId}`);

    server.enqueue(batchRoute(batchId), reply({ id: batchId, status: 'done' }));
    expect((await rejection(c.poll(batchId), ProviderError)).message).toContain('status: Invalid option');

    await c.poll(batchId);
    const fileId = server.filesOf(batchId).output!;
    server.enqueue(
      fileContentRoute(fileId),
      replyText('{"custom_id":"q1","response":{"status_code":200,"body":{}}}\nnot json\n'),
    );
    // An unreadable line is not the batch's end: q1's line is read (its body is no chat
    // completion), q2, whose line is lost, is the request left without one and says which.
    const lines = await collect(c.results(batchId, reqs));
    expect(err(lines.get('q1')).message).toMatch(/^openai: malformed answer \(choices: .*\/content \(line 1\)$/);
    expect(err(lines.get('q2')).message).toMatch(
      /could not be read: openai batch: malformed answer \(not JSON: not json\) from GET .*\/content \(line 2\)$/,
    );
  });

  it('refuses a submission it cannot map back, before any upload; results of an unended batch are an error', async () => {
    const { c } = client();
    const twice = [...requests(2), { custom_id: 'q1', request: ask('again') }];
    expect((await rejection(c.submit(twice), InputError)).message).toContain("custom_id 'q1' is used twice");
    await rejection(c.submit([]), InputError);
    expect(server.count(FILES)).toBe(0);

    server.script = { polls: 5 };
    const reqs = requests(1);
    const { batchId } = await c.submit(reqs);
    const e = await rejection(collect(c.results(batchId, reqs)), ProviderError);
    expect(e.message).toContain(`batch ${batchId} has not ended (status validating)`);
  });
});

/**
 * A raw results host for what ProviderServer cannot script: `serve(res, n)` writes the answer of
 * its n-th request (1-based) by hand, so a body can stop half-way or wait for the test.
 */
async function rawHost(serve: (res: ServerResponse, n: number) => void | Promise<void>) {
  let n = 0;
  const server = createServer((_req, res) => void serve(res, ++n));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => n,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const resultLine = (id: string) => `${JSON.stringify({ custom_id: id, result: { type: 'expired' } })}\n`;

describe('AnthropicBatchClient', () => {
  const server = new AnthropicBatchServer({ toolInput: () => ({ verdict: 'supported', reason: 'cited' }) });
  const served = serveDuringSuite(server);
  const sync = anthropicServer({ toolInput: () => ({ verdict: 'supported', reason: 'cited' }) });
  const syncServed = serveDuringSuite(sync);

  const client = (o: Partial<AnthropicBatchClientOptions> = {}) => {
    const time = fakeTime();
    const c = new AnthropicBatchClient({
      model: 'claude-test',
      baseURL: served.url,
      apiKey: ANTHROPIC_KEY,
      pollMinMs: 500,
      pollMaxMs: 60_000,
      minDelayMs: 5,
      sleep: time.sleep,
      now: time.now,
      ...o,
    });
    return { c, time };
  };

  it('creates one batch of {custom_id, params} and answers every request, the tool input parsed', async () => {
    server.script = { polls: 2, toolInput: () => ({ verdict: 'unsupported', reason: 'no source' }) };
    const { c, time } = client();
    const reqs = requests(3);
    const { batchId } = await c.submit(reqs);
    expect(batchId).toMatch(/^msgbatch_/);
    const out = await collect(c.wait(batchId, reqs));

    expect(ok(out.get('q1'))).toMatchObject({
      text: 'echo: question 1',
      model: 'claude-test',
      usage: { inputTokens: 13, outputTokens: 5 },
    });
    expect(ok(out.get('q2')).json).toEqual({ verdict: 'unsupported', reason: 'no source' });
    expect(ok(out.get('q3')).text).toBe('echo: question 3');
    expect(server.creations).toBe(1);
    expect(server.count(messageBatchRoute(batchId))).toBe(4);
    expect(time.delays).toEqual([500, 1000]);
    for (const r of server.requests) {
      expect(r.headers['x-api-key']).toBe(ANTHROPIC_KEY);
      expect(r.headers['anthropic-version']).toBe('2023-06-01');
    }
  });

  it('sends each request the very params AnthropicChatModel sends, the forced tool included', async () => {
    const reqs = requests(2);
    await client().c.submit(reqs);
    const model = new AnthropicChatModel({ model: 'claude-test', baseURL: syncServed.url, apiKey: ANTHROPIC_KEY });
    for (const [i, r] of reqs.entries()) {
      await model.complete(r.request);
      expect(server.submitted.at(-1)![i]).toEqual({ custom_id: r.custom_id, params: sync.last(MESSAGES).body });
    }
    expect(server.submitted.at(-1)![1]!.params.tool_choice).toEqual({ type: 'tool', name: 'faithfulness_verdict' });
  });

  it('every request ends with an answer or an explicit error: errored, invalid, expired, canceled, missing', async () => {
    server.script = {
      errored: { q1: 'api_error', q2: 'invalid_request_error' },
      expired: ['q3'],
      canceled: ['q4'],
      missing: ['q5'],
    };
    const { c } = client();
    const reqs = requests(6);
    const { batchId } = await c.submit(reqs);
    const out = await collect(c.wait(batchId, reqs));
    expect(out.size).toBe(6);
    expect(err(out.get('q1'))).toEqual({
      kind: 'failed',
      message: 'anthropic batch: request failed: api_error (api_error)',
    });
    expect(err(out.get('q2')).kind).toBe('invalid');
    expect(err(out.get('q3')).kind).toBe('expired');
    expect(err(out.get('q4')).kind).toBe('canceled');
    expect(err(out.get('q5'))).toEqual({
      kind: 'failed',
      message: `anthropic batch: batch ${batchId} ended without a result for this request`,
    });
    expect(ok(out.get('q6')).text).toBe('echo: question 6');
    expect((await c.poll(batchId)).counts).toEqual({
      total: 5,
      processing: 0,
      succeeded: 1,
      failed: 2,
      canceled: 1,
      expired: 1,
    });
  });

  it('a torn results line costs its own request, not the batch: every readable line is answered, the torn one named', async () => {
    for (const tear of ['cut', 'garbled'] as const) {
      server.script = { torn: { q2: tear } };
      const { c } = client();
      const reqs = requests(4);
      const { batchId } = await c.submit(reqs);
      const reported: string[] = [];
      const out = await collect(c.wait(batchId, reqs, { onUnreadable: (m) => reported.push(m) }));
      expect(out.size).toBe(4);
      for (const n of [1, 3, 4]) expect(ok(out.get(`q${n}`)).text).toBe(`echo: question ${n}`);
      expect(reported).toHaveLength(1);
      expect(reported[0]).toMatch(
        new RegExp(
          `^anthropic batch: malformed answer \\(not JSON: .*\\) from GET .*/v1/messages/batches/${batchId}/results \\(line 2\\)$`,
        ),
      );
      expect(err(out.get('q2'))).toEqual({
        kind: 'failed',
        message:
          tear === 'cut'
            ? `its result line cannot be read: ${reported[0]}`
            : `anthropic batch: batch ${batchId} ended without a result for this request; a line of the results could not be read: ${reported[0]}`,
      });
    }
  });

  it('a per-request error that echoes the key reaches the caller without it', async () => {
    server.script = { errored: { q1: `bad key ${ANTHROPIC_KEY}` } };
    const { c } = client();
    const reqs = requests(1);
    const { batchId } = await c.submit(reqs);
    const e = err((await collect(c.wait(batchId, reqs))).get('q1'));
    expect(e.message).toContain('request failed: bad key ***');
    expect(e.message).not.toContain(ANTHROPIC_KEY);
  });

  it('a structured answer without the tool call, or off the schema, fails that request only', async () => {
    server.script = { toolInput: () => ({ verdict: 'perhaps' }) };
    const { c } = client();
    const reqs = requests(2);
    const { batchId } = await c.submit(reqs);
    const out = await collect(c.wait(batchId, reqs));
    expect(err(out.get('q2'))).toMatchObject({ kind: 'failed', raw: '{"verdict":"perhaps"}' });
    expect(ok(out.get('q1')).text).toBe('echo: question 1');
  });

  it('resumes a known batch id without creating a second batch', async () => {
    server.script = { polls: 3 };
    const reqs = requests(2);
    const { batchId } = await client().c.submit(reqs);
    const { c, time } = client();
    const out = await collect(c.wait(batchId, reqs));
    expect(out.size).toBe(2);
    expect(server.creations).toBe(1);
    expect(server.count(MESSAGE_BATCHES)).toBe(1);
    expect(time.delays).toEqual([500, 1000, 2000]);
  });

  it('malformed answers are errors naming the provider and the endpoint', async () => {
    const { c } = client({ retries: 0 });
    const reqs = requests(2);
    const { batchId } = await c.submit(reqs);
    server.enqueue(
      messageBatchRoute(batchId),
      reply({ id: batchId, processing_status: 'sleeping', request_counts: {} }),
    );
    const polled = await rejection(c.poll(batchId), ProviderError);
    expect(polled.message).toMatch(
      /^anthropic batch: malformed answer \(processing_status: Invalid option.*\) from GET http:\/\/127\.0\.0\.1:\d+\/v1\/messages\/batches\/msgbatch_\d+$/,
    );

    await c.poll(batchId);
    server.enqueue(messageBatchResultsRoute(batchId), replyText('{"custom_id":"q1","result":{"type":"mystery"}}\n'));
    // A line off the format still shows whose it is: that request fails, naming the line; q2 has no line.
    const lines = await collect(c.results(batchId, reqs));
    expect(err(lines.get('q1')).message).toMatch(
      /^its result line cannot be read: anthropic batch: malformed answer \(result\.type: .*\) from GET .*\/results \(line 1\)$/,
    );
    expect(err(lines.get('q2')).message).toContain('ended without a result for this request; a line of the results');

    server.enqueue(messageBatchResultsRoute(batchId), replyText('{"custom_id":"q9","result":{"type":"expired"}}\n'));
    const stranger = await rejection(collect(c.results(batchId, reqs)), ProviderError);
    expect(stranger.message).toContain("custom_id 'q9' is not a request of this batch");
  });

  it('sends the key to the API origin only, not to a results_url elsewhere', async () => {
    const elsewhere = new ProviderServer();
    const { url, close } = await elsewhere.start();
    try {
      const { c } = client();
      const reqs = requests(1);
      const { batchId } = await c.submit(reqs);
      elsewhere.on('GET /results.jsonl', () =>
        replyText('{"custom_id":"q1","result":{"type":"expired"}}\n', { contentType: 'application/binary' }),
      );
      server.enqueue(
        messageBatchRoute(batchId),
        reply({
          id: batchId,
          processing_status: 'ended',
          request_counts: { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 1 },
          results_url: `${url}/results.jsonl`,
        }),
      );
      const out = await collect(c.results(batchId, reqs));
      expect(err(out.get('q1')).kind).toBe('expired');
      expect(elsewhere.last('GET /results.jsonl').headers['x-api-key']).toBeUndefined();
    } finally {
      await close();
    }
  });

  /** Points the next poll of `batchId` at `resultsUrl`, ended. */
  const endedAt = (batchId: string, resultsUrl: string) =>
    server.enqueue(
      messageBatchRoute(batchId),
      reply({
        id: batchId,
        processing_status: 'ended',
        request_counts: { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 3 },
        results_url: resultsUrl,
      }),
    );

  it('reads results as they arrive: the first is given before the file has ended', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => (release = r));
    let finished = false;
    const host = await rawHost(async (res) => {
      res.writeHead(200, { 'content-type': 'application/binary' });
      res.write(resultLine('q1'));
      await released;
      res.end(resultLine('q2') + resultLine('q3'));
      finished = true;
    });
    try {
      const { c } = client();
      const reqs = requests(3);
      const { batchId } = await c.submit(reqs);
      endedAt(batchId, `${host.url}/results`);
      const order: string[] = [];
      for await (const r of c.results(batchId, reqs)) {
        if (order.length === 0) {
          expect(finished).toBe(false);
          release();
        }
        order.push(r.custom_id);
      }
      expect(order).toEqual(['q1', 'q2', 'q3']);
    } finally {
      await host.close();
    }
  });

  it('a download broken half-way starts again and skips the results already given', async () => {
    const host = await rawHost((res, n) => {
      res.writeHead(200, { 'content-type': 'application/binary' });
      if (n === 1) {
        res.write(resultLine('q1') + resultLine('q2').slice(0, 10));
        setImmediate(() => res.socket?.destroy());
        return;
      }
      res.end(resultLine('q1') + resultLine('q2') + resultLine('q3'));
    });
    try {
      const { c, time } = client();
      const reqs = requests(3);
      const { batchId } = await c.submit(reqs);
      endedAt(batchId, `${host.url}/results`);
      const out = await collect(c.results(batchId, reqs));
      expect([...out.keys()]).toEqual(['q1', 'q2', 'q3']);
      for (const o of out.values()) expect(err(o).kind).toBe('expired');
      expect(host.requests()).toBe(2);
      expect(time.delays).toEqual([5]);
    } finally {
      await host.close();
    }
  });
});

/**
 * An empty or malformed answer is an error, never a result (issue 12.1): each fault form a server
 * can send with status 200 becomes a ProviderError of fault `answer` naming the reason; empty and
 * malformed answers are retried, truncated and refused ones are not; none is ever cached, and a
 * later healthy server is asked exactly the failed requests again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../src/errors.js';
import { AnthropicChatModel } from '../src/llm/anthropic.js';
import { ResponseCache, cachedModel } from '../src/llm/cache.js';
import { OpenAIChatModel } from '../src/llm/openai.js';
import { MESSAGES, anthropicMessage, anthropicServer, textBlock } from './servers/anthropic-server.js';
import { CHAT, chatCompletion, openAIServer } from './servers/openai-server.js';
import { reply, replyText, type Behaviour } from './servers/provider-server.js';
import { serveDuringSuite } from './servers/suite.js';
import { rejection } from './helpers/faults.js';

const chat = openAIServer();
const chatServed = serveDuringSuite(chat);
const messages = anthropicServer();
const messagesServed = serveDuringSuite(messages);
const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

const ask = { system: 'Be brief.', messages: [{ role: 'user' as const, content: 'What is RRF?' }] };
const openai = () =>
  new OpenAIChatModel({
    model: 'test-model',
    baseURL: `${chatServed.url}/v1`,
    apiKey: 'sk-test-answers-0123456789',
    retries: 2,
    minDelayMs: 1,
  });
const anthropic = () =>
  new AnthropicChatModel({
    model: 'claude-test',
    baseURL: messagesServed.url,
    apiKey: 'sk-ant-answers-0123456789',
    retries: 2,
    minDelayMs: 1,
  });

const finished = (content: string | null, finish: string) => {
  const body = chatCompletion(content) as { choices: { finish_reason: string }[] };
  body.choices[0]!.finish_reason = finish;
  return reply(body);
};

const failure = (p: Promise<unknown>) => rejection(p, ProviderError);

describe('OpenAI-compatible answers that are not answers', () => {
  const cases: [string, Behaviour, RegExp, boolean][] = [
    ['content: null', reply(chatCompletion(null)), /^openai: empty answer \(content null, finish_reason stop\)/, true],
    ['empty content', reply(chatCompletion('  ')), /^openai: empty answer \(content empty, finish_reason stop\)/, true],
    [
      'empty choices',
      reply({ ...chatCompletion('x'), choices: [] }),
      /^openai: malformed answer \(choices: no choices\)/,
      true,
    ],
    [
      'no message',
      reply({ ...chatCompletion('x'), choices: [{ index: 0, finish_reason: 'stop' }] }),
      /^openai: malformed answer \(choices\.0\.message: /,
      true,
    ],
    [
      'an HTML body',
      replyText('<html><body>Welcome to the hotel wifi</body></html>', { contentType: 'text/html' }),
      /^openai: malformed answer \(not JSON: <html><body>Welcome/,
      true,
    ],
    [
      'empty content cut by length',
      finished('', 'length'),
      /^openai: answer truncated \(no text before the token limit, finish_reason length: raise max_tokens\)/,
      false,
    ],
    [
      'text cut by length',
      finished('The answer is', 'length'),
      /^openai: answer truncated \(cut at the token limit/,
      false,
    ],
    [
      'a refusal',
      reply(chatCompletion(null, { refusal: 'I cannot help with that.' })),
      /^openai: the model refused \(I cannot help with that\.\)/,
      false,
    ],
  ];
  for (const [name, behaviour, message, retried] of cases) {
    it(`${name} → fault answer${retried ? ', retried' : ', not retried'}`, async () => {
      chat.enqueue(CHAT, behaviour, behaviour, behaviour);
      const err = await failure(openai().complete(ask));
      expect(err.message).toMatch(message);
      expect(err.message).toContain(`from ${chatServed.url}/v1/chat/completions`);
      expect(err.details).toMatchObject({ provider: 'openai', fault: 'answer', status: 200, retryable: retried });
      expect(chat.count(CHAT)).toBe(retried ? 3 : 1);
    });
  }

  it('takes the good answer that follows a glitch', async () => {
    chat.enqueue(CHAT, reply(chatCompletion(null)));
    await expect(openai().complete(ask)).resolves.toMatchObject({ text: 'echo: What is RRF?' });
    expect(chat.count(CHAT)).toBe(2);
  });
});

describe('Anthropic answers that are not answers', () => {
  const msg = (content: ReturnType<typeof textBlock>[], stop: string) =>
    reply({ ...anthropicMessage(content), stop_reason: stop });
  const cases: [string, Behaviour, RegExp, boolean][] = [
    ['content: []', msg([], 'end_turn'), /^anthropic: empty answer \(0 content blocks, stop_reason end_turn\)/, true],
    ['only blank text', msg([textBlock(' ')], 'end_turn'), /^anthropic: empty answer/, true],
    [
      'no content field',
      reply({ type: 'message', role: 'assistant', model: 'claude-test' }),
      /^anthropic: malformed answer \(content: /,
      true,
    ],
    [
      'nothing before max_tokens',
      msg([], 'max_tokens'),
      /^anthropic: answer truncated \(nothing written at the token limit/,
      false,
    ],
    ['a refusal', msg([textBlock('')], 'refusal'), /^anthropic: the model refused/, false],
  ];
  for (const [name, behaviour, message, retried] of cases) {
    it(`${name} → fault answer${retried ? ', retried' : ', not retried'}`, async () => {
      messages.enqueue(MESSAGES, behaviour, behaviour, behaviour);
      const err = await failure(anthropic().complete(ask));
      expect(err.message).toMatch(message);
      expect(err.details).toMatchObject({ provider: 'anthropic', fault: 'answer', retryable: retried });
      expect(messages.count(MESSAGES)).toBe(retried ? 3 : 1);
    });
  }
});

describe('a faulty server, then a healthy one, behind the answer cache', () => {
  it('re-asks exactly the failed requests and reuses the good ones', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ragaudit-answers-'));
    dirs.push(dir);
    const questions = ['q-good-1', 'q-null', 'q-good-2', 'q-html', 'q-length', 'q-choices'];
    const faulty: Record<string, Behaviour> = {
      'q-null': reply(chatCompletion(null)),
      'q-html': replyText('<html>proxy</html>', { contentType: 'text/html' }),
      'q-length': finished('', 'length'),
      'q-choices': reply({ ...chatCompletion('x'), choices: [] }),
    };
    const ask1 = (q: string) => ({ system: 'Be brief.', messages: [{ role: 'user' as const, content: q }] });
    const asked = () =>
      chat.requestsTo(CHAT).map((r) => (r.body as { messages: { content: string }[] }).messages.at(-1)!.content);

    // First run: the server answers four questions with a fault, every time.
    chat.on(CHAT, (req) => {
      const q = (req.body as { messages: { content: string }[] }).messages.at(-1)!.content;
      return faulty[q] ?? reply(chatCompletion(`answer to ${q}`));
    });
    const first = cachedModel(openai(), new ResponseCache(dir));
    const outcomes = await Promise.all(
      questions.map((q) =>
        first.complete(ask1(q)).then(
          (c) => c.text,
          (e: unknown) => (e as ProviderError).details.fault,
        ),
      ),
    );
    expect(outcomes).toEqual(['answer to q-good-1', 'answer', 'answer to q-good-2', 'answer', 'answer', 'answer']);

    // Second run: a healthy server (default responder again); only the four failures are asked.
    chat.reset();
    chat.on(CHAT, (req) =>
      reply(chatCompletion(`answer to ${(req.body as { messages: { content: string }[] }).messages.at(-1)!.content}`)),
    );
    const second = cachedModel(openai(), new ResponseCache(dir));
    const texts = await Promise.all(questions.map((q) => second.complete(ask1(q))));
    expect(texts.map((t) => t.text)).toEqual(questions.map((q) => `answer to ${q}`));
    expect(asked().sort()).toEqual(['q-choices', 'q-html', 'q-length', 'q-null']);
    expect(texts.filter((t) => t.cached).length).toBe(2);
    chat.on(CHAT, (req) =>
      reply(chatCompletion(`echo: ${(req.body as { messages: { content: string }[] }).messages.at(-1)!.content}`)),
    );
  });
});

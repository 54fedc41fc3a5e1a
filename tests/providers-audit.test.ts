/**
 * `ragaudit run` twice on the embedded demo forum, generator and cross-encoder behind local
 * servers, every secret form planted (issues 12.1 and 12.4):
 * - run 1: the generator answers four questions with a 200 that is no answer (content null, an
 *   HTML page, nothing before the token limit, empty choices) and a fifth with a 400 whose body
 *   echoes the key; the sixth answer echoes the key in its text;
 * - run 2, same cache, a healthy generator: exactly the five failed questions are asked again.
 * No key, URL password, token or signature reaches an output file, the ledger, the cache, the
 * console, or any request a server received (apart from each server's own credentials: the
 * Authorization header and the query string of its own base URL).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../src/model/results.js';
import {
  answerFor,
  caseOf,
  chatQuestion,
  chatServer,
  chatSystem,
  FIXTURES,
  filesUnder,
  removeWorkDirs,
  resultsOf,
  runCli,
  startAll,
  workDir,
  zoneScore,
  type CliRun,
} from './fixtures/audit/harness.js';
import { CHAT, chatCompletion } from './servers/openai-server.js';
import { reply, replyText, status, type Behaviour, type RecordedRequest } from './servers/provider-server.js';
import { rerankServer, TEI_RERANK } from './servers/rerank-server.js';

const CONFIG = join(FIXTURES, 'demo-remote.yml');
const KEY = 'sk-test-planted-OPENAI-0123456789';
const AZURE = 'azure-api-key-PLANTED-111';
const ACCESS = 'access-token-PLANTED-222';
const TOKEN_USER = 'tokenAsUserPLANTED333';
const SIG = 'sigPLANTED444';
const AUTH = 'authPLANTED555';
const SECRETS = [KEY, AZURE, ACCESS, TOKEN_USER, SIG, AUTH];

const finishedByLength = (): Behaviour => {
  const body = chatCompletion('') as { choices: { finish_reason: string }[] };
  body.choices[0]!.finish_reason = 'length';
  return reply(body);
};
/** Run 1's fault per case id. */
const FAULTY: Record<string, () => Behaviour> = {
  'polished-binder-meaning': () => reply(chatCompletion(null)),
  'vamp-folds-too-long': () =>
    replyText('<html><body>Bad gateway, try later</body></html>', { contentType: 'text/html' }),
  'loake-country-of-manufacture': finishedByLength,
  'off-python-linked-list': () => reply({ ...chatCompletion('x'), choices: [] }),
  'off-gazpacho-recipe': () =>
    status(400, { error: { message: `Invalid request for key ${KEY}`, type: 'invalid_request_error' } }),
};
const ECHOING = 'loake-vs-cj-price-gap';
const idOf = (req: RecordedRequest) => caseOf(chatQuestion(req)).id;

describe('a faulty generator, then a healthy one, with every secret form planted', { timeout: 180_000 }, () => {
  let healthy = false;
  const chat = chatServer({
    override: (req) => {
      const id = idOf(req);
      if (!healthy && FAULTY[id]) return FAULTY[id]();
      if (id === ECHOING) return reply(chatCompletion(`${answerFor(chatSystem(req))} (authorised with ${KEY})`));
      return undefined;
    },
  });
  const tei = rerankServer({ maxBatch: 8, score: zoneScore });
  let close: () => Promise<void>;
  let dir: string;
  let first: CliRun;
  let second: CliRun;
  let firstResult: RunResult;
  let secondResult: RunResult;
  let firstAsked: string[];
  let secondAsked: string[];

  beforeAll(async () => {
    const started = await startAll(chat, tei);
    close = started.close;
    const [llm, rr] = started.urls;
    dir = workDir('planted');
    const env = {
      GEN_PROVIDER: 'openai',
      GEN_MODEL: 'test-model',
      GEN_URL: `${llm}/v1?api-version=2024-06-01&api-key=${AZURE}&access-token=${ACCESS}`,
      RERANK_URL: `${rr!.replace('http://', `http://${TOKEN_USER}@`)}/?sig=${SIG}&auth=${AUTH}`,
      OPENAI_API_KEY: KEY,
    };
    first = await runCli(['run', '--config', CONFIG, '--name', 'faulty'], { cwd: dir, env });
    firstResult = resultsOf(first);
    firstAsked = chat.requestsTo(CHAT).map(idOf);
    chat.requests.length = 0;
    healthy = true;
    second = await runCli(['run', '--config', CONFIG, '--name', 'healthy'], { cwd: dir, env });
    secondResult = resultsOf(second);
    secondAsked = chat.requestsTo(CHAT).map(idOf);
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('records each faulty answer as an error naming the reason, never as an answer', () => {
    expect(first.code, first.err).toBe(1);
    const byId = Object.fromEntries(firstResult.cases.map((c) => [c.id, c]));
    expect(byId[ECHOING]!.status).toBe('ok');
    const reasons = Object.fromEntries(
      Object.keys(FAULTY).map((id) => [id, `${byId[id]!.status}: ${byId[id]!.error?.message ?? ''}`]),
    );
    expect(reasons['polished-binder-meaning']).toMatch(
      /^error: openai: empty answer \(content null, finish_reason stop\)/,
    );
    expect(reasons['vamp-folds-too-long']).toMatch(
      /^error: openai: malformed answer \(not JSON: <html><body>Bad gateway/,
    );
    expect(reasons['loake-country-of-manufacture']).toMatch(
      /^error: openai: answer truncated \(no text before the token limit/,
    );
    expect(reasons['off-python-linked-list']).toMatch(/^error: openai: malformed answer \(choices: no choices\)/);
    expect(reasons['off-gazpacho-recipe']).toMatch(
      /^error: openai: 400 Bad Request \(Invalid request for key \*\*\*\)/,
    );
  });

  it('re-asks exactly the failed questions on the healthy server and reuses the good answer', () => {
    // Run 1: retries: 1 in the config, so the retryable faults were asked twice.
    expect(firstAsked.filter((id) => id === 'loake-country-of-manufacture')).toHaveLength(1);
    expect(firstAsked.filter((id) => id === 'polished-binder-meaning')).toHaveLength(2);
    expect(second.code, second.err).toBe(0);
    expect(secondResult.cases.every((c) => c.status === 'ok')).toBe(true);
    expect([...secondAsked].sort()).toEqual(Object.keys(FAULTY).sort());
    const echoing = secondResult.cases.find((c) => c.id === ECHOING)!;
    expect(echoing.answer).toContain('(authorised with ***)');
  });

  it('sent each server its own credentials only', () => {
    expect(chat.requestsTo(CHAT)[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(chat.requestsTo(CHAT)[0]!.query.get('api-key')).toBe(AZURE);
    expect(tei.requestsTo(TEI_RERANK)[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from(`${TOKEN_USER}:`).toString('base64')}`,
    );
    expect(tei.requestsTo(TEI_RERANK)[0]!.query.get('sig')).toBe(SIG);
    const own = { chat: [KEY, AZURE, ACCESS], tei: [TOKEN_USER, SIG, AUTH] };
    for (const [name, server, mine] of [
      ['chat', chat, own.chat],
      ['tei', tei, own.tei],
    ] as const) {
      for (const r of server.requests) {
        const { authorization: _own, ...headers } = r.headers;
        const seen = `${r.raw}\n${JSON.stringify(headers)}\n${r.path}`;
        for (const s of SECRETS) expect(seen.includes(s), `${s} in a request to ${name}`).toBe(false);
        // The query string of its own base URL is how this server authenticates; nobody else's.
        const query = r.query.toString();
        for (const s of SECRETS.filter((x) => !(mine as readonly string[]).includes(x)))
          expect(query.includes(s), `${s} in ${name}'s query`).toBe(false);
      }
    }
  });

  it('writes no planted secret to results, digest, ledger, cache or console', () => {
    const files = filesUnder(dir);
    const cached = files.filter((f) => f.includes(`${join(dir, 'cache', 'responses')}`));
    expect(cached.flatMap((f) => readFileSync(f, 'utf8').split('\n').filter(Boolean)).length).toBeGreaterThanOrEqual(6);
    expect(files.filter((f) => f.endsWith('.ledger.jsonl')).length).toBeGreaterThanOrEqual(1);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const s of SECRETS) expect(text.includes(s), `${s} in ${f}`).toBe(false);
    }
    for (const run of [first, second]) {
      for (const s of SECRETS) {
        expect(run.out.includes(s), `${s} on stdout`).toBe(false);
        expect(run.err.includes(s), `${s} on stderr`).toBe(false);
      }
    }
    const config = JSON.stringify(secondResult.config);
    expect(config).toContain('?api-version=2024-06-01&api-key=***&access-token=***');
    expect(config).toContain('http://***@127.0.0.1');
    expect(config).toContain('?sig=***&auth=***');
  });
});

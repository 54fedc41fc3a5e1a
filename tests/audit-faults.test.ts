/**
 * `ragaudit run` when the generator misbehaves, on a real PostgreSQL whose URL carries a password:
 * one case meets a 429 with Retry-After, one repeated 500s, one a hung request, one a 400 whose
 * body echoes the key; two are answered. (A 401 stops the whole run instead: tests/runner-stops.test.ts.) Every case
 * ends with a record, failed ones as error
 * records of stage 'generation' with no score, the exit code is 1, and no key or password
 * reaches any file written or the console.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { DEMO_FORUM_DIR } from '../src/paths.js';
import { Ledger } from '../src/store/ledger.js';
import type { RunResult } from '../src/model/results.js';
import { freshDatabase } from './helpers/pg.js';
import { CHAT } from './servers/openai-server.js';
import { hang, status, type RecordedRequest } from './servers/provider-server.js';
import { rerankServer, TEI_RERANK } from './servers/rerank-server.js';
import {
  CASES,
  caseOf,
  chatQuestion,
  chatServer,
  FIXTURES,
  filesUnder,
  ledgerOf,
  removeWorkDirs,
  resultsOf,
  runCli,
  startAll,
  workDir,
  zoneScore,
  type CliRun,
} from './fixtures/audit/harness.js';

const KEY = 'sk-test-RECOGNISABLE-0123456789abcdef';
const DB_PASSWORD = 'pw-SECRET-42';
const RERANK_PASSWORD = 'rr-SECRET-77';
/** Every string that must never be written or printed. */
const SECRETS = [KEY, 'RECOGNISABLE', DB_PASSWORD, RERANK_PASSWORD, 'SECRET'];

/** What the server does to each case's requests. */
const FAULT: Record<string, 'retry-after' | 'server-error' | 'hang' | 'bad-request'> = {
  'loake-vs-cj-price-gap': 'retry-after',
  'polished-binder-meaning': 'server-error',
  'vamp-folds-too-long': 'hang',
  'loake-country-of-manufacture': 'bad-request',
};
const idOf = (req: RecordedRequest) => caseOf(chatQuestion(req)).id;

/**
 * Like a real rate limiter, the server refuses (429 again) any request that comes back inside the
 * window its 429 announced (Retry-After: 1). A retry after the generator's own backoff (at most its
 * 500 ms first delay) would land inside; 900 ms leaves room for a timer that fires a little early.
 * A loaded machine can only make the retry later, so this never fails for being slow.
 */
const RATE_WINDOW_MS = 900;

describe('ragaudit run with provider faults (real PostgreSQL, secrets in play)', { timeout: 120_000 }, () => {
  const limitedSince = new Map<string, number>();
  const rateLimited = status(
    429,
    { error: { message: 'Rate limit reached', type: 'requests' } },
    { 'retry-after': '1' },
  );
  const chat = chatServer({
    override: (req) => {
      const id = idOf(req);
      switch (FAULT[id]) {
        case 'retry-after': {
          const since = limitedSince.get(id);
          if (since === undefined) limitedSince.set(id, req.at);
          return since === undefined || req.at - since < RATE_WINDOW_MS ? rateLimited : undefined;
        }
        case 'server-error':
          return status(500, { error: { message: 'The server had an error while processing your request.' } });
        case 'hang':
          return hang();
        case 'bad-request':
          // Like some gateways, the body echoes the key of the request it refused.
          return status(400, {
            error: {
              message: `Request from key ${KEY} has an invalid stop sequence.`,
              type: 'invalid_request_error',
              code: 'invalid_request',
            },
          });
        default:
          return undefined;
      }
    },
  });
  const tei = rerankServer({ score: zoneScore });
  let close: () => Promise<void>;
  let dir: string;
  let run: CliRun;
  let result: RunResult & { file: string };
  const byId = (id: string) => result.cases.find((c) => c.id === id)!;
  const requestsOf = (id: string) => chat.requestsTo(CHAT).filter((r) => idOf(r) === id);

  beforeAll(async () => {
    const fresh = await freshDatabase('audit_faults');
    await loadForum(fresh.writer, readForum(DEMO_FORUM_DIR), { textSearchConfig: 'english' });
    await fresh.close();
    // The test server trusts loopback, so the password is accepted and never needed.
    const dbUrl = fresh.url.replace('postgres://postgres@', `postgres://postgres:${DB_PASSWORD}@`);
    const started = await startAll(chat, tei);
    close = started.close;
    const [llm, rr] = started.urls;
    dir = workDir('faults');
    const env = {
      GEN_URL: `${llm}/v1`,
      RERANK_URL: rr!.replace('http://', `http://tei:${RERANK_PASSWORD}@`),
      AUDIT_DB_URL: dbUrl,
      OPENAI_API_KEY: KEY,
    };
    run = await runCli(['run', '--config', join(FIXTURES, 'pg-faults.yml')], { cwd: dir, env });
    result = resultsOf(run);
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('ends every case with a record, exits 1 and counts the errors apart', () => {
    expect(run.code, run.err).toBe(1);
    expect(result.cases.map((c) => c.id)).toEqual(CASES.map((c) => c.id));
    const errors = result.cases.filter((c) => c.status === 'error').map((c) => c.id);
    expect(errors.sort()).toEqual(['loake-country-of-manufacture', 'polished-binder-meaning', 'vamp-folds-too-long']);
    expect(run.out).toMatch(/cases 6 · ok 3 · gated 0 · errors 3/);
    expect(result.summary.retrieval).toMatchObject({ cases: 6, ok: 3, errors: 3 });
    expect(result.summary.generation).toMatchObject({ answered: 3, cta_rate: { mean: 1, n: 3 } });
    const ledger = Ledger.open(ledgerOf(run.err)!);
    expect([...ledger.done.keys()].sort()).toEqual(CASES.map((c) => c.id).sort());
  });

  it('waits out a 429 Retry-After, then completes the case', () => {
    // retries: 1, so the case completes only if its one retry came after the window: a retry on
    // the backoff alone would meet a second 429 and end as an error record.
    expect(requestsOf('loake-vs-cj-price-gap')).toHaveLength(2);
    const r = byId('loake-vs-cj-price-gap');
    expect(r.status).toBe('ok');
    expect(r.answer).toMatch(/^According to/);
  });

  it('turns repeated 500s into an error record of stage generation, never a score', () => {
    expect(requestsOf('polished-binder-meaning')).toHaveLength(2); // retries: 1
    const r = byId('polished-binder-meaning');
    expect(r).toMatchObject({ status: 'error', error: { stage: 'generation' } });
    expect(r.error!.message).toMatch(
      /^openai: gave up after 2 attempts: 500 Internal Server Error \(The server had an error/,
    );
    expect(r.answer).toBeUndefined();
    expect(r.citations).toBeUndefined();
    expect(r.scores).toEqual([]);
    // What the earlier stages computed stays in the record.
    expect(r.zone).toBe('normal');
    expect(r.sources!.length).toBeGreaterThan(0);
    expect(Object.keys(r.retrieval)).toEqual(['keyword', 'rerank']);
  });

  it('ends a hung request at generator.timeout_ms', () => {
    // Two attempts (retries: 1), each ended by the configured deadline: the message names the
    // 1500 ms of generator.timeout_ms, where the default would read 60000 ms.
    expect(requestsOf('vamp-folds-too-long')).toHaveLength(2);
    expect(byId('vamp-folds-too-long')).toMatchObject({
      status: 'error',
      error: {
        stage: 'generation',
        message: expect.stringMatching(
          /^openai: gave up after 2 attempts: request timed out after 1500 ms from http:\/\/127\.0\.0\.1:\d+\/v1$/,
        ),
      },
    });
  });

  it('fails a 400 at once for that case alone, naming the provider but not the key', () => {
    expect(requestsOf('loake-country-of-manufacture')).toHaveLength(1);
    const r = byId('loake-country-of-manufacture');
    expect(r).toMatchObject({ status: 'error', error: { stage: 'generation' } });
    expect(r.error!.message).toMatch(
      /^openai: 400 Bad Request \(Request from key \*\*\* has an invalid stop sequence\.\) from http:\/\/127\.0\.0\.1:\d+\/v1/,
    );
    expect(r.error!.message).not.toContain('RECOGNISABLE');
    // The digest lists it where a reader looks first.
    const digest = readFileSync(result.file.replace(/\.json$/, '.md'), 'utf8');
    expect(digest).toContain(`- \`loake-country-of-manufacture\` (generation): ${r.error!.message}`);
  });

  it('sends the credentials it was given (so the secrets below were really in use)', () => {
    expect(chat.requestsTo(CHAT)[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(tei.requestsTo(TEI_RERANK)[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from(`tei:${RERANK_PASSWORD}`).toString('base64')}`,
    );
    expect(result.database).toMatch(/^postgres:\/\/127\.0\.0\.1:\d+\/audit_faults_\w+$/);
  });

  it('writes no key or password to results, digest, ledger, cache or console', () => {
    const files = filesUnder(dir);
    const names = files.map((f) => f.slice(dir.length + 1));
    expect(names.filter((n) => /^out\/.*\.json$/.test(n) && !n.endsWith('.ledger.jsonl'))).toHaveLength(1);
    expect(names.filter((n) => n.endsWith('.md'))).toHaveLength(1);
    expect(names.filter((n) => n.endsWith('.ledger.jsonl'))).toHaveLength(1);
    // The three answered cases were cached (a line each in the process's segment); failures never are.
    const cached = files.filter((f, i) => names[i]!.startsWith('cache/responses/'));
    expect(cached.flatMap((f) => readFileSync(f, 'utf8').split('\n').filter(Boolean))).toHaveLength(3);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const s of SECRETS) expect(text.includes(s), `${s} in ${f}`).toBe(false);
    }
    for (const s of SECRETS) {
      expect(run.out.includes(s), `${s} on stdout`).toBe(false);
      expect(run.err.includes(s), `${s} on stderr`).toBe(false);
    }
    // The config is recorded with its secrets masked, not dropped silently.
    const config = JSON.stringify(result.config);
    expect(config).toContain(`postgres://postgres:***@127.0.0.1`);
    expect(config).toContain('http://tei:***@127.0.0.1');
  });
});

/**
 * Secrets by name and by shape, everywhere: one masking function (src/errors.ts `redact`) masks
 * the value of every query parameter whose name says credential (`subscription-key`, `code`,
 * the `X-Amz-*` family …), a URL's password or token user name, and every value shaped like a
 * known token (sk-…, GitHub's gh?_ and github_pat_, AWS AKIA/ASIA, Slack xox?-, JWTs), while
 * prose that only says "code" or "token" is left alone. Then, end to end, a run whose generator
 * base URL carries such parameters, whose note quotes a token and whose server echoes tokens
 * writes none of them to the results, digest, report, ledger, cache or console, and can be
 * resumed after its credential is rotated.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../src/config/defaults.js';
import { validateConfig } from '../src/config/load.js';
import { redact, redactDeep, type RedactMode } from '../src/errors.js';
import { writeArtifact } from '../src/io/artifacts.js';
import { describe as describeFailure } from '../src/llm/faults.js';
import { HttpStatusError } from '../src/llm/http.js';
import { resumeDigest } from '../src/runs/audit-run.js';
import { maskedRecord } from '../src/store/record-check.js';
import { publicConfig } from '../src/store/results-file.js';
import type { CaseRecord } from '../src/model/results.js';
import {
  answerFor,
  caseOf,
  chatQuestion,
  chatServer,
  chatSystem,
  FIXTURES,
  filesUnder,
  ledgerOf,
  remoteConfig,
  removeWorkDirs,
  resultsOf,
  runCli,
  startAll,
  workDir,
  type CliRun,
} from './fixtures/audit/harness.js';
import { CHAT, chatCompletion } from './servers/openai-server.js';
import { reply, status } from './servers/provider-server.js';

// Token-shaped values, built from parts so that no literal token sits in the source.
const tok = (prefix: string, body: string) => `${prefix}${body}`;
const SK = tok('sk-', 'proj-Q3f9XbT2LmN8vR4kP7sW1yZ6');
const SK_ANT = tok('sk-', 'ant-api03-9hG2kLm4Np6Qr8St0Uv');
const GHP = tok('ghp_', '1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ');
const GHO = tok('gho_', 'Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa');
const GHU = tok('ghu_', 'Aa11Bb22Cc33Dd44Ee55Ff66Gg77Hh88Ii99');
const GHS = tok('ghs_', 'Jj00Kk11Ll22Mm33Nn44Oo55Pp66Qq77Rr88');
const GHR = tok('ghr_', 'Ss99Tt88Uu77Vv66Ww55Xx44Yy33Zz22Aa11');
const GH_PAT = tok('github_pat_', '11ABCDEFG0123456789_abcdefghijKLMNOP');
const AKIA = tok('AKIA', 'IOSFODNN7EXAMPLE');
const ASIA = tok('ASIA', 'Y34FZKBOKMUTVV7A');
const XOXB = tok('xoxb-', '123456789012-1234567890123-AbCdEfGhIjKlMnOp');
const XOXP = tok('xoxp-', '1-2345678901-abcdefABCDEF1234');
const JWT = tok('eyJ', 'hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U');

type Row = [form: string, text: string, masked: string, mode?: RedactMode];

/** Every form, with what it becomes; `content` rows are read as an answer or a passage is. */
const MASKED: Row[] = [
  // Query parameters by name.
  [
    'subscription-key',
    'https://apim.example/v1?api-version=2024-06-01&subscription-key=Sub0123456789abc',
    'https://apim.example/v1?api-version=2024-06-01&subscription-key=***',
  ],
  [
    'code (Azure Functions)',
    'https://fn.azurewebsites.net/api/chat?code=AzFn_0123456789abcdef==',
    'https://fn.azurewebsites.net/api/chat?code=***',
  ],
  [
    'the X-Amz-* family',
    `https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${AKIA}%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20240101T000000Z&X-Amz-Security-Token=FwoGZXIvYXdzEJr&X-Amz-Signature=0f1e2d3c4b5a69788796a5b4c3d2e1f0`,
    'https://b.s3.amazonaws.com/o?X-Amz-Algorithm=***&X-Amz-Credential=***&X-Amz-Date=***&X-Amz-Security-Token=***&X-Amz-Signature=***',
  ],
  [
    'X-Goog-Signature',
    'https://storage.googleapis.com/b/o?X-Goog-Signature=abc0123456789',
    'https://storage.googleapis.com/b/o?X-Goog-Signature=***',
  ],
  [
    'key, token, secret',
    'http://h/x?key=K0123456&token=T0123456&secret=S0123456',
    'http://h/x?key=***&token=***&secret=***',
  ],
  ['signature, sig', 'http://h/x?signature=G0123456&sig=sv%3D2021', 'http://h/x?signature=***&sig=***'],
  [
    'password, auth, credential',
    'http://h/x?password=P0123456&auth=A0123456&credential=C0123456',
    'http://h/x?password=***&auth=***&credential=***',
  ],
  [
    'access_token, client_secret, api-key',
    'http://h/x?access_token=a1&client_secret=b2&api-key=c3',
    'http://h/x?access_token=***&client_secret=***&api-key=***',
  ],
  [
    'camelCase and run-together names',
    'http://h/x?apiKey=a1&accessToken=b2&subscriptionkey=c3',
    'http://h/x?apiKey=***&accessToken=***&subscriptionkey=***',
  ],
  ['a percent-encoded name', 'http://h/x?api%2Dkey=a1234567&v=1', 'http://h/x?api%2Dkey=***&v=1'],
  [
    'an HTML-escaped query',
    '<a href="http://h/x?v=1&amp;code=Zz0123456">',
    '<a href="http://h/x?v=1&amp;code=***">',
    'content',
  ],
  [
    'a URL inside an answer',
    'See https://fn.example/api?code=Zz0123456 for it.',
    'See https://fn.example/api?code=*** for it.',
    'content',
  ],
  // Userinfo.
  ['a database password', 'postgres://u:pw0123@h:5432/db', 'postgres://u:***@h:5432/db'],
  ['a password holding @', 'postgres://audit:Xy@9pass@db.internal/forum', 'postgres://audit:***@db.internal/forum'],
  ['a token as user name', 'https://tokenAsUser0123@tei.example/rerank', 'https://***@tei.example/rerank'],
  // Token shapes, in messages and in free text alike.
  ['sk- (OpenAI)', `key ${SK} refused`, 'key sk-*** refused'],
  ['sk-ant- (Anthropic)', `the key ${SK_ANT}.`, 'the key sk-***.', 'content'],
  ['ghp_', `token ${GHP}`, 'token ghp_***', 'content'],
  ['gho_ ghu_ ghs_ ghr_', `${GHO} ${GHU} ${GHS} ${GHR}`, 'gho_*** ghu_*** ghs_*** ghr_***', 'content'],
  ['github_pat_', `(${GH_PAT})`, '(github_pat_***)', 'content'],
  ['AKIA and ASIA', `id ${AKIA}, temporary ${ASIA}`, 'id AKIA***, temporary ASIA***', 'content'],
  ['Slack xoxb- and xoxp-', `${XOXB} and ${XOXP}`, 'xoxb-*** and xoxp-***', 'content'],
  ['a JWT', `jwt=${JWT};`, 'jwt=***;', 'content'],
  ['a token after a JSON escape', `{"a":"line\\n${GHP}"}`, '{"a":"line\\nghp_***"}', 'content'],
  // Message-only forms: a server's error body echoing a header or a field.
  ['Bearer', 'Authorization: Bearer abcdefgh12345678', 'Authorization: Bearer ***'],
  ['api_key: value', '{"api_key": "zz0123456"}', '{"api_key": "***"}'],
];

/** Text that must come back as it was: prose, ordinary URLs and parameters, slugs, near misses. */
const KEPT: [form: string, text: string, mode?: RedactMode][] = [
  ['the word code in prose', 'The code of conduct: post the code=42 part in a code block.'],
  ['the word token in an answer', 'A token: the word a tokenizer splits off.', 'content'],
  ['Bearer in an answer', 'Bearer bonds were common in 1900.', 'content'],
  ['ordinary parameters', 'https://gw.example/v1?api-version=2024-06-01&format=json&author=jo&max_tokens=400'],
  ['a forum link', 'https://forum.example/t/loake-1880-review/100/3?u=someone'],
  ['a database user name', 'postgres://auditor@127.0.0.1:5432/forum?sslmode=require'],
  ['a host and port', '{"u":"http://h:8080","m":"a@b"}', 'content'],
  ['a slug that starts sk-', 'sk-ii-skincare-routine-question', 'content'],
  ['sk- inside a word', 'desk-0123456789abcdefghij', 'content'],
  ['short prefixes', 'ghp_short, AKIA alone, xoxo-hugs, eyJhb alone', 'content'],
  ['max_tokens', 'max_tokens=4000 input_tokens: 12'],
];

describe('redact: every form', () => {
  it.each(MASKED)('masks %s', (_form, text, masked, mode) => {
    expect(redact(text, mode)).toBe(masked);
    // What content loses, a message loses too.
    if (mode === 'content') expect(redact(text)).toBe(masked);
    // Idempotent: what is masked stays as it is.
    expect(redact(masked, mode)).toBe(masked);
  });

  it.each(KEPT)('keeps %s', (_form, text, mode) => {
    expect(redact(text, mode)).toBe(text);
  });

  it('leaves serialised JSON well formed and masks only the secret inside it', () => {
    const doc = {
      u: 'http://h:8080/v1?code=Zz0123456&v=1',
      m: 'mail a@b',
      a: `quote "${GHP}"\n${XOXB}\\`,
      n: 3,
    };
    const masked = JSON.parse(redact(JSON.stringify(doc), 'content')) as typeof doc;
    expect(masked).toEqual({ ...doc, u: 'http://h:8080/v1?code=***&v=1', a: 'quote "ghp_***"\nxoxb-***\\' });
    expect(redactDeep(doc)).toEqual(masked);
  });

  it('masks a record at the one point every record passes, but never its id', () => {
    const id = 'sk-ant-api03-keys-explained-2024';
    const record = { id, question: `Why does ${GHP} fail?`, answer: 'See https://fn.example/api?code=Zz0123456 [[1]]' };
    const masked = maskedRecord(record as unknown as CaseRecord);
    expect(masked).toEqual({
      id,
      question: 'Why does ghp_*** fail?',
      answer: 'See https://fn.example/api?code=*** [[1]]',
    });
    // Nothing to mask: the same object, so a checked record is not copied.
    const plain = { id: 'x', question: 'Why?' } as unknown as CaseRecord;
    expect(maskedRecord(plain)).toBe(plain);
  });

  it('masks a server message before cutting it short, so half a token is not left behind', () => {
    const body = JSON.stringify({ error: { message: `${'x'.repeat(180)} bad key ${JWT}` } });
    const message = describeFailure(new HttpStatusError(400, new Headers(), 'http://h/v1', body), 400);
    expect(message).toBe(`400 Bad Request (${'x'.repeat(180)} bad key ***)`);
  });

  it('the artifact writer masks what reaches it (a results file from an older version, say)', () => {
    const dir = workDir('secrets-writer');
    const file = writeArtifact(join(dir, 'old.md'), `base_url https://h/v1?code=Zz0123456 key ${SK}`);
    expect(readFileSync(file, 'utf8')).toBe('base_url https://h/v1?code=*** key sk-***');
  });
});

describe('the stored config and its digest', () => {
  const config = (query: string, note = '') =>
    validateConfig(
      {
        ...DEFAULT_CONFIG,
        note,
        generator: { provider: 'openai', model: 'm', base_url: `https://gw.example/v1?api-version=2024-06-01${query}` },
      },
      null,
      {},
    );

  it('masks credential parameters and token shapes in the stored config', () => {
    const stored = publicConfig(
      config(`&subscription-key=Sub0123456&code=Zz0123456&X-Amz-Signature=0f1e2d3c`, `uses ${GHP}`),
    );
    expect((stored.generator as { base_url: string }).base_url).toBe(
      'https://gw.example/v1?api-version=2024-06-01&subscription-key=***&code=***&X-Amz-Signature=***',
    );
    expect(stored.note).toBe('uses ghp_***');
  });

  it('keeps a URL without credentials as it was, so its digest does not move', () => {
    const stored = publicConfig(config('&format=json'));
    expect((stored.generator as { base_url: string }).base_url).toBe(
      'https://gw.example/v1?api-version=2024-06-01&format=json',
    );
  });

  it('gives one resume digest whatever the credential, and another for another endpoint', () => {
    const a = resumeDigest(config('&code=FirstCode0123'));
    expect(resumeDigest(config('&code=RotatedCode456'))).toBe(a);
    expect(resumeDigest(config('&format=json'))).not.toBe(a);
  });
});

describe('a run with credentials in its base URL and tokens in its note and answers', { timeout: 180_000 }, () => {
  const SUB = 'SubKeyPLANTED0123456';
  const CODE = 'AzFnCodePLANTED0123==';
  const AMZ = '0f1e2d3c4b5a6978PLANTED';
  const ROTATED = 'AzFnCodeROTATED9876==';
  const KEY = JWT;
  // Unregistered tokens the server echoes (found by shape only) and the one the note quotes.
  const ECHOED = [GHO, XOXB, ASIA, SK_ANT, GH_PAT];
  const PLANTED = [SUB, CODE, AMZ, ROTATED, KEY, GHP, AKIA, SK, ...ECHOED, 'Zz9PLANTEDinError'];
  const ECHOING = 'loake-vs-cj-price-gap';
  const FAILING = 'off-gazpacho-recipe';
  const chat = chatServer({
    override: (req) => {
      const id = caseOf(chatQuestion(req)).id;
      if (id === ECHOING) return reply(chatCompletion(`${answerFor(chatSystem(req))} (${ECHOED.join(' ')})`));
      if (id === FAILING)
        return status(400, {
          error: { message: `bad request to https://gw.example/v1?code=Zz9PLANTEDinError with ${SK}` },
        });
      return undefined;
    },
  });
  let close: () => Promise<void>;
  let dir: string;
  let first: CliRun;
  let resumed: CliRun;

  beforeAll(async () => {
    const started = await startAll(chat);
    close = started.close;
    const [llm] = started.urls;
    dir = workDir('secrets-forms');
    // The config lives outside the work dir: it holds the planted values, the outputs must not.
    const configDir = workDir('secrets-forms-config');
    const configFile = join(configDir, 'ragaudit.yml');
    writeFileSync(
      configFile,
      `${remoteConfig({ name: 'forms', cases: join(FIXTURES, 'questions.yml'), judge: '{ provider: none }' })}note: "deployed with ${GHP} and ${AKIA}"\n`,
    );
    const url = (code: string) =>
      `${llm}/v1?api-version=2024-06-01&subscription-key=${SUB}&code=${encodeURIComponent(code)}&X-Amz-Signature=${AMZ}&X-Amz-Credential=${AKIA}%2F20240101%2Fus-east-1%2Fs3%2Faws4_request`;
    const env = (code: string) => ({ GEN_URL: url(code), OPENAI_API_KEY: KEY });
    first = await runCli(['run', '--config', configFile], { cwd: dir, env: env(CODE) });
    const ledger = ledgerOf(first.err);
    if (!ledger) throw new Error(`no ledger line on stderr:\n${first.err}`);
    // The credential rotated since: the same configuration, so the run resumes.
    resumed = await runCli(['run', '--config', configFile, '--resume', ledger], { cwd: dir, env: env(ROTATED) });
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('sent the server its own credentials, and recorded the failing case as an error', () => {
    const asked = chat.requestsTo(CHAT)[0]!;
    expect(asked.query.get('code')).toBe(CODE);
    expect(asked.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(first.code, first.err).toBe(1);
    const result = resultsOf(first);
    expect(result.cases.find((c) => c.id === FAILING)!.error!.message).toContain(
      'https://gw.example/v1?code=*** with sk-***',
    );
  });

  it('writes none of them to results, digest, report, ledger, cache or console', () => {
    const files = filesUnder(dir);
    for (const ext of ['.json', '.md', '.html', '.ledger.jsonl'])
      expect(
        files.some((f) => f.endsWith(ext) && !f.includes(join(dir, 'cache'))),
        ext,
      ).toBe(true);
    expect(files.some((f) => f.includes(join(dir, 'cache', 'responses')))).toBe(true);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const s of PLANTED) expect(text.includes(s), `${s} in ${f}`).toBe(false);
    }
    for (const run of [first, resumed])
      for (const s of PLANTED) {
        expect(run.out.includes(s), `${s} on stdout`).toBe(false);
        expect(run.err.includes(s), `${s} on stderr`).toBe(false);
      }
    const result = resultsOf(first);
    expect((result.config.generator as { base_url: string }).base_url).toMatch(
      /\?api-version=2024-06-01&subscription-key=\*\*\*&code=\*\*\*&X-Amz-Signature=\*\*\*&X-Amz-Credential=\*\*\*$/,
    );
    expect(result.note).toBe('deployed with ghp_*** and AKIA***');
    expect(result.cases.find((c) => c.id === ECHOING)!.answer).toContain(
      '(gho_*** xoxb-*** ASIA*** sk-*** github_pat_***)',
    );
  });

  it('resumes after the credential is rotated: the digest holds no credential', () => {
    expect(resumed.err).not.toMatch(/config changed/);
    expect(resumed.code, resumed.err).toBe(1);
    expect(resultsOf(resumed).cases).toHaveLength(resultsOf(first).cases.length);
  });
});

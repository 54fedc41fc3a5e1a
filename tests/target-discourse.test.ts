/**
 * `ragaudit run --target discourse:https://…`: a bot hosted on a Discourse forum, asked by private
 * message through the API (a fake of the endpoints used: tests/servers/discourse-server.ts). Its
 * reply's links are the sources, scored as a JSON bot's are; every message is deleted afterwards,
 * a timeout too; nothing is written without --allow-writes; the API key is written nowhere.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseRecord } from '../src/model/results.js';
import { findScore } from '../src/model/scores.js';
import { cookedAnswer } from '../src/target/discourse-target.js';
import { CASES, filesUnder, removeWorkDirs, resultsOf, runCli, workDir } from './fixtures/audit/harness.js';
import { Q, SCRIPT } from './fixtures/target-script.js';
import { CREATE, discourseForum, type BotReply } from './servers/discourse-server.js';
import { hang, replyText, status } from './servers/provider-server.js';

const KEY = 'discourse-key-0123456789abcdef0123';
const USER = 'ragaudit_tester';
const BOT = 'shoebot';
const ENV = { DISCOURSE_API_KEY: KEY, DISCOURSE_API_USERNAME: USER };

/** The JSON bot's script as the forum bot's cooked replies: each source a link (post ids are topic * 1000 + n). */
function cooked(site: string): Record<string, BotReply> {
  const link = (s: unknown): string => {
    if (typeof s === 'string') return s;
    const o = s as { post_id?: number; topic_id?: number; url?: string };
    if (o.url) return o.url;
    if (o.topic_id) return `${site}/t/some-topic/${o.topic_id}`;
    const p = o.post_id!;
    return p === 999999 ? `${site}/p/999999` : `${site}/t/a-topic/${Math.floor(p / 1000)}/${p % 1000}`;
  };
  return Object.fromEntries(
    Object.entries(SCRIPT).map(([q, line]) => [
      q,
      {
        cooked:
          `<p>${line.answer.replace(/&/g, '&amp;').replace(/'/g, '&#39;')}</p>` +
          line.sources.map((s, i) => `<p><a href="${link(s)}">source ${i + 1}</a></p>`).join('') +
          // A mention is a link, not a source.
          `<p>Ask <a class="mention" href="/u/alice">@alice</a> too.</p>`,
      },
    ]),
  );
}

const config = (name: string, url: string, extra = '') => `name: ${name}
cases: [cases.yml]
retrieval: { channels: [{ name: posts, kind: keyword, grain: post }] }
target: { url: "discourse:${url}", bot_user: ${BOT}, poll_ms: 20${extra} }
judge: { provider: none }
generator: { concurrency: 1 }
output_dir: out
cache_dir: cache
`;

const byId = (cases: readonly CaseRecord[], id: string) => cases.find((c) => c.id === id)!;

describe('cookedAnswer', () => {
  it('reads the text of cooked HTML and its source links, without mentions, uploads or anchors', () => {
    const html =
      '<p>Use &amp; keep <strong>cedar</strong> trees&#39; tips.<br>See <a href="/t/cedar/12/3">this</a>, ' +
      '<a href="https://f.example/t/cedar/12/3">again</a>, <a class="mention" href="/u/bob">@bob</a>, ' +
      '<a href="/uploads/default/x.jpg">img</a>, <a href="#note">note</a> and <a href="https://blog.example/a?x=1&amp;y=2">blog</a>.</p>';
    const { text, links } = cookedAnswer(html, 'https://f.example');
    expect(text).toBe("Use & keep cedar trees' tips.\nSee this, again, @bob, img, note and blog.");
    // The relative and the absolute link to post 3 of topic 12 are one source.
    expect(links).toEqual(['https://f.example/t/cedar/12/3', 'https://blog.example/a?x=1&y=2']);
  });
});

describe('ragaudit run --target discourse:…', { timeout: 180_000 }, () => {
  let forum: ReturnType<typeof discourseForum>;
  let close: () => Promise<void>;
  let site: string;
  let cwd: string;

  beforeAll(async () => {
    // The script's links need the site's address, known once the server listens.
    const script: Record<string, BotReply> = {};
    forum = discourseForum({ key: KEY, user: USER, bot: BOT, script });
    ({ url: site, close } = await forum.server.start());
    Object.assign(script, cooked(site));
    cwd = workDir('target-discourse');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    writeFileSync(join(cwd, 'ragaudit.yml'), config('forum-bot', site));
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('refuses without --allow-writes, naming the site and the bot, before any request', async () => {
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report'], { cwd, env: ENV });
    expect(run.code).toBe(2);
    expect(run.err).toContain(`would write to ${site} (private messages to ${BOT}): pass --allow-writes`);
    expect(forum.server.count()).toBe(0);
  });

  it('posts each question to the bot, scores its reply and cited links, deletes every message', async () => {
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--allow-writes'], { cwd, env: ENV });
    expect(run.code, run.err + run.out).toBe(0);
    const result = resultsOf(run);
    const creates = forum.server.requestsTo(CREATE);
    expect(creates.map((r) => (r.body as { raw: string }).raw).sort()).toEqual(CASES.map((c) => c.question).sort());
    expect(creates[0]!.body).toEqual({
      title: expect.stringMatching(/^ragaudit [0-9a-f]{8} \S+$/),
      raw: expect.any(String),
      target_recipients: BOT,
      archetype: 'private_message',
    });
    expect(creates[0]!.headers).toMatchObject({ 'api-key': KEY, 'api-username': USER });
    // Every message was deleted once its reply was read.
    expect([...forum.topics.values()].map((t) => t.deleted)).toEqual(CASES.map(() => true));
    expect(forum.server.requestsTo().filter((r) => r.method === 'DELETE')).toHaveLength(CASES.length);
    // Discourse answers a deletion with an empty body: a deletion, not a failure.
    expect(result.warnings.join('\n')).not.toContain('could not delete');
    expect(result.components.generator!.id).toBe(`target: discourse ${site} @${BOT}`);

    const cj = byId(result.cases, 'loake-vs-cj-price-gap');
    // The answer is the reply's text, not its HTML.
    expect(cj.answer).toMatch(/^Crockett & Jones costs more for the finish/);
    expect(cj.answer).not.toContain('<');
    // /t/a-topic/100/1 and /t/a-topic/100/3: posts 100001 and 100003, public and golden.
    expect(cj.citations).toEqual([
      { n: 1, valid: true, post_id: 100001, golden: true },
      { n: 2, valid: true, post_id: 100003, golden: true },
    ]);
    // A link to a post in the staff category is an invalid citation; its text never reaches the record.
    const binder = byId(result.cases, 'polished-binder-meaning');
    expect(binder.citations![1]).toMatchObject({ n: 2, valid: false, post_id: 901001 });
    expect(binder.citations![1]!.reason).toMatch(/not public/);
    expect(JSON.stringify(result)).not.toContain('STAFF-ONLY-7731-WELT');
    // The off-topic answer that asserts and cites is a hallucination; the abstention is not.
    expect(findScore(byId(result.cases, 'off-gazpacho-recipe').scores, 'offtopic_hallucination')?.value).toBe(1);
    expect(findScore(byId(result.cases, 'off-python-linked-list').scores, 'offtopic_hallucination')?.value).toBe(0);
    // The same answers and links as the JSON bot's (tests/target-http.test.ts): 4 valid of 7 sources.
    expect(result.summary.generation!.citation_validity).toEqual({ mean: 4 / 7, n: 7 });
    expect(result.summary.generation!.answers_with_invalid_citation).toEqual({ count: 3, n: 6 });

    for (const f of filesUnder(cwd)) expect(readFileSync(f, 'utf8'), f).not.toContain(KEY);
    expect(run.out + run.err).not.toContain(KEY);
  });

  it('compare sets a replay of the same cases beside the forum bot run', async () => {
    const bot = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--allow-writes'], { cwd, env: ENV });
    expect(bot.code, bot.err).toBe(0);
    writeFileSync(
      join(cwd, 'replay.yml'),
      config('replay', site)
        .replace(/^target:.*\n/m, '')
        .replace('generator: { concurrency: 1 }', 'generator: { provider: offline, model: extractive }'),
    );
    const replay = await runCli(['run', '--config', 'replay.yml', '--no-report'], { cwd, env: {} });
    expect(replay.code, replay.err).toBe(0);
    const cmp = await runCli(['compare', resultsOf(replay).file, resultsOf(bot).file, '--out', 'cmp'], {
      cwd,
      env: {},
    });
    expect(cmp.code, cmp.err + cmp.out).toBe(0);
    expect(cmp.out).toContain('6 of 6 baseline cases paired by id');
    // Each run at its own node: the replay's keyword channel, the bot's returned ranking.
    expect(cmp.out).toMatch(/^\S+(?: \(baseline\))?\s+posts\s+6\s+0\s/m);
    expect(cmp.out).toMatch(/^\S+\s+target\s+6\s+0\s/m);
    // The bot cites a staff-only post beside a valid one: 1/2, where the replay's citation was valid.
    expect(cmp.out).toMatch(/citation validity: .*polished-binder-meaning: 1 → 0\.500/);
  });

  it('a re-run writes nothing to the forum (response cache)', async () => {
    const before = forum.server.count(CREATE);
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--allow-writes'], { cwd, env: ENV });
    expect(run.code, run.err).toBe(0);
    expect(forum.server.count(CREATE)).toBe(before);
  });
});

describe('ragaudit run --target discourse:…: faults', { timeout: 180_000 }, () => {
  let forum: ReturnType<typeof discourseForum>;
  let close: () => Promise<void>;
  let site: string;
  let cwd: string;
  // One case at a time, in the cases' order: topic 5001 is the first case's message, 5002 the second's…
  const order = CASES.map((c) => c.id);
  const topicOf = (id: string) => 5001 + order.indexOf(id);

  beforeAll(async () => {
    const script: Record<string, BotReply> = {};
    forum = discourseForum({
      key: KEY,
      user: USER,
      bot: BOT,
      script,
      faults: {
        // The topic read hangs past the per-request deadline, twice (the first try and its retry).
        [topicOf('polished-binder-meaning')]: { read: [hang(), hang()] },
        // A proxy's page, then a body without a post stream: malformed twice.
        [topicOf('loake-country-of-manufacture')]: {
          read: [replyText('<html>502</html>', { contentType: 'text/html' }), status(200, { topic: 'x' })],
        },
        // The deletion fails (twice): the case stands, and the run says the message stayed.
        [topicOf('off-gazpacho-recipe')]: { delete: [status(500), status(500)] },
      },
    });
    ({ url: site, close } = await forum.server.start());
    Object.assign(script, cooked(site), { [Q['vamp-folds-too-long']!]: 'silent' });
    // A rate limit on the first message: waited out (Retry-After) and asked again.
    forum.server.enqueue(CREATE, status(429, { errors: ['slow down'] }, { 'retry-after': '0' }));
    cwd = workDir('target-discourse-faults');
    writeFileSync(join(cwd, 'cases.yml'), stringify(CASES));
    writeFileSync(
      join(cwd, 'ragaudit.yml'),
      config('forum-bot-faults', site, ', reply_timeout_ms: 300, timeout_ms: 400, retries: 1'),
    );
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it('a silent bot, a hung read and a malformed topic end their cases in error; every message is deleted', async () => {
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--allow-writes'], { cwd, env: ENV });
    expect(run.code, run.err).toBe(1);
    const result = resultsOf(run);
    // The 429 was retried: one more create than cases.
    expect(forum.server.count(CREATE)).toBe(CASES.length + 1);
    const error = (id: string) => byId(result.cases, id).error;
    expect(error('vamp-folds-too-long')).toEqual({
      stage: 'generation',
      message: expect.stringContaining(`no reply from ${BOT} within 300 ms`),
    });
    expect(error('polished-binder-meaning')!.message).toMatch(/timed out after 400 ms/);
    expect(error('loake-country-of-manufacture')!.message).toMatch(/malformed answer|invalid JSON/);
    expect(result.cases.filter((c) => c.status === 'error')).toHaveLength(3);
    // A timeout is an error, never an answer.
    expect(byId(result.cases, 'vamp-folds-too-long').answer).toBeUndefined();
    // Every message was deleted but the one whose deletion failed, and the run says so.
    const kept = [...forum.topics.entries()].filter(([, t]) => !t.deleted).map(([id]) => id);
    expect(kept).toEqual([topicOf('off-gazpacho-recipe')]);
    expect(byId(result.cases, 'off-gazpacho-recipe').status).toBe('ok');
    expect(result.warnings.join('\n')).toContain(
      `could not delete private message ${topicOf('off-gazpacho-recipe')} (case off-gazpacho-recipe)`,
    );
    for (const f of filesUnder(cwd)) expect(readFileSync(f, 'utf8'), f).not.toContain(KEY);
  });
});

describe('ragaudit run --target discourse:…: a conversation', { timeout: 180_000 }, () => {
  const FIRST = 'Is a Loake 1880 really that much worse than a Crockett & Jones, at nearly half the price?';
  const FINAL = 'Hang on, what is that second leather, the polished binder, exactly?';
  let forum: ReturnType<typeof discourseForum>;
  let close: () => Promise<void>;
  let cwd: string;

  beforeAll(async () => {
    const script: Record<string, BotReply> = {};
    forum = discourseForum({ key: KEY, user: USER, bot: BOT, script });
    let site: string;
    ({ url: site, close } = await forum.server.start());
    Object.assign(script, {
      [FIRST]: { cooked: '<p>Mostly finish; some lines use polished binder.</p>' },
      [FINAL]: { cooked: `<p>Corrected grain with a coating, see <a href="${site}/t/cj-vs-loake/100/6">here</a>.</p>` },
    });
    cwd = workDir('target-discourse-conv');
    const conv = {
      id: 'conv-binder',
      turns: [
        { role: 'user', content: FIRST },
        { role: 'assistant', content: 'The gap is mostly finish.' },
      ],
      question: FINAL,
      kind: 'in_domain',
      expected_topic_ids: [100],
      expected_post_ids: [100006],
      expected_content: ['corrected grain'],
      difficulty: 'medium',
      tags: ['conversation'],
    };
    writeFileSync(join(cwd, 'cases.yml'), stringify([conv]));
    writeFileSync(join(cwd, 'ragaudit.yml'), config('forum-bot-conv', site));
  });
  afterAll(async () => {
    await close?.();
    removeWorkDirs();
  });

  it("posts the user turns one by one in one message and scores the bot's reply to the last", async () => {
    const run = await runCli(['run', '--config', 'ragaudit.yml', '--no-report', '--allow-writes'], { cwd, env: ENV });
    expect(run.code, run.err + run.out).toBe(0);
    const creates = forum.server.requestsTo(CREATE).map((r) => r.body as Record<string, unknown>);
    // The first turn opens the message; the final question is a reply in it, after the bot's answer.
    expect(creates).toEqual([
      expect.objectContaining({ raw: FIRST, target_recipients: BOT, archetype: 'private_message' }),
      { topic_id: 5001, raw: FINAL },
    ]);
    const [c] = resultsOf(run).cases;
    expect(c!.answer).toBe('Corrected grain with a coating, see here.');
    expect(c!.citations).toEqual([{ n: 1, valid: true, post_id: 100006, golden: true }]);
    expect(forum.topics.get(5001)!.deleted).toBe(true);
  });
});

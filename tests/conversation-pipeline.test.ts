/**
 * Conversation cases through the pipeline (docs/conversations.md), on a three-topic forum written
 * here and searched by one keyword channel (a message shares a lexeme with a post or does not
 * find it), reranked by the offline lexical stand-in:
 * - the final question "How long does that usually last?" only makes sense after the history
 *   ("How do I get a mirror shine on my toe caps?"): alone (`conversation.query: last`) it finds
 *   only the resoling thread ("Usually four or five times…"), condensed it finds the mirror-shine
 *   thread at the rerank node, with the offline condenser and with a generator behind a local
 *   OpenAI-compatible server;
 * - the generator is sent the history as messages, in order, before the final question;
 * - a condensation that fails is the case's error record at stage `condense`, and the exit code says so;
 * - a user turn with goldens is retrieved and measured (`turn_retrieval`);
 * - single-turn cases keep their records as they were (no `retrieval_query`) and a run without a
 *   condensed conversation keeps its components.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseRecord, RunResult } from '../src/model/results.js';
import { OFFLINE_CONDENSER_ID } from '../src/wiring/condenser.js';
import { answerFor, chatSystem, removeWorkDirs, resultsOf, runCli, workDir } from './fixtures/audit/harness.js';
import { CHAT, MODELS, chatCompletion, modelList, type ChatRequestBody } from './servers/openai-server.js';
import { ProviderServer, reply, status, type RecordedRequest } from './servers/provider-server.js';
import { OpenAIBatchServer } from './servers/openai-batch-server.js';

const CATEGORIES = `- { id: 1, name: Care, slug: care }\n`;
// No word of one topic's posts appears in another's, apart from "usually" (103), which the
// final question shares with the resoling thread only.
const TOPICS = `- id: 101
  title: Reviving faded suede
  category: care
  posts:
    - { n: 1, user: ann, raw: "My suede chukkas faded in the sun. Any way to bring the colour back?" }
    - { n: 2, user: bob, reply_to: 1, raw: "A suede renovator spray in the matching colour, then a brass brush once dry." }
- id: 102
  title: Mirror shine with wax
  category: care
  posts:
    - { n: 1, user: cat, raw: "How do you get a mirror shine on the toe caps?" }
    - { n: 2, user: bob, reply_to: 1, raw: "Thin layers of hard wax with a drop of water, small circles, twenty minutes per toe." }
- id: 103
  title: Resoling Goodyear welted boots
  category: care
  posts:
    - { n: 1, user: dan, raw: "How many times can a Goodyear welted boot be resoled?" }
    - { n: 2, user: bob, reply_to: 1, raw: "Usually four or five times before the welt itself needs replacing." }
`;

const SHINE_FIRST = 'How do I get a mirror shine on my toe caps?';
const SHINE_FINAL = 'How long does that usually last?';
const SHINE_ANSWER = 'Thin layers of hard wax with a drop of water, in small circles.';
const RESOLE = 'How many times can a Goodyear welted boot be resoled?';
const SUEDE = 'My suede faded in the sun, what now?';
const CASES = `- id: shine-how-long
  question: "${SHINE_FINAL}"
  expected_topic_ids: [102]
  turns:
    - role: user
      content: "${SHINE_FIRST}"
      expected_topic_ids: [102]
    - role: assistant
      content: "${SHINE_ANSWER}"
- id: resole-then-suede
  question: "Which brush after the spray?"
  needs_history: false
  expected_topic_ids: [101]
  turns:
    - { role: user, content: "${RESOLE}" }
    - { role: assistant, content: "Usually four or five times." }
    - { role: user, content: "${SUEDE}", expected_topic_ids: [101] }
    - { role: assistant, content: "A renovator spray in the matching colour." }
- id: resole-single
  question: "${RESOLE}"
  expected_topic_ids: [103]
`;

/** A config over the forum above; `extra` is appended (conversation block, generator). */
function config(dir: string, name: string, extra: string): string {
  const file = join(dir, `${name}.yml`);
  writeFileSync(
    file,
    `name: ${name}
database: { demo_forum: forum }
cases: [cases.yml]
retrieval:
  top_k: 10
  channels:
    - { name: keyword, kind: keyword, grain: post }
rerank: { node: keyword, candidates: 10, provider: offline, model: lexical }
judge: { provider: none }
output_dir: out
cache_dir: cache
${extra}
`,
  );
  return file;
}

const OFFLINE_GEN = 'generator: { provider: offline, model: extractive }';
const REMOTE_GEN =
  'generator: { provider: openai, model: gen-model, base_url: "${GEN_URL}", retries: 1, concurrency: 1 }';

const byId = (r: RunResult): Record<string, CaseRecord> => Object.fromEntries(r.cases.map((c) => [c.id, c]));
const isCondense = (req: RecordedRequest) => chatSystem(req).startsWith("You rewrite a forum member's latest message");
const body = (req: RecordedRequest) => req.body as ChatRequestBody;
const lastUser = (req: RecordedRequest) => body(req).messages.at(-1)!.content;

/** The condensed question the fake generator writes for the shine conversation; other messages stand alone. */
const CONDENSED = 'How long does a mirror shine on toe caps usually last?';
function generatorServer(opts: { failCondense?: string } = {}): ProviderServer {
  return new ProviderServer()
    .on(MODELS, () => reply(modelList(['gen-model'])))
    .on(CHAT, (req) => {
      if (isCondense(req)) {
        const message = lastUser(req);
        if (message === opts.failCondense) return status(500, { error: { message: 'boom', type: 'server_error' } });
        return reply(chatCompletion(message === SHINE_FINAL ? `  ${CONDENSED}\n` : message, { promptTokens: 50 }));
      }
      return reply(chatCompletion(answerFor(chatSystem(req))));
    });
}

afterAll(() => removeWorkDirs());

describe('conversation cases', { timeout: 240_000 }, () => {
  let dir: string;
  beforeAll(() => {
    dir = workDir('conversation');
    mkdirSync(join(dir, 'forum'));
    writeFileSync(join(dir, 'forum', 'categories.yml'), CATEGORIES);
    writeFileSync(join(dir, 'forum', 'topics.yml'), TOPICS);
    writeFileSync(join(dir, 'cases.yml'), CASES);
  });

  const run = async (argv: string[], env: Record<string, string> = {}) => {
    const out = await runCli([...argv, '--no-report'], { cwd: dir, env });
    return { ...out, result: resultsOf(out) };
  };

  describe('offline generator: last against condensed', () => {
    let last: RunResult;
    let condensed: RunResult;
    let lastCode: number;
    beforeAll(async () => {
      const a = await run([
        'run',
        '--config',
        config(dir, 'conv-last', `${OFFLINE_GEN}\nconversation: { query: last }`),
      ]);
      const b = await run(['run', '--config', config(dir, 'conv-condensed', OFFLINE_GEN)]);
      expect([a.code, b.code], `${a.err}\n${b.err}`).toEqual([0, 0]);
      [last, condensed, lastCode] = [a.result, b.result, a.code];
    });

    it('the final question alone misses the golden at the rerank node; condensed with the history it is first', () => {
      const l = byId(last)['shine-how-long']!;
      expect(l.retrieval_query).toEqual({ mode: 'last', text: SHINE_FINAL });
      expect(l.retrieval.rerank!.items.map((i) => i.topic_id)).toEqual([103]);
      expect(l.retrieval.rerank!.metrics.hit_at_10).toBe(0);

      const c = byId(condensed)['shine-how-long']!;
      expect(c.retrieval_query).toEqual({
        mode: 'condensed',
        text: `${SHINE_FIRST} ${SHINE_FINAL}`,
        by: OFFLINE_CONDENSER_ID,
        latency_ms: 0,
      });
      expect(c.retrieval.rerank!.items[0]!.topic_id).toBe(102);
      expect(c.retrieval.rerank!.metrics.hit_at_1).toBe(1);
      expect(c.sources!.map((s) => s.topic_id)).toContain(102);
      expect(lastCode).toBe(0);
    });

    it('records keep the history and whether it is needed; single-turn records carry no retrieval query', () => {
      const c = byId(condensed);
      expect(c['shine-how-long']!.needs_history).toBe(true);
      expect(c['resole-then-suede']!.needs_history).toBe(false);
      expect(c['resole-then-suede']!.turns!.map((t) => t.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
      for (const r of [last, condensed]) {
        const single = byId(r)['resole-single']!;
        expect(Object.keys(single)).not.toContain('retrieval_query');
        expect(Object.keys(single)).not.toContain('turns');
        expect(Object.keys(single)).not.toContain('turn_retrieval');
      }
      // The single-turn case's record is the same in both runs, apart from its latencies (and the second run's cache hit).
      const strip = (r: CaseRecord) =>
        JSON.parse(JSON.stringify(r, (k, v: unknown) => (k === 'latency_ms' || k === 'cached' ? undefined : v)));
      expect(strip(byId(last)['resole-single']!)).toEqual(strip(byId(condensed)['resole-single']!));
    });

    it('the offline condenser is a labelled component of the condensed run only', () => {
      expect(condensed.components.condenser).toEqual({
        id: OFFLINE_CONDENSER_ID,
        offline: true,
        label: `${OFFLINE_CONDENSER_ID} (offline condenser: joins the conversation's user turns to the final question; not a language model)`,
      });
      expect(Object.keys(last.components)).not.toContain('condenser');
    });

    it('a user turn with goldens is retrieved with the history before it and measured', () => {
      // Turn 0 has no history: searched as written. Its words are found only in topic 102's two
      // posts, so at the keyword node every item is topic 102: first rank 1, one topic in the top 5.
      const shine = byId(condensed)['shine-how-long']!.turn_retrieval!;
      expect(shine.map((t) => [t.turn, t.query])).toEqual([[0, { mode: 'last', text: SHINE_FIRST }]]);
      expect(shine[0]!.metrics.keyword).toMatchObject({
        hit_at_1: 1,
        hit_at_10: 1,
        mrr_at_10: 1,
        first_topic_rank: 1,
        pollution_topics_at_5: 1,
        pollution_dominant_share_at_5: 1,
        post_hit_at_5: null,
        content_recall_at_5: null,
      });
      // Turn 2 is condensed from the two messages before it: the user's earlier message and itself.
      const later = byId(condensed)['resole-then-suede']!.turn_retrieval!;
      expect(later.map((t) => [t.turn, t.query.mode, t.query.text])).toEqual([[2, 'condensed', `${RESOLE} ${SUEDE}`]]);
      // Found: topic 101 shares suede/faded/sun with the message; 103 shares the resoling words.
      const topics = new Set(byId(condensed)['resole-then-suede']!.retrieval.keyword!.items.map((i) => i.topic_id));
      expect(topics.has(101)).toBe(true);
      expect(later[0]!.metrics.keyword!.hit_at_10).toBe(1);
      expect(later[0]!.metrics.rerank!.hit_at_10).toBe(1);
      // With `last`, the same turn is searched alone.
      expect(byId(last)['resole-then-suede']!.turn_retrieval!.map((t) => t.query)).toEqual([
        { mode: 'last', text: SUEDE },
      ]);
    });

    it('the retrieval command condenses the same way and measures the same turns', async () => {
      const r = await run(['retrieval', '--config', config(dir, 'conv-retrieval', OFFLINE_GEN)]);
      expect(r.code, r.err).toBe(0);
      const c = byId(r.result);
      expect(c['shine-how-long']!.retrieval_query).toEqual(byId(condensed)['shine-how-long']!.retrieval_query);
      expect(c['shine-how-long']!.retrieval.rerank!.items.map((i) => i.post_id)).toEqual(
        byId(condensed)['shine-how-long']!.retrieval.rerank!.items.map((i) => i.post_id),
      );
      expect(c['resole-then-suede']!.turn_retrieval).toEqual(byId(condensed)['resole-then-suede']!.turn_retrieval);
      expect(r.result.components.condenser?.offline).toBe(true);
      expect(Object.keys(c['resole-single']!)).not.toContain('retrieval_query');
    });
  });

  describe('a generator behind an OpenAI-compatible server', () => {
    const server = generatorServer();
    let result: RunResult & { file: string };
    let code: number;
    let url: string;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ url, close } = await server.start());
      const r = await run(['run', '--config', config(dir, 'conv-remote', REMOTE_GEN)], { GEN_URL: `${url}/v1` });
      [result, code] = [r.result, r.code];
      expect(code, r.err).toBe(0);
    });
    afterAll(() => close?.());

    it('is asked to condense with the condense prompt and the history, and its question is searched', () => {
      const asked = server.requestsTo(CHAT).filter(isCondense);
      const shine = asked.find((req) => lastUser(req) === SHINE_FINAL)!;
      expect(shine).toBeDefined();
      const sys = chatSystem(shine);
      expect(sys).toContain(`Member: ${SHINE_FIRST}`);
      expect(sys).toContain(`Assistant: ${SHINE_ANSWER}`);
      expect(sys.indexOf(SHINE_FIRST)).toBeLessThan(sys.indexOf(SHINE_ANSWER));
      expect(body(shine).messages.map((m) => m.role)).toEqual(['system', 'user']);
      expect(body(shine).temperature).toBe(0);
      // One condensation per conversation's final question and one per measured turn with history.
      expect(asked.map(lastUser).sort()).toEqual(['Which brush after the spray?', SHINE_FINAL, SUEDE].sort());

      const rec = byId(result)['shine-how-long']!;
      expect(rec.retrieval_query).toMatchObject({
        mode: 'condensed',
        text: CONDENSED,
        by: 'openai:gen-model',
        prompt_version: '1',
        usage: { input_tokens: 50 },
      });
      expect(rec.retrieval.rerank!.items[0]!.topic_id).toBe(102);
      expect(result.components.condenser).toEqual({
        id: 'openai:gen-model',
        offline: false,
        label: 'openai:gen-model (the generator, prompt condense v1)',
      });
    });

    it('generation is sent the history as messages, in order, before the final question', () => {
      const gen = server.requestsTo(CHAT).filter((r) => !isCondense(r));
      expect(gen).toHaveLength(3);
      const conv = gen.find((r) => lastUser(r) === 'Which brush after the spray?')!;
      expect(body(conv).messages.slice(1)).toEqual([
        { role: 'user', content: RESOLE },
        { role: 'assistant', content: 'Usually four or five times.' },
        { role: 'user', content: SUEDE },
        { role: 'assistant', content: 'A renovator spray in the matching colour.' },
        { role: 'user', content: 'Which brush after the spray?' },
      ]);
      expect(body(conv).messages[0]!.role).toBe('system');
      const single = gen.find((r) => lastUser(r) === RESOLE)!;
      expect(body(single).messages.map((m) => m.role)).toEqual(['system', 'user']);
    });

    it('a second run answers the condensations from the response cache', async () => {
      server.requests.length = 0;
      const again = await run(['run', '--config', config(dir, 'conv-remote-2', REMOTE_GEN)], { GEN_URL: `${url}/v1` });
      expect(again.code, again.err).toBe(0);
      expect(server.requestsTo(CHAT)).toHaveLength(0);
      expect(byId(again.result)['shine-how-long']!.retrieval_query).toMatchObject({ text: CONDENSED, cached: true });
    });

    it('calibrate --answer generates a conversation again with its history and the same condensed query', async () => {
      server.requests.length = 0;
      const file = join(dir, 'conv-remote.yml');
      const base = result.file;
      const code = await runCli(
        ['calibrate', base, '--answer', '--candidates=50:60', '--config', file, '--out', join(dir, 'ab')],
        { cwd: dir, env: { GEN_URL: `${url}/v1` } },
      );
      expect(code.code, code.err).toBe(0);
      // Every case moves to the empty zone (abstain below 50) and is generated again; the
      // condensation comes from the response cache, so only answers are asked.
      const asked = server.requestsTo(CHAT);
      expect(asked.filter(isCondense)).toHaveLength(0);
      const shine = asked.find((r) => lastUser(r) === SHINE_FINAL)!;
      expect(body(shine).messages.slice(1)).toEqual([
        { role: 'user', content: SHINE_FIRST },
        { role: 'assistant', content: SHINE_ANSWER },
        { role: 'user', content: SHINE_FINAL },
      ]);
      expect(chatSystem(shine)).toContain('No forum excerpt was found');
    });
  });

  describe('a condensation that fails', () => {
    const server = generatorServer({ failCondense: SHINE_FINAL });
    let url: string;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ url, close } = await server.start());
    });
    afterAll(() => close?.());

    it('ends the case as an error record at stage condense (after the retries) and the run exits 1', async () => {
      const r = await run(['run', '--config', config(dir, 'conv-failing', REMOTE_GEN)], { GEN_URL: `${url}/v1` });
      expect(r.code, r.err).toBe(1);
      const rec = byId(r.result)['shine-how-long']!;
      expect(rec.status).toBe('error');
      expect(rec.error!.stage).toBe('condense');
      expect(rec.error!.message).toMatch(/500/);
      expect(rec.retrieval_query).toBeUndefined();
      expect(rec.answer).toBeUndefined();
      // The first attempt and one retry (retries: 1); the case was never retrieved nor generated.
      const asked = server.requestsTo(CHAT);
      expect(asked.filter((q) => isCondense(q) && lastUser(q) === SHINE_FINAL)).toHaveLength(2);
      expect(asked.filter((q) => !isCondense(q) && lastUser(q) === SHINE_FINAL)).toHaveLength(0);
      expect(byId(r.result)['resole-single']!.status).toBe('ok');
      expect(byId(r.result)['resole-then-suede']!.status).toBe('ok');
    });

    it('an empty answer is a condense error too, never the final message alone', async () => {
      const empty = new ProviderServer()
        .on(MODELS, () => reply(modelList(['gen-model'])))
        .on(CHAT, (req) =>
          reply(
            chatCompletion(
              isCondense(req) ? (lastUser(req) === SHINE_FINAL ? '   \n ' : lastUser(req)) : answerFor(chatSystem(req)),
            ),
          ),
        );
      const { url: emptyUrl, close: closeEmpty } = await empty.start();
      try {
        const r = await run(['retrieval', '--config', config(dir, 'conv-empty', REMOTE_GEN)], {
          GEN_URL: `${emptyUrl}/v1`,
        });
        expect(r.code, r.err).toBe(1);
        const rec = byId(r.result)['shine-how-long']!;
        expect([rec.status, rec.error?.stage]).toEqual(['error', 'condense']);
        expect(rec.error!.message).toMatch(/empty answer/);
        expect(byId(r.result)['resole-then-suede']!.status).toBe('ok');
      } finally {
        await closeEmpty();
      }
    });
  });

  describe('batch mode', () => {
    it("a conversation's condensations go up in a generator batch before the one holding its answer", async () => {
      const server = new OpenAIBatchServer({
        answer: (b) => {
          const system = b.messages.find((m) => m.role === 'system')?.content ?? '';
          const message = b.messages.at(-1)!.content;
          if (system.startsWith("You rewrite a forum member's latest message"))
            return message === SHINE_FINAL ? CONDENSED : message;
          return answerFor(system);
        },
      });
      server.on(MODELS, () => reply(modelList(['gen-model'])));
      const { url, close } = await server.start();
      try {
        const r = await run(
          [
            'run',
            '--batch',
            '--config',
            config(dir, 'conv-batch', `${REMOTE_GEN}\nbatch: { poll_min_ms: 5, poll_max_ms: 20 }`),
          ],
          { GEN_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-test-conversation-batch-0123' },
        );
        expect(r.code, r.err).toBe(0);
        const rec = byId(r.result);
        expect(rec['shine-how-long']!.retrieval_query).toMatchObject({ mode: 'condensed', text: CONDENSED });
        expect(rec['shine-how-long']!.retrieval.rerank!.items[0]!.topic_id).toBe(102);
        expect(r.result.components.generator!.label).toBe('openai:gen-model (batch API)');
        // Each request went up once, and a conversation's condensations in a batch before its answer's.
        const lines = server.uploads.flatMap((u, batch) =>
          u.lines.map((l) => {
            const system = l.body.messages.find((m) => m.role === 'system')?.content ?? '';
            const kind = system.startsWith("You rewrite a forum member's latest message") ? 'condense' : 'answer';
            return { batch, what: `${kind} ${l.body.messages.at(-1)!.content}`, line: l };
          }),
        );
        expect(lines.map((l) => l.what).sort()).toEqual(
          [
            `answer ${RESOLE}`,
            `answer ${SHINE_FINAL}`,
            'answer Which brush after the spray?',
            `condense ${SHINE_FINAL}`,
            `condense ${SUEDE}`,
            'condense Which brush after the spray?',
          ].sort(),
        );
        const batchOf = (what: string) => lines.find((l) => l.what === what)!.batch;
        expect(batchOf(`condense ${SHINE_FINAL}`)).toBeLessThan(batchOf(`answer ${SHINE_FINAL}`));
        expect(batchOf(`condense ${SUEDE}`)).toBe(batchOf('condense Which brush after the spray?'));
        expect(batchOf(`condense ${SUEDE}`)).toBeLessThan(batchOf('answer Which brush after the spray?'));
        const answer = lines.find((l) => l.what === `answer ${SHINE_FINAL}`)!.line;
        expect(answer.body.messages.slice(1)).toEqual([
          { role: 'user', content: SHINE_FIRST },
          { role: 'assistant', content: SHINE_ANSWER },
          { role: 'user', content: SHINE_FINAL },
        ]);
      } finally {
        await close();
      }
    });
  });
});

/**
 * `ragaudit run` end to end on the embedded demo forum, with the generator and the cross-encoder
 * behind local servers that speak the real wire formats (OpenAI chat completions, Anthropic
 * messages, TEI /rerank): what the model receives is the rendered evidence block of the case's
 * zone, and TEI gets raw scores in batches it accepts.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemPrompt } from '../src/evidence/block.js';
import { PROMPTS_DIR } from '../src/paths.js';
import type { CaseRecord, RunResult } from '../src/model/results.js';
import { MESSAGES, type MessagesRequestBody } from './servers/anthropic-server.js';
import { CHAT, type ChatRequestBody } from './servers/openai-server.js';
import type { ProviderServer } from './servers/provider-server.js';
import { PREFLIGHT_QUERY } from '../src/rerank/http-rerankers.js';
import { rerankServer, TEI_RERANK } from './servers/rerank-server.js';
import {
  answerFor,
  CASES,
  caseOf,
  chatQuestion,
  chatServer,
  chatSystem,
  CTA,
  FIXTURES,
  messagesServer,
  PLANNED_ZONE,
  removeWorkDirs,
  resultsOf,
  runCli,
  startAll,
  workDir,
  zoneScore,
  type CliRun,
} from './fixtures/audit/harness.js';

const CONFIG = join(FIXTURES, 'demo-remote.yml');
const KEY = 'sk-test-wire-0123456789abcdef';
const TEMPLATE_TEXT = {
  normal: [
    'Forum excerpts relevant to the question:',
    "Answer the member's question from these excerpts, citing them as [[n]].",
  ],
  weak: [
    '(WEAK EVIDENCE: none of them may really answer it)',
    'point to that closest thread with caution',
    'Invite the member to post the question on the forum',
  ],
  empty: ['No forum excerpt was found for this question.', 'do not answer from general knowledge, cite nothing'],
} as const;

/** The system prompt the runner should have rendered for a record (persona + its zone's block). */
function expectedSystem(r: CaseRecord): string {
  return systemPrompt({
    promptsDir: PROMPTS_DIR,
    persona: 'persona',
    zone: r.zone!,
    sources: r.sources ?? [],
    cta: CTA,
    forumName: 'The Last & Welt',
    clauses: [],
  }).text;
}

/** The evidence checks shared by both generators: `system` is what the server received for `r`. */
function checkEvidence(r: CaseRecord, system: string, tei: ProviderServer): void {
  expect(r.zone).toBe(PLANNED_ZONE[r.id]);
  for (const text of TEMPLATE_TEXT[r.zone!]) expect(system).toContain(text);
  for (const other of (['normal', 'weak', 'empty'] as const).filter((z) => z !== r.zone))
    expect(system).not.toContain(TEMPLATE_TEXT[other][0]);
  expect(system).toContain(CTA);
  expect(system).toBe(expectedSystem(r));
  // The top source is the passage TEI scored best for this question.
  const scored = tei.requestsTo(TEI_RERANK).filter((q) => (q.body as { query: string }).query === r.question);
  const best = Math.max(
    ...scored.flatMap((q) => (q.body as { texts: string[] }).texts.map((t) => zoneScore(r.question, t))),
  );
  expect(r.top1_score).toBeCloseTo(best, 9);
  if (r.zone === 'empty') {
    expect(r.sources).toEqual([]);
    expect(system).not.toContain('[[1]]');
    return;
  }
  const top = r.sources![0]!;
  expect(top.url).toMatch(new RegExp(`^https://forum\\.example/t/[a-z0-9-]+/${top.topic_id}/${top.post_number}$`));
  expect(system).toContain(`[[1]] ${top.title} — ${top.url}\n${top.excerpt}`);
  const bestTexts = scored
    .flatMap((q) => (q.body as { texts: string[] }).texts)
    .filter((t) => zoneScore(r.question, t) === best);
  expect(bestTexts.some((t) => t.startsWith(`${top.title}. `))).toBe(true);
  expect(system).toContain(`[[${r.sources!.length}]] `);
  expect(system).not.toContain(`[[${r.sources!.length + 1}]] `);
}

afterAll(removeWorkDirs);

describe('ragaudit run: openai:test-model and TEI over HTTP', { timeout: 120_000 }, () => {
  const chat = chatServer();
  const tei = rerankServer({ maxBatch: 8, score: zoneScore });
  let close: () => Promise<void>;
  let run: CliRun;
  let result: RunResult;
  beforeAll(async () => {
    const started = await startAll(chat, tei);
    close = started.close;
    const [llm, rr] = started.urls;
    const env = {
      GEN_PROVIDER: 'openai',
      GEN_MODEL: 'test-model',
      GEN_URL: `${llm}/v1`,
      RERANK_URL: rr!,
      OPENAI_API_KEY: KEY,
    };
    run = await runCli(['run', '--config', CONFIG], { cwd: workDir('wire-openai'), env });
    result = resultsOf(run);
  });
  afterAll(async () => close?.());

  it('completes every case with exit code 0 and labels the remote components', () => {
    expect(run.code, run.err).toBe(0);
    expect(result.cases.map((c) => [c.id, c.status])).toEqual(CASES.map((c) => [c.id, 'ok']));
    expect(result.components.generator).toEqual({
      id: 'openai:test-model',
      offline: false,
      label: 'openai:test-model',
    });
    expect(result.components.reranker!.offline).toBe(false);
    expect(run.out).toMatch(/cases 6 · ok 6 · gated 0 · errors 0/);
  });

  it('sends each question once, with the rendered evidence block of its zone as the system message', () => {
    const requests = chat.requestsTo(CHAT);
    expect(requests).toHaveLength(CASES.length);
    for (const req of requests) {
      const body = req.body as ChatRequestBody;
      expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(body).toMatchObject({ model: 'test-model', temperature: 0, max_tokens: 700 });
      expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
      const record = result.cases.find((c) => c.question === chatQuestion(req))!;
      checkEvidence(record, chatSystem(req), tei);
      expect(record.answer).toBe(answerFor(chatSystem(req)));
    }
    expect(new Set(requests.map(chatQuestion)).size).toBe(CASES.length);
  });

  it('scores the answers: citations checked against the sources, CTA, tokens', () => {
    for (const r of result.cases) {
      expect(r.usage).toEqual({
        input_tokens: expectedSystem(r).length,
        output_tokens: r.answer!.split(/\s+/).filter(Boolean).length,
      });
      expect(r.scores.find((s) => s.name === 'cta')?.value).toBe(1);
      const cited = r.zone === 'normal' ? [1, 2] : r.zone === 'weak' ? [1] : [];
      expect(r.citations!.map((c) => [c.n, c.valid])).toEqual(cited.map((n) => [n, true]));
    }
  });

  it('sends TEI raw scores, in batches no larger than the server accepts', () => {
    const all = tei.requestsTo(TEI_RERANK);
    // One preflight request before the first case, then the cases' own.
    expect(all.filter((q) => (q.body as { query: string }).query === PREFLIGHT_QUERY)).toHaveLength(1);
    const calls = all.filter((q) => (q.body as { query: string }).query !== PREFLIGHT_QUERY);
    expect(calls.length).toBeGreaterThanOrEqual(CASES.length);
    for (const c of calls) {
      const body = c.body as { query: string; texts: string[]; raw_scores: boolean };
      expect(body.raw_scores).toBe(true);
      expect(body.texts.length).toBeGreaterThan(0);
      expect(body.texts.length).toBeLessThanOrEqual(8);
      caseOf(body.query);
    }
    // 25 candidates in batches of 8: four requests per question, none refused; twice over, since
    // a run of no more than 16 questions times each again on the per-query path (the latency sample).
    expect(CASES.length).toBeLessThanOrEqual(16);
    for (const c of CASES)
      expect(calls.filter((q) => (q.body as { query: string }).query === c.question)).toHaveLength(8);
  });
});

describe('ragaudit run: anthropic:claude-test over HTTP', { timeout: 120_000 }, () => {
  it('sends the same evidence block through the messages API; TEI 413s shrink the batch', async () => {
    const msgs = messagesServer();
    const tei = rerankServer({ maxBatch: 5, score: zoneScore });
    const { urls, close } = await startAll(msgs, tei);
    try {
      const env = {
        GEN_PROVIDER: 'anthropic',
        GEN_MODEL: 'claude-test',
        GEN_URL: urls[0]!,
        RERANK_URL: urls[1]!,
        ANTHROPIC_API_KEY: 'sk-ant-test-0123456789',
      };
      const run = await runCli(['run', '--config', CONFIG], { cwd: workDir('wire-anthropic'), env });
      expect(run.code, run.err).toBe(0);
      const result = resultsOf(run);
      expect(result.components.generator!.id).toBe('anthropic:claude-test');
      const requests = msgs.requestsTo(MESSAGES);
      expect(requests).toHaveLength(CASES.length);
      for (const req of requests) {
        const body = req.body as MessagesRequestBody;
        // The SDK sends the key as x-api-key or as a Bearer token, depending on its version.
        expect(`${req.headers['x-api-key'] ?? ''} ${req.headers.authorization ?? ''}`).toContain(
          'sk-ant-test-0123456789',
        );
        expect(body).toMatchObject({ model: 'claude-test', max_tokens: 700, temperature: 0 });
        expect(body.messages).toHaveLength(1);
        const record = result.cases.find((c) => c.question === (body.messages[0]!.content as string))!;
        expect(record.status).toBe('ok');
        checkEvidence(record, String(body.system), tei);
        expect(record.answer).toBe(answerFor(String(body.system)));
      }
      // Config max_batch 8 > the server's 5: a 413 (one per case in flight at most), then batches of 4 for good.
      const calls = tei.requestsTo(TEI_RERANK).map((c) => c.body as { texts: string[]; raw_scores: boolean });
      const refused = calls.filter((b) => b.texts.length > 5).length;
      expect(refused).toBeGreaterThanOrEqual(1);
      expect(refused).toBeLessThanOrEqual(2);
      expect(calls.filter((b) => b.texts.length <= 5).every((b) => b.texts.length <= 4)).toBe(true);
      expect(calls.every((b) => b.raw_scores)).toBe(true);
    } finally {
      await close();
    }
  });
});

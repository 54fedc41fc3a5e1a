/**
 * A large `run` keeps figure records in memory (src/store/case-store.ts): every field its summaries
 * and digests read, without the bulk. The summaries and digests made from them are those of the
 * full records, byte for byte: checked here record by record (with judge errors, repeats,
 * contradicted claims, probes, errors), and through a whole run written in format 2 with the
 * large-run threshold set low (its summary recomputed from the full records in its results file).
 */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { writeHtmlReport, reportBeside } from '../src/app/report.js';
import { writeArtifactStream } from '../src/io/artifacts.js';
import { appendLine, LineReader } from '../src/io/jsonl.js';
import { probeMarkdown } from '../src/app/probe.js';
import { loadCases } from '../src/cases/load.js';
import { loadConfig } from '../src/config/load.js';
import { summariseJudge } from '../src/summary/judge-summary.js';
import type { CaseRecord, RunResult } from '../src/model/results.js';
import { isScore, type ScoreRecord } from '../src/model/scores.js';
import { retrievalMarkdown } from '../src/reports/digest.js';
import { generationMarkdown } from '../src/reports/generation-digest.js';
import { reportHtml } from '../src/reports/html.js';
import { judgeMarkdown } from '../src/reports/judge-digest.js';
import { evidenceNode } from '../src/runs/audit-case.js';
import { runAudit } from '../src/runs/audit-run.js';
import { buildAuditSetup } from '../src/wiring/audit-setup.js';
import { FigureRecords, LARGE_RUN_CASES, LightRecords } from '../src/store/case-store.js';
import { casePaths, createRunContext } from '../src/wiring/context.js';
import { storedEvidenceNode, summariseCaseSets, summariseGeneration } from '../src/summary/generation-summary.js';
import { summariseProbes } from '../src/summary/probe-summary.js';
import { openResults, readResults, writeResults } from '../src/store/results-file.js';
import { LATENCY_SAMPLE } from '../src/runs/retrieval-feed.js';
import { sampleLatency, summariseRetrieval } from '../src/summary/retrieval-summary.js';
import { REPO, removeWorkDirs, workDir } from './fixtures/audit/harness.js';

// The whole-run test runs a few dozen cases as a large run: the threshold is read through this.
const threshold = vi.hoisted(() => ({ cases: 5000 }));
vi.mock('../src/store/case-store.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/store/case-store.js')>();
  return {
    ...actual,
    get LARGE_RUN_CASES() {
      return threshold.cases;
    },
  };
});

afterAll(() => removeWorkDirs());

const REFERENCE = join(import.meta.dirname, '..', 'results', 'reference');
const RUN = join(REFERENCE, '20261204-233647-demo.json');
const WEAK = join(REFERENCE, '20261204-233650-demo-weak1.json');
const PROBES = join(REFERENCE, '20261204-233654-demo-probes.json');

/** The same bytes and the same values (key order included). */
const same = (a: unknown, b: unknown) => expect(JSON.stringify(a)).toBe(JSON.stringify(b));

const tokens = (i: number) => ({ input: 100 + i, output: 20 + (i % 7) });

/**
 * The reference run's records, and copies of them changed into what the reference lacks: judge
 * errors, repeats (agreeing and not), contradicted claims, judge tokens, errors at the judge and
 * generation stages, gated cases, a score under a name the model does not list, long answers.
 */
function varied(): CaseRecord[] {
  const base = [...readResults(RUN).cases, ...readResults(WEAK).cases];
  const out: CaseRecord[] = structuredClone(base);
  base.forEach((r, i) => {
    const c: CaseRecord = { ...structuredClone(r), id: `${r.id}-v${i}` };
    const scores: ScoreRecord[] = c.scores.map((s): ScoreRecord => {
      if (isScore(s, 'faithfulness') && s.details) {
        const claims = s.details.claims.map((x, k) => (k % 2 === i % 2 ? { ...x, label: 'contradicted' as const } : x));
        return {
          ...s,
          details: {
            ...s.details,
            claims,
            tokens: tokens(i),
            ...(i % 3 === 0 ? { repeats: [s.value, i % 2 ? s.value : 0.5, null] } : {}),
            ...(i % 3 === 1 ? { repeats: [s.value, s.value] } : {}),
          },
        };
      }
      if (isScore(s, 'judge_stance') && s.details)
        return {
          ...s,
          details: {
            ...s.details,
            asserts_unsupported_facts: i % 4 === 0,
            tokens: tokens(i + 1),
            ...(i % 3 === 0 ? { repeats: [s.details.stance, i % 2 ? 'hedged' : s.details.stance] } : {}),
          },
        };
      if (isScore(s, 'citation_relevance') && s.details)
        return { ...s, details: { ...s.details, tokens: tokens(i + 2), ...(i % 5 === 0 ? { repeats: [1, 0] } : {}) } };
      return s;
    });
    if (i % 7 === 0) {
      // The stance verdict failed: a judge_error instead of judge_stance.
      const at = scores.findIndex((s) => s.name === 'judge_stance');
      if (at >= 0)
        scores.splice(at, 1, {
          name: 'judge_error',
          value: null,
          reason: 'the judge answered out of schema',
          details: { judge: 'stance', tokens: tokens(i) },
        });
    }
    scores.push({ name: 'custom_metric', value: (i % 4) / 4, reason: `custom ${i}` });
    c.scores = scores;
    if (c.answer !== undefined) c.answer = `${'é'.repeat(i % 3)}${c.answer} ${'long answer '.repeat(40)}👞`;
    if (i % 11 === 0) Object.assign(c, { status: 'error', error: { stage: 'judge', message: `judge failed ${i}` } });
    if (i % 13 === 0) {
      delete c.answer;
      Object.assign(c, { status: 'error', error: { stage: 'generation', message: 'timeout' }, scores: [] });
    }
    if (i % 17 === 0) {
      delete c.answer;
      Object.assign(c, { status: 'gated', gate: { intent: 'greeting', pattern: 'hello' }, scores: [] });
    }
    out.push(c);
  });
  return out;
}

function probeRecords(): CaseRecord[] {
  return readResults(PROBES).cases.map((r, i) => ({
    ...r,
    scores: [
      ...r.scores,
      ...(i % 2
        ? [
            {
              name: 'judge_safety' as const,
              value: i % 4 === 1 ? 1 : 0,
              reason: 'x',
              details: {
                verdict: i % 4 === 1 ? ('refused' as const) : ('leaked' as const),
                expect: 'refuse',
                tokens: tokens(i),
              },
            },
          ]
        : []),
    ],
  }));
}

describe('figure records', () => {
  it('give every summary of the full records, byte for byte', () => {
    const run = readResults(RUN);
    const full = varied();
    const figures = new FigureRecords();
    const kept = full.map((r) => figures.of(structuredClone(r)));
    const nodes = run.nodes.map((n) => n.name);
    same(summariseRetrieval(kept, nodes), summariseRetrieval(full, nodes));
    const node = storedEvidenceNode(run.summary);
    same(summariseGeneration(kept, node), summariseGeneration(full, node));
    // The case-set blocks too: some records made mined (one ambiguous) and some conversations.
    const sets = full.map((r, i): CaseRecord => {
      if (i % 5 === 1)
        return {
          ...r,
          source: 'mined',
          mined: {
            topic_id: 100 + i,
            category: 'care',
            tags: ['salt'],
            method: 'template',
            template: 'post-question',
            ...(i % 10 === 1 ? { ambiguous: { similar_topic_ids: [7, 8] } } : {}),
          },
        };
      if (i % 5 === 2) {
        const at = Object.keys(r.retrieval)[0];
        return {
          ...r,
          turns: [
            { role: 'user', content: `first ${i}`, expected_topic_ids: [1] },
            { role: 'assistant', content: 'an answer' },
          ],
          needs_history: i % 3 !== 0,
          retrieval_query: { mode: 'condensed', text: `standalone ${i}`, by: 'offline:join-user-turns' },
          ...(at
            ? {
                turn_retrieval: [
                  {
                    turn: 0,
                    query: { mode: 'last' as const, text: `first ${i}` },
                    metrics: { [at]: r.retrieval[at]!.metrics },
                  },
                ],
              }
            : {}),
        };
      }
      return r;
    });
    const setFigures = new FigureRecords();
    const setsKept = sets.map((r) => setFigures.of(structuredClone(r)));
    same(summariseRetrieval(setsKept, nodes), summariseRetrieval(sets, nodes));
    const withSets = summariseCaseSets(setsKept, nodes, node!);
    expect(withSets.conversations?.cases).toBeGreaterThan(0);
    expect(Object.keys(withSets.generation_sets ?? {})).toContain('source:mined');
    same(withSets, summariseCaseSets(sets, nodes, node!));
    const j = run.summary.judge!;
    const opts = {
      judge: { id: j.judge, offline: j.offline, promptVersions: j.prompt_versions },
      prices: { [j.judge]: { input: 1, output: 2 } },
    };
    const judged = summariseJudge(full, opts);
    same(summariseJudge(kept, opts), judged);
    // The variants reach every part of the judge block.
    expect(judged.contradicted_claims).toBeGreaterThan(0);
    expect(judged.judge_errors).toBeGreaterThan(0);
    expect(judged.tokens.input).toBeGreaterThan(0);
    expect(Object.keys(judged.self_consistency ?? {})).toEqual(['faithfulness', 'stance', 'citation_relevance']);
    expect(judged.self_consistency?.stance?.disagreeing_items).toBeGreaterThan(0);
    expect(judged.agreement).toBeDefined();
    const probes = probeRecords();
    const probeFigures = probes.map((r) => figures.of(structuredClone(r)));
    const probeSummary = summariseProbes(probes);
    same(summariseProbes(probeFigures), probeSummary);
    expect(probeSummary.all.judge).not.toEqual({});
  });

  it('give the digests of the full records, byte for byte', () => {
    const run = readResults(RUN);
    const full = varied();
    const figures = new FigureRecords();
    const whole: RunResult = { ...run, cases: full };
    const kept: RunResult = { ...run, cases: full.map((r) => figures.of(structuredClone(r))) };
    for (const digest of [retrievalMarkdown, generationMarkdown, judgeMarkdown])
      expect(digest(kept)).toBe(digest(whole));
    const probes = readResults(PROBES);
    const withJudge = probeRecords();
    const probeWhole: RunResult = { ...probes, cases: withJudge };
    const probeKept: RunResult = { ...probes, cases: withJudge.map((r) => figures.of(structuredClone(r))) };
    expect(probeMarkdown(probeKept, probes.summary.probes!)).toBe(probeMarkdown(probeWhole, probes.summary.probes!));
  });

  it('are smaller than light records, share their repeated parts, and refuse a change to them', () => {
    const full = varied();
    const figures = new FigureRecords();
    const light = new LightRecords();
    const kept = full.map((r) => figures.of(structuredClone(r)));
    const lights = full.map((r) => light.of(structuredClone(r)));
    expect(JSON.stringify(kept).length).toBeLessThan(JSON.stringify(lights).length);
    expect(kept.every((r) => r.sources === undefined)).toBe(true);
    expect(kept.every((r) => Object.values(r.retrieval).every((n) => n.items.length === 0))).toBe(true);
    expect(kept.every((r) => r.answer === undefined || r.answer.length <= 160)).toBe(true);
    // The figures a record holds: values, its top-1 score, each node's metrics and latency.
    kept.forEach((r, i) => {
      const f = full[i]!;
      expect(r.scores.map((s) => [s.name, s.value])).toEqual(f.scores.map((s) => [s.name, s.value]));
      expect(r.top1_score).toBe(f.top1_score);
      for (const [node, at] of Object.entries(f.retrieval)) {
        expect(r.retrieval[node]!.metrics).toEqual(at.metrics);
        expect(r.retrieval[node]!.latency_ms).toBe(at.latency_ms);
      }
    });
    // Two cases with the same scores share one list; shared parts are frozen.
    const [a, b] = [figures.of(structuredClone(full[0]!)), figures.of(structuredClone(full[0]!))];
    expect(a.scores).toBe(b.scores);
    expect(a.tags).toBe(b.tags);
    expect(() => a.scores.push({ name: 'cta', value: 1 })).toThrow(TypeError);
    expect(() =>
      Object.values(a.retrieval)[0]!.items.push({ post_id: 1, topic_id: 1, post_number: 1, score: 1 }),
    ).toThrow(TypeError);
  });

  it('keep an answer start of their own, not a view into the whole answer', () => {
    const r = readResults(RUN).cases[0]!;
    const answer = `${'a'.repeat(159)}👞 and the rest`;
    const kept = new FigureRecords().of({ ...r, answer });
    const lighter = new LightRecords().of({ ...r, answer });
    // The cut falls inside the emoji: both keep the same 160 UTF-16 code units the digest shows.
    expect(kept.answer).toBe(answer.slice(0, 160));
    expect(lighter.answer).toBe(answer.slice(0, 160));
  });
});

describe('a large run', { timeout: 300_000 }, () => {
  it('writes format 2 with the summary, digest and report of its full records', async () => {
    threshold.cases = 10;
    try {
      const dir = workDir('run-memory-large');
      const loaded = loadConfig(undefined, {});
      const ctx = await createRunContext(loaded, { env: {}, cwd: dir });
      try {
        const all = loadCases(casePaths(loaded).map((p) => resolve(REPO, p)));
        // Off-topic and in-domain cases, a question asked twice, more distinct questions than the latency sample.
        const cases = [...all.slice(0, 20), ...all.slice(-8), { ...all[0]!, value: { ...all[0]!.value, id: 'again' } }];
        expect(cases.length).toBeGreaterThan(LARGE_RUN_CASES);
        const { deps, judge } = buildAuditSetup(ctx, {});
        expect(judge?.component.offline).toBe(true);
        const out = join(dir, 'out');
        const run = await runAudit(deps, cases, [], {
          outputDir: out,
          ...(judge ? { summarisers: { judge: judge.summarise } } : {}),
        });
        const result = run.result;
        // Figure records in memory, the full ones in the ledger.
        expect(result.caseStore?.size).toBe(cases.length);
        expect(result.cases.every((r) => r.sources === undefined)).toBe(true);
        const md = `${retrievalMarkdown(result)}\n${generationMarkdown(result)}\n${judgeMarkdown(result)}`;
        const files = writeResults(out, result, md, { stamp: run.stamp });
        const opened = openResults(files.json);
        expect(opened.format).toBe('jsonl');
        const full = [...opened.cases()];
        expect(full.map((r) => r.id)).toEqual(cases.map((c) => c.value.id));
        expect(full.some((r) => (r.sources?.length ?? 0) > 0)).toBe(true);

        // Every block computed from the records is that of the full records.
        const nodes = ctx.graph.nodes.map((n) => n.name);
        const s = result.summary;
        expect(s.judge).toBeDefined();
        expect(s.generation).toBeDefined();
        same(s.generation, summariseGeneration(full, evidenceNode(ctx).node));
        same(s.judge, judge!.summarise(full));
        const retrieval = summariseRetrieval(full, nodes);
        // The latency is that of the feed's sample (the last distinct questions, timed apart, the
        // timings in the summary), the batches' share that of every case's record.
        const distinct = [...new Set(full.filter((r) => r.status !== 'gated').map((r) => r.question))];
        const timings = s.retrieval_batch?.latency_sample_ms ?? [];
        expect(timings.map((t) => t.question)).toEqual(distinct.slice(-Math.min(LATENCY_SAMPLE, distinct.length)));
        same(s.retrieval, { ...retrieval, latency: sampleLatency(timings, nodes) });
        const batched = full.filter((r) => r.status !== 'gated');
        expect(s.retrieval_batch?.batched).toBe(batched.length);
        same(s.retrieval_batch?.latency_share, summariseRetrieval(batched, nodes).latency);
        // The summary written is that one, and so is the digest.
        same(opened.summary, s);
        const whole: RunResult = { ...result, cases: full };
        expect(readFileSync(files.md, 'utf8')).toBe(
          `${retrievalMarkdown(whole)}\n${generationMarkdown(whole)}\n${judgeMarkdown(whole)}`,
        );

        // The report beside it is the page `report` makes of the file (light records, every score's details).
        const beside = readFileSync(reportBeside(files.json, result), 'utf8');
        const again = writeHtmlReport({ input: files.json, inputName: files.json, out: join(dir, 'again.html') });
        expect(beside).toBe(readFileSync(again, 'utf8'));
        expect(beside).not.toBe(reportHtml(result));
      } finally {
        await ctx.close();
      }
    } finally {
      threshold.cases = 5000;
    }
  });
});

describe('the writers and readers a large run goes through', () => {
  it('write pieces of any size through one reused buffer, the bytes of the whole text', () => {
    const dir = workDir('run-memory-artifact');
    // Multi-byte characters across the buffer's edge, pieces larger than the buffer, empty ones.
    const pieces = ['', 'é'.repeat(300_000), '👞'.repeat(200_000), 'x', 'ü'.repeat(700_000), '', 'end\n'];
    for (let i = 0; i < 2000; i++) pieces.push(`line ${i} ${'€'.repeat(i % 97)}\n`);
    const file = writeArtifactStream(join(dir, 'a.txt'), (put) => pieces.forEach(put));
    expect(readFileSync(file, 'utf8')).toBe(pieces.join(''));
  });

  it('read lines back by offset with one buffer, longer and shorter lines in any order', () => {
    const dir = workDir('run-memory-lines');
    const file = join(dir, 'l.jsonl');
    const lines = ['short', 'é'.repeat(50_000), '{"a":1}', '👞'.repeat(70_000), 'z'];
    const fd = openSync(file, 'w');
    const spans = lines.map((l) => appendLine(fd, l));
    closeSync(fd);
    const reader = new LineReader(file);
    try {
      for (const i of [4, 1, 0, 3, 2, 1, 4]) expect(reader.read(spans[i]!.offset, spans[i]!.bytes)).toBe(lines[i]);
    } finally {
      reader.close();
    }
  });
});

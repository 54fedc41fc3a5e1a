/**
 * The results file is written case by case (streamed through a temp file renamed at the end):
 * the write can no longer fail after the work is done. Before, one JSON.stringify of the whole
 * run failed with "Invalid string length" at about 25,000 cases, no results were written, and the
 * run was lost at its last step. The bytes are those of `JSON.stringify(result, null, 1)`, so
 * every reader reads the files as before; a write that fails anyway leaves no partial file, and
 * `--resume` writes the results from the ledger without redoing any case.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadCases } from '../src/cases/load.js';
import { loadConfig } from '../src/config/load.js';
import type { ChatModel } from '../src/llm/types.js';
import { buildAuditSetup } from '../src/wiring/audit-setup.js';
import { runAudit } from '../src/runs/audit-run.js';
import { createRunContext } from '../src/wiring/context.js';
import { readResults, writeResults } from '../src/store/results-file.js';
import { summariseRetrieval } from '../src/summary/retrieval-summary.js';
import { RunResultSchema, type CaseRecord, type RunResult } from '../src/model/results.js';
import { REPO, removeWorkDirs, workDir } from './fixtures/audit/harness.js';

afterAll(() => removeWorkDirs());

function record(i: number, answer: string): CaseRecord {
  return {
    id: `c${i}`,
    question: `question ${i}?`,
    kind: 'in_domain',
    difficulty: 'easy',
    tags: ['t'],
    expected_topic_ids: [i],
    expected_post_ids: [],
    expected_content: [],
    status: 'ok',
    retrieval: {
      hybrid: {
        items: [{ post_id: i, topic_id: i, post_number: 1, score: 0.5 }],
        metrics: { hit_at_5: 1, mrr_at_10: null },
        latency_ms: 1.25,
      },
    },
    answer,
    scores: [{ name: 'cta', value: 1 }],
  };
}

function synthetic(cases: CaseRecord[]): RunResult {
  return {
    schema_version: 1,
    tool: { name: 'ragaudit', version: '0.0.0' },
    kind: 'run',
    name: 'synthetic',
    note: 'a "quoted" note\nover two lines',
    created_at: '2026-01-01T00:00:00.000Z',
    config_source: '(test)',
    config: { name: 'synthetic', nested: { list: [1, 2, { a: 'b' }] } },
    config_digest: 'abc',
    database: 'demo',
    components: { generator: { id: 'offline:extractive', offline: true, label: 'x' } },
    warnings: ['w'],
    nodes: [{ name: 'hybrid', kind: 'rrf', grain: 'post' }],
    summary: { retrieval: summariseRetrieval(cases, []) },
    cases,
  };
}

describe('writeResults streams the results file', () => {
  it('writes exactly the bytes of JSON.stringify(result, null, 1), and readers read it', () => {
    const dir = workDir('write-bytes');
    for (const cases of [[], [record(1, 'one')], [record(1, 'a'), record(2, 'b\n"c"'), record(3, 'ü 👞')]]) {
      const result = synthetic(cases);
      const { json } = writeResults(dir, result, '# digest\n', { stamp: `20260101-00000${cases.length}` });
      expect(readFileSync(json, 'utf8')).toBe(JSON.stringify(RunResultSchema.parse(result), null, 1));
      expect(readResults(json).cases).toHaveLength(cases.length);
    }
  });

  it("never builds the whole document as one string (25,000 cases at 24 kB each exceeded V8's longest string)", () => {
    const dir = workDir('write-many');
    const answer = 'x'.repeat(1000);
    const result = synthetic(Array.from({ length: 3000 }, (_, i) => record(i, answer)));
    const whole = JSON.stringify(result, null, 1).length; // about 3.7 MB
    let longest = 0;
    const original = JSON.stringify;
    const spy = vi.spyOn(JSON, 'stringify').mockImplementation((...args: Parameters<typeof JSON.stringify>) => {
      const text = original(...args);
      longest = Math.max(longest, text?.length ?? 0);
      return text;
    });
    try {
      const { json } = writeResults(dir, result, '# digest\n', { stamp: '20260101-000000' });
      expect(statSync(json).size).toBe(Buffer.byteLength(original(RunResultSchema.parse(result), null, 1)));
    } finally {
      spy.mockRestore();
    }
    // The longest string serialised at once is one record, not the run.
    expect(whole).toBeGreaterThan(3_000_000);
    expect(longest).toBeLessThan(2_000);
  });

  it('two results of the same name written in the same second get two files', () => {
    const dir = workDir('write-same-name');
    const result = synthetic([record(1, 'a')]);
    const one = writeResults(dir, result, '# one\n');
    const two = writeResults(dir, { ...result, cases: [record(2, 'b')] }, '# two\n');
    expect(one.json).toBe(join(dir, '20260101-000000-synthetic.json'));
    expect(two.json).toBe(join(dir, '20260101-000000-synthetic-2.json'));
    expect(readResults(one.json).cases[0]!.id).toBe('c1');
    expect(readResults(two.json).cases[0]!.id).toBe('c2');
    expect(readFileSync(two.md, 'utf8')).toBe('# two\n');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('names the case that does not match the schema and leaves no file behind', () => {
    const dir = workDir('write-invalid');
    const bad = { ...record(2, 'b'), scores: [{ name: 'cta', value: 'high' }] } as unknown as CaseRecord;
    expect(() => writeResults(dir, synthetic([record(1, 'a'), bad]), '# d\n', { stamp: '20260101-000000' })).toThrow(
      /^internal: case c2 does not match the results schema: scores\.0\.value: /,
    );
    expect(readdirSync(dir).filter((f) => f.endsWith('.json') || f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('a results file that cannot be written', { timeout: 120_000 }, () => {
  it('fails with the path, leaves the ledger, and the resume writes it without redoing any case', async () => {
    const dir = workDir('write-fails');
    const ctx = await createRunContext(loadConfig(undefined, {}), { env: {}, cwd: dir });
    try {
      const { deps } = buildAuditSetup(ctx, {});
      let calls = 0;
      const counting: ChatModel = {
        id: deps.generator.id,
        offline: true,
        complete: (req) => (calls++, deps.generator.complete(req)),
      };
      const cases = loadCases([join(REPO, 'cases', 'demo', 'questions-core.yml')]).slice(0, 3);
      const out = join(dir, 'out');
      const first = await runAudit({ ...deps, generator: counting }, cases, [], { outputDir: out });
      expect(calls).toBe(3);
      // The target path is taken by a directory with a file in it: the rename cannot succeed.
      const target = join(out, `${first.stamp}-${first.result.name}.json`);
      mkdirSync(target);
      writeFileSync(join(target, 'keep'), '');
      expect(() => writeResults(out, first.result, '# d\n', { stamp: first.stamp })).toThrow(
        `cannot write the results ${target}: `,
      );
      expect(readdirSync(out).filter((f) => f.endsWith('.tmp'))).toEqual([]);
      rmSync(target, { recursive: true });
      // The resume finds every case done: no generator call, the same records, a file written.
      const again = await runAudit({ ...deps, generator: counting }, cases, [], {
        outputDir: out,
        resume: first.ledger,
      });
      expect(calls).toBe(3);
      expect(again.result.cases).toEqual(first.result.cases);
      const { json } = writeResults(out, again.result, '# d\n', { stamp: again.stamp });
      expect(json).toBe(target);
      expect(existsSync(json) && readResults(json).cases).toHaveLength(3);
    } finally {
      await ctx.close();
    }
  });
});

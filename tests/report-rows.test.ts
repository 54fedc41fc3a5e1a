/**
 * The HTML report of a large results file (format 2) is made from figure records, and each case
 * row from that case's light record read back by index when the row is written
 * (src/store/results-rows.ts), so the page never holds every shown record at once. The page is the
 * one the light records of the whole file make, byte for byte: for a run (beside its results and
 * through `report`) and for a retrieval file (whose records have no top-1 score).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { reportBeside, writeHtmlReport } from '../src/app/report.js';
import { SILENT_HOOKS } from '../src/app/hooks.js';
import { retrieveAndWrite } from '../src/app/retrieval.js';
import { loadCases } from '../src/cases/load.js';
import { loadConfig } from '../src/config/load.js';
import { InputError } from '../src/errors.js';
import type { CaseRecord } from '../src/model/results.js';
import { generationMarkdown } from '../src/reports/generation-digest.js';
import { reportHtml } from '../src/reports/html.js';
import { retrievalMarkdown } from '../src/reports/digest.js';
import { runAudit } from '../src/runs/audit-run.js';
import { buildAuditSetup } from '../src/wiring/audit-setup.js';
import { casePaths, createRunContext, type RunContext } from '../src/wiring/context.js';
import { openResults, readResults, writeResults } from '../src/store/results-file.js';
import { CaseRows } from '../src/store/results-rows.js';
import { REPO, removeWorkDirs, workDir } from './fixtures/audit/harness.js';

// A few dozen cases make a large run here: the threshold is read through this.
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

const RUN = join(REPO, 'results', 'reference', '20261204-233647-demo.json');

describe('case rows read back by index', () => {
  const records = readResults(RUN).cases.slice(0, 4);
  const line = (r: CaseRecord) => JSON.stringify(r);

  it('give each record of a cases file by its index, blank lines skipped, checked as a whole read checks them', () => {
    const dir = workDir('report-rows-index');
    const file = join(dir, 'x.cases.jsonl');
    writeFileSync(file, `${line(records[0]!)}\n\n  \n${line(records[1]!)}\n${line(records[2]!)}\n${line(records[3]!)}`);
    const rows = new CaseRows(file, join(dir, 'x.json'), 4);
    try {
      expect(rows.size).toBe(4);
      // Any order, the last line without its newline too.
      for (const i of [3, 0, 2, 1, 3]) expect(rows.at(i)).toEqual(records[i]);
    } finally {
      rows.close();
    }
  });

  it('refuse a count the results file does not state, and name the line of a record that does not read', () => {
    const dir = workDir('report-rows-bad');
    const file = join(dir, 'x.cases.jsonl');
    writeFileSync(file, `${line(records[0]!)}\n${line(records[1]!)}\n`);
    expect(() => new CaseRows(file, join(dir, 'x.json'), 3)).toThrow(
      new InputError(`${file}: 2 cases, but ${join(dir, 'x.json')} says 3 (the pair does not match)`),
    );
    writeFileSync(file, `${line(records[0]!)}\n{"id": "cut`);
    const rows = new CaseRows(file, join(dir, 'x.json'), 2);
    try {
      expect(() => rows.at(1)).toThrow(
        /x\.cases\.jsonl:2: not a JSON line \(the last line is cut short: the file is torn\)/,
      );
    } finally {
      rows.close();
    }
  });
});

describe('the report of a large results file', { timeout: 300_000 }, () => {
  let ctx: RunContext;
  const loaded = loadConfig(undefined, {});
  beforeAll(async () => {
    ctx = await createRunContext(loaded, { env: {}, cwd: workDir('report-rows-ctx') });
  }, 120_000);
  afterAll(async () => {
    threshold.cases = 5000;
    await ctx?.close();
  });

  const someCases = () => {
    const all = loadCases(casePaths(loaded).map((p) => resolve(REPO, p)));
    // In-domain and off-topic cases (failed and passed verdicts), a question asked twice.
    return [...all.slice(0, 20), ...all.slice(-8), { ...all[0]!, value: { ...all[0]!.value, id: 'again' } }];
  };

  it('shows each row from its case read back, in row order, the page of the whole file’s light records', async () => {
    threshold.cases = 10;
    const dir = workDir('report-rows-run');
    const cases = someCases();
    const { deps, judge } = buildAuditSetup(ctx, {});
    const out = join(dir, 'out');
    const run = await runAudit(deps, cases, [], {
      outputDir: out,
      ...(judge ? { summarisers: { judge: judge.summarise } } : {}),
    });
    const result = run.result;
    const files = writeResults(out, result, `${retrievalMarkdown(result)}\n${generationMarkdown(result)}`, {
      stamp: run.stamp,
    });
    const opened = openResults(files.json);
    expect(opened.format).toBe('jsonl');
    // The page the whole file's light records make (how the report was made before rows were read back).
    const lightPage = reportHtml(readResults(files.json, { light: true }));
    const spy = vi.spyOn(CaseRows.prototype, 'at');
    const beside = readFileSync(reportBeside(files.json, result), 'utf8');
    // Every row read back once, failures first (then errors, no verdict, passed), each group in case order.
    const asked = spy.mock.calls.map(([i]) => i);
    spy.mockRestore();
    const full = [...opened.cases()];
    const rank = (r: CaseRecord) => (r.status === 'error' ? 1 : !r.verdict ? 2 : r.verdict.passed ? 3 : 0);
    const order = full.map((r, i) => ({ r, i })).sort((a, b) => rank(a.r) - rank(b.r) || a.i - b.i);
    expect(asked).toEqual(order.map((o) => o.i));
    expect(new Set(full.map(rank)).size).toBeGreaterThan(1);
    expect(beside).toBe(lightPage);
    // `report` on the same file: figure records read from it, rows read back, the same page.
    const again = writeHtmlReport({ input: files.json, inputName: files.json, out: join(dir, 'again.html') });
    expect(readFileSync(again, 'utf8')).toBe(lightPage);
  });

  it('`report` on a large retrieval file: the same page as its light records', async () => {
    threshold.cases = 10;
    const dir = workDir('report-rows-retrieval');
    const { files } = await retrieveAndWrite(ctx, someCases(), [], SILENT_HOOKS, {
      outputDir: join(dir, 'out'),
      env: {},
    });
    expect(openResults(files.json).format).toBe('jsonl');
    const lightPage = reportHtml(readResults(files.json, { light: true }));
    // Not vacuous: a retrieval page's zones come from each case's rerank top-1 (no recorded top-1).
    expect(lightPage).toContain('Zone distribution');
    const page = writeHtmlReport({ input: files.json, inputName: files.json, out: join(dir, 'page.html') });
    expect(readFileSync(page, 'utf8')).toBe(lightPage);
  });
});

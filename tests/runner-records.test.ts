/**
 * One bad case never aborts a run: a question with no content word ("Why?", an emoji) on the
 * offline demo, a record that fails the results schema (a NaN score, a field out of shape), a
 * torn ledger tail, a run id taken by a run started in the same second. Before, "Why?" got NaN
 * scores from the offline embedder and `retrieval`/`run` died at the final write ("internal:
 * results do not match the schema"), and `--resume` then failed on "unreadable ledger line".
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCases } from '../src/cases/load.js';
import { loadConfig } from '../src/config/load.js';
import { buildAuditSetup } from '../src/wiring/audit-setup.js';
import { runAudit } from '../src/runs/audit-run.js';
import { createRunContext, type RunContext } from '../src/wiring/context.js';
import { Ledger } from '../src/store/ledger.js';
import { checkRecord, errorRecord, isCheckedRecord } from '../src/store/record-check.js';
import { readResults, writeResults } from '../src/store/results-file.js';
import type { CaseRecord } from '../src/model/results.js';
import { ledgerOf, removeWorkDirs, REPO, resultsOf, runCli, workDir } from './fixtures/audit/harness.js';

const CORE = join(REPO, 'cases', 'demo', 'questions-core.yml');
const NORMAL = loadCases([CORE]).slice(0, 3);
/** Every number in a value, recursively. */
const numbers = (v: unknown): number[] =>
  typeof v === 'number'
    ? [v]
    : Array.isArray(v)
      ? v.flatMap(numbers)
      : v && typeof v === 'object'
        ? Object.values(v).flatMap(numbers)
        : [];

/** A case file: three demo cases and the questions with no content word. */
function oddCases(dir: string): string {
  const file = join(dir, 'odd.yml');
  const odd = [
    { id: 'why', question: 'Why?' },
    { id: 'what-is-it', question: 'What is it?' },
    { id: 'emoji', question: '👞🤔' },
  ];
  const yaml = [
    ...NORMAL.map(
      (c) =>
        `- id: ${c.value.id}\n  question: ${JSON.stringify(c.value.question)}\n  kind: in_domain\n  expected_topic_ids: [${c.value.expected_topic_ids.join(', ')}]`,
    ),
    ...odd.map((c) => `- id: ${c.id}\n  question: ${JSON.stringify(c.question)}\n  kind: in_domain`),
  ].join('\n');
  writeFileSync(file, `${yaml}\n`);
  return file;
}

afterAll(() => removeWorkDirs());

describe('questions with no content word on the offline demo', { timeout: 180_000 }, () => {
  it('retrieval: every case has a record, the run completes and no number is NaN or infinite', async () => {
    const dir = workDir('odd-retrieval');
    const run = await runCli(['retrieval', '--cases', oddCases(dir), '--no-report'], { cwd: dir, env: {} });
    expect([0, 1], run.err).toContain(run.code);
    const result = resultsOf(run);
    expect(result.cases.map((c) => c.id)).toEqual([...NORMAL.map((c) => c.value.id), 'why', 'what-is-it', 'emoji']);
    for (const c of result.cases.slice(0, 3)) expect(c.status).toBe('ok');
    // Whatever the embedder gives such a question, the record holds finite numbers or says why not.
    for (const c of result.cases) {
      expect(numbers(c).every(Number.isFinite), c.id).toBe(true);
      if (c.status === 'error') expect(c.error!.stage).toBe('retrieval');
    }
    expect(run.code).toBe(result.cases.some((c) => c.status === 'error') ? 1 : 0);
  });

  it('run: completes with a record per case, and its ledger resumes', async () => {
    const dir = workDir('odd-run');
    const cases = oddCases(dir);
    const run = await runCli(['run', '--cases', cases, '--no-report'], { cwd: dir, env: {} });
    expect([0, 1], run.err).toContain(run.code);
    const result = resultsOf(run);
    expect(result.cases).toHaveLength(6);
    for (const c of result.cases) expect(numbers(c).every(Number.isFinite), c.id).toBe(true);
    const again = await runCli(['run', '--cases', cases, '--no-report', '--resume', ledgerOf(run.err)!], {
      cwd: dir,
      env: {},
    });
    expect([0, 1], again.err).toContain(again.code);
    expect(resultsOf(again).cases.map((c) => c.id)).toEqual(result.cases.map((c) => c.id));
  });
});

describe('a record that fails the results schema', { timeout: 120_000 }, () => {
  let dir: string;
  let ctx: RunContext;
  beforeAll(async () => {
    dir = workDir('bad-record');
    ctx = await createRunContext(loadConfig(undefined, {}), { env: {}, cwd: dir });
  });
  afterAll(async () => ctx?.close());

  it('becomes that case’s error record with the validation message; the run completes and is written', async () => {
    const { deps } = buildAuditSetup(ctx, {});
    const [a, b, c] = NORMAL.map((x) => x.value.id) as [string, string, string];
    // The judge hook injects what would not read back: a NaN score, and a field the schema does not know.
    const judge = async (record: CaseRecord) =>
      record.id === a
        ? [{ name: 'faithfulness' as const, value: Number.NaN }]
        : record.id === b
          ? [{ name: 'faithfulness', value: 1, surprise: true } as never]
          : [];
    const out = join(dir, 'out');
    const { result, stamp, ledger } = await runAudit({ ...deps, judge }, NORMAL, [], { outputDir: out });
    const byId = new Map(result.cases.map((r) => [r.id, r]));
    expect(byId.get(a)).toMatchObject({
      status: 'error',
      error: {
        stage: 'scoring',
        message: 'the record does not match the results schema: scores.5.value: NaN is not a finite number',
      },
    });
    expect(byId.get(b)!.status).toBe('error');
    expect(byId.get(b)!.error!.message).toMatch(
      /^the record does not match the results schema: scores\.5: Unrecognized key/,
    );
    expect(byId.get(c)!.status).toBe('ok');
    // The ledger reads back whole, and the results are written and read.
    // (Ledger lines are in the order cases finished, which concurrency decides: compare by id.)
    const stored = Ledger.open(ledger).done;
    expect([a, b, c].map((id) => stored.get(id)?.status)).toEqual(['error', 'error', 'ok']);
    const files = writeResults(out, result, '# digest\n', { stamp });
    expect(readResults(files.json).cases.map((r) => r.status)).toEqual(['error', 'error', 'ok']);
  });

  it('a stored record is frozen and written as checked; a copy changed since is checked again and refused', async () => {
    const { deps } = buildAuditSetup(ctx, {});
    const out = join(dir, 'frozen');
    const { result, stamp } = await runAudit(deps, NORMAL, [], { outputDir: out });
    const [first] = result.cases;
    expect(isCheckedRecord(first!)).toBe(true);
    // Frozen through and through: the record and a list deep inside it.
    expect(Object.isFrozen(first)).toBe(true);
    const items = Object.values(first!.retrieval ?? {})[0]!.items;
    expect(Object.isFrozen(items) && Object.isFrozen(items[0])).toBe(true);
    expect(() => {
      (first as { question: string }).question = 'changed';
    }).toThrow(TypeError);
    // The same record, copied and changed after its check, is not taken on trust.
    const changed = { ...structuredClone(first!), surprise: true } as CaseRecord;
    expect(isCheckedRecord(changed)).toBe(false);
    expect(() => writeResults(out, { ...result, cases: [changed] }, '# digest\n', { stamp })).toThrow(
      /internal: case .* does not match the results schema: : Unrecognized key/,
    );
    const files = writeResults(out, result, '# digest\n', { stamp });
    expect(readResults(files.json).cases).toEqual(result.cases);
  });

  it('a checked record is what a reader of its line sees: undefined properties dropped, a Date refused', async () => {
    const { deps } = buildAuditSetup(ctx, {});
    const { result } = await runAudit(deps, NORMAL.slice(0, 1), [], { outputDir: join(dir, 'as-read') });
    // A record as a stage might build it: an optional property left undefined, deep and at the top.
    const built = structuredClone(result.cases[0]!) as CaseRecord & { probe?: unknown };
    built.probe = undefined;
    (built.sources![0] as { neighbours?: unknown }).neighbours = undefined;
    const checked = checkRecord(built);
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    const read = (JSON.parse(checked.line) as { case: CaseRecord }).case;
    expect(checked.stored).toEqual(read);
    expect('probe' in checked.stored).toBe(false);
    expect('neighbours' in checked.stored.sources![0]!).toBe(false);
    // JSON would have written a Date as its text; the check refuses it instead, naming the field.
    const dated = { ...structuredClone(result.cases[0]!), question: new Date(0) } as unknown as CaseRecord;
    expect(checkRecord(dated)).toMatchObject({ ok: false, message: expect.stringMatching(/^question: /) });
  });

  it('onCasesDone runs once, after the last case finished and before the records are read back', async () => {
    const { deps } = buildAuditSetup(ctx, {});
    const events: string[] = [];
    const { result } = await runAudit(deps, NORMAL, [], {
      outputDir: join(dir, 'done'),
      onProgress: (done, total) => void events.push(`${done}/${total}`),
      onCasesDone: async () => void events.push('cases done'),
    });
    expect(events).toEqual(['0/3', '1/3', '2/3', '3/3', 'cases done']);
    expect(result.cases.map((r) => r.status)).toEqual(['ok', 'ok', 'ok']);
  });
});

describe('the ledger after a crash', { timeout: 120_000 }, () => {
  it('ignores a torn last line with a warning on the console; a bad line in the middle is named file:line (exit 2)', async () => {
    const dir = workDir('torn');
    const cases = join(dir, 'two.yml');
    writeFileSync(
      cases,
      NORMAL.slice(0, 2)
        .map((c) => `- id: ${c.value.id}\n  question: ${JSON.stringify(c.value.question)}\n  kind: in_domain`)
        .join('\n'),
    );
    const first = await runCli(['run', '--cases', cases, '--no-report'], { cwd: dir, env: {} });
    expect(first.code, first.err).toBe(0);
    const ledger = ledgerOf(first.err)!;
    appendFileSync(ledger, '{"case":{"id":"half-writ');
    const resumed = await runCli(['run', '--cases', cases, '--no-report', '--resume', ledger], { cwd: dir, env: {} });
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toContain(`warning: ${ledger}:4: ignored a torn last line`);
    expect(resultsOf(resumed).warnings.some((w) => w.includes('ignored a torn last line'))).toBe(true);
    // A damaged line that is not the last one is not guessed at.
    const lines = readFileSync(ledger, 'utf8').split('\n');
    lines[1] = '{"case":{"id":42}}';
    writeFileSync(ledger, lines.join('\n'));
    const bad = await runCli(['run', '--cases', cases, '--no-report', '--resume', ledger], { cwd: dir, env: {} });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(`${ledger}:2: unreadable ledger line`);
  });
});

describe('run ids', () => {
  it('two runs with the same name started in the same second get distinct ledgers', () => {
    const dir = workDir('ids');
    const header = {
      ledger: 1 as const,
      kind: 'run',
      config_digest: 'x',
      created_at: '2026-01-01T00:00:00.000Z',
      cases: 1,
    };
    const one = Ledger.create(dir, '20260101-000000-demo', header);
    const two = Ledger.create(dir, '20260101-000000-demo', header);
    const three = Ledger.create(dir, '20260101-000000-demo', header);
    expect([one.header.run_id, two.header.run_id, three.header.run_id]).toEqual([
      '20260101-000000-demo',
      '20260101-000000-demo-2',
      '20260101-000000-demo-3',
    ]);
    expect(new Set([one.file, two.file, three.file]).size).toBe(3);
    for (const l of [one, two, three]) expect(existsSync(l.file)).toBe(true);
    // Each ledger still holds only its own header.
    expect(Ledger.open(two.file).header.run_id).toBe('20260101-000000-demo-2');
  });
});

describe('an error record carries its error text', () => {
  it('an error thrown without a message is named; a record saying error without its text is refused', () => {
    const c = NORMAL[0]!.value;
    const silent = errorRecord(c, 'generation', new Error(''));
    expect(silent.error).toEqual({ stage: 'generation', message: 'Error without a message' });
    expect(checkRecord(silent).ok).toBe(true);
    const { error: _dropped, ...bare } = silent;
    expect(checkRecord(bare)).toEqual({
      ok: false,
      stage: 'record',
      message: `error: case ${c.id}: status error without its error text (error.stage and error.message)`,
    });
    expect(checkRecord({ ...silent, error: { stage: 'generation', message: ' ' } }).ok).toBe(false);
  });
});

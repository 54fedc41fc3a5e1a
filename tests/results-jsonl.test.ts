/**
 * Results of format 2 (a small `<stem>.json` and `<stem>.cases.jsonl`, one record a line) read
 * exactly as format 1 (one JSON document): the same header, summary and records through the one
 * reader, a broken line named file:line, and the commands that read results (report, compare)
 * give the same output from either. The light records a large run keeps in memory give the same
 * summaries as the full ones; the ledger and the spool give records back in case order.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { compareAndWrite } from '../src/app/compare.js';
import { main } from '../src/cli/main.js';
import { InputError } from '../src/errors.js';
import { runMerge } from '../src/app/merge.js';
import { writeHtmlReport } from '../src/app/report.js';
import { summariseJudge } from '../src/summary/judge-summary.js';
import type { CaseRecord, RunResult } from '../src/model/results.js';
import { CaseSpool, LARGE_RUN_CASES, LightRecords } from '../src/store/case-store.js';
import { storedEvidenceNode, summariseGeneration } from '../src/summary/generation-summary.js';
import { Ledger } from '../src/store/ledger.js';
import { summariseProbes } from '../src/summary/probe-summary.js';
import { casesFileOf, openResults, readResults, writeResults } from '../src/store/results-file.js';
import { createJudgeSetup } from '../src/wiring/judge-setup.js';
import { configFromResults, rejudgeResults } from '../src/runs/rejudge.js';
import { recordDigest } from '../src/store/record-digest.js';
import { mergeShards } from '../src/runs/shard-merge.js';
import { PROMPTS_DIR } from '../src/paths.js';
import { summariseRetrieval } from '../src/summary/retrieval-summary.js';
import { removeWorkDirs, workDir } from './fixtures/audit/harness.js';

// A large run is one above 120 cases here, not 5,000: the same paths (format 2, light records,
// the merge of shards) over 122 records instead of 5,002, whose deep comparisons alone took
// ~40 s of this file. 120, not less: the reference run's 108 cases stay a small run.
vi.mock('../src/store/case-store.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../src/store/case-store.js')>()),
  LARGE_RUN_CASES: 120,
}));

afterAll(() => removeWorkDirs());

const REFERENCE = join(import.meta.dirname, '..', 'results', 'reference');
const RUN = join(REFERENCE, '20261204-233647-demo.json');
const PROBES = join(REFERENCE, '20261204-233654-demo-probes.json');

/** The reference run written again in `format`, under `dir`. */
function rewrite(dir: string, format: 'json' | 'jsonl', file = RUN): string {
  return writeResults(dir, readResults(file), '# digest\n', { format, stamp: '20260101-000000' }).json;
}

describe('both results formats read the same way', () => {
  it('the same header, summary and records, from openResults and readResults', () => {
    const dir = workDir('jsonl-same');
    const one = rewrite(join(dir, 'one'), 'json');
    const two = rewrite(join(dir, 'two'), 'jsonl');
    // Format 1 rewritten is the reference file byte for byte.
    expect(readFileSync(one, 'utf8')).toBe(readFileSync(RUN, 'utf8'));
    const doc = JSON.parse(readFileSync(two, 'utf8')) as Record<string, unknown>;
    expect(doc.schema_version).toBe(2);
    expect(doc.cases_file).toBe('20260101-000000-demo.cases.jsonl');
    expect(doc.cases).toBeUndefined();
    const lines = readFileSync(casesFileOf(two), 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines).toHaveLength(109);
    expect(readResults(two)).toEqual(readResults(RUN));
    const [a, b] = [openResults(one), openResults(two)];
    expect([a.format, b.format]).toEqual(['json', 'jsonl']);
    expect(b.header).toEqual(a.header);
    expect(b.summary).toEqual(a.summary);
    expect(b.count).toBe(a.count);
    expect([...b.cases()]).toEqual([...a.cases()]);
  });

  it('writes format 2 by default above LARGE_RUN_CASES cases, format 1 up to it', () => {
    const dir = workDir('jsonl-default');
    const base = readResults(RUN);
    const many = (n: number): RunResult => ({
      ...base,
      cases: Array.from({ length: n }, (_, i) => ({ ...base.cases[i % base.cases.length]!, id: `c${i}` })),
    });
    const small = writeResults(join(dir, 'small'), many(LARGE_RUN_CASES), '# d\n').json;
    const large = writeResults(join(dir, 'large'), many(LARGE_RUN_CASES + 1), '# d\n').json;
    expect(openResults(small).format).toBe('json');
    expect(openResults(large).format).toBe('jsonl');
    expect(openResults(large).count).toBe(LARGE_RUN_CASES + 1);
  });

  it('names file:line for a torn or invalid line, and a pair that does not match', () => {
    const dir = workDir('jsonl-broken');
    const json = rewrite(dir, 'jsonl');
    const cases = casesFileOf(json);
    const good = readFileSync(cases, 'utf8');
    const read = () => readResults(json);
    // Torn: the last line cut in the middle.
    writeFileSync(cases, good.slice(0, good.length - 200));
    expect(read).toThrow(new RegExp(`^${cases}:108: not a JSON line \\(the last line is cut short`));
    // A record out of shape on line 3: the line and the field.
    const lines = good.split('\n');
    lines[2] = lines[2]!.replace('"status":"ok"', '"status":"maybe"');
    writeFileSync(cases, lines.join('\n'));
    expect(read).toThrow(`${cases}:3: not a valid case record`);
    expect(read).toThrow(`${cases}:3: status: Invalid option`);
    // A line missing: the count in the JSON says so.
    writeFileSync(cases, good.split('\n').slice(1).join('\n'));
    expect(read).toThrow(`${cases}: 107 cases, but ${json} says 108`);
    // The cases file gone.
    writeFileSync(cases, good);
    copyFileSync(json, join(dir, 'moved.json'));
    expect(() => readResults(join(dir, 'moved.json'))).not.toThrow();
    const other = join(dir, 'other.json');
    writeFileSync(other, readFileSync(json, 'utf8').replace('-demo.cases.jsonl', '-gone.cases.jsonl'));
    expect(() => readResults(other)).toThrow(/its cases file .*-gone\.cases\.jsonl is missing/);
  });
});

describe('commands read either format the same way', () => {
  it('report writes the same page; compare finds the two files identical', () => {
    const dir = workDir('jsonl-commands');
    const one = rewrite(join(dir, 'one'), 'json');
    const two = rewrite(join(dir, 'two'), 'jsonl');
    const html = (input: string) =>
      readFileSync(writeHtmlReport({ input, inputName: input, out: `${input}.html` }), 'utf8');
    expect(html(two)).toBe(html(one));
    const { cmp } = compareAndWrite({
      files: [one, two],
      labels: ['json', 'jsonl'],
      baseline: 0,
      seed: 1,
      minShare: 0.9,
      allowPartial: false,
      outDir: dir,
      inputs: [one, two],
      cwd: dir,
    });
    const [row1, row2] = cmp.rows;
    expect({ ...row2, label: '', file: '', baseline: true }).toEqual({ ...row1, label: '', file: '' });
    expect(cmp.versus[0]!.matched).toBe(108);
    expect(cmp.versus[0]!.changes).toEqual([]);
  });
});

describe('judge reads either format the same way', () => {
  it('re-judges the same records to the same scores and summary', async () => {
    const dir = workDir('jsonl-judge');
    const judged = async (format: 'json' | 'jsonl') => {
      const file = rewrite(join(dir, format), format);
      let err = '';
      const code = await main(['judge', file, '--judge', 'offline:heuristic', '--out', join(dir, `${format}-out`)], {
        out: () => undefined,
        err: (t) => void (err += t),
        isTTY: false,
        cwd: dir,
        env: {},
      });
      expect(code, err).toBe(0);
      const out = readdirSync(join(dir, `${format}-out`)).find((f) => f.endsWith('-rejudged.json'))!;
      return readResults(join(dir, `${format}-out`, out));
    };
    const [one, two] = [await judged('json'), await judged('jsonl')];
    expect(two.cases).toEqual(one.cases);
    expect(two.summary).toEqual(one.summary);
  });
});

describe('judge of a large run', () => {
  it('judges records streamed from the store to what a small run gets, with the summary of the whole records', async () => {
    const dir = workDir('jsonl-judge-large');
    const base = readResults(RUN);
    const config = configFromResults(base, RUN);
    config.judge = { ...config.judge, provider: 'offline', model: 'heuristic' };
    const judge = createJudgeSetup(config.judge, { env: {}, promptsDir: PROMPTS_DIR, cacheDir: dir, cta: 'x' })!;
    const opts = { source: RUN, config, judge, concurrency: 4 };
    const small = await rejudgeResults(base, opts);
    const all = Array.from({ length: LARGE_RUN_CASES + 2 }, (_, i) => ({
      ...base.cases[i % base.cases.length]!,
      id: i < base.cases.length ? base.cases[i]!.id : `c${i}`,
    }));
    const light = new LightRecords();
    const large = await rejudgeResults(
      { ...base, cases: all.map((r) => light.of(r)), caseStore: { size: all.length, records: () => all } },
      opts,
    );
    expect(large.caseStore).toBeInstanceOf(CaseSpool);
    expect(large.caseStore?.size).toBe(all.length);
    const judged = [...large.caseStore!.records()];
    if (large.caseStore instanceof CaseSpool) large.caseStore.dispose();
    expect(judged.slice(0, base.cases.length)).toEqual(small.cases);
    expect(large.cases[0]!.sources).toBeUndefined();
    expect(large.summary.judge).toEqual(judge.summarise(judged));
    // Retrieval figures from the records; the per-query latency stays the run's sample.
    expect(base.summary.retrieval_batch).toBeDefined();
    expect(large.summary.retrieval).toEqual({
      ...summariseRetrieval(
        judged,
        base.nodes.map((n) => n.name),
      ),
      latency: base.summary.retrieval.latency,
    });
  });
});

describe('merge of a large run', () => {
  it('writes the cases in position order from the shards, with the figures of the whole records', async () => {
    const dir = workDir('jsonl-merge');
    const base = readResults(RUN);
    const total = LARGE_RUN_CASES + 2;
    const all = Array.from({ length: total }, (_, i) => ({ ...base.cases[i % base.cases.length]!, id: `c${i}` }));
    const shard = (index: number): RunResult => {
      const positions = all.map((_, i) => i).filter((i) => i % 2 === index - 1);
      return {
        ...base,
        name: `demo-shard-${index}-of-2`,
        shard: { index, count: 2, total, positions },
        cases: positions.map((p) => all[p]!),
      };
    };
    const files = [1, 2].map(
      (i) => writeResults(join(dir, `s${i}`), shard(i), '# d\n', { stamp: '20260101-000000' }).json,
    );
    const { files: out } = await runMerge({ files, out: join(dir, 'merged'), report: false, cwd: dir, env: {} });
    const merged = openResults(out.json);
    expect(merged.format).toBe('jsonl');
    expect([...merged.cases()]).toEqual(all);
    const whole = mergeShards(
      files.map((f) => ({
        file: f,
        result: readResults(f),
        recordDigests: [...openResults(f).recordJson()].map(recordDigest),
      })),
    );
    expect(merged.summary).toEqual(whole.summary);
  });
});

describe('shard record digests in a JSON Lines file', () => {
  it('are the digests of its lines as written; a line edited since is refused, naming file and case', async () => {
    const dir = workDir('jsonl-shard-digests');
    const base = readResults(RUN);
    const total = base.cases.length;
    const files = [1, 2].map((index) => {
      const positions = base.cases.map((_, i) => i).filter((i) => i % 2 === index - 1);
      const shard: RunResult = {
        ...base,
        name: `demo-shard-${index}-of-2`,
        shard: { index, count: 2, total, positions },
        cases: positions.map((p) => base.cases[p]!),
      };
      return writeResults(join(dir, `s${index}`), shard, '# d\n', { stamp: '20260101-000000', format: 'jsonl' }).json;
    });
    const casesFile = casesFileOf(files[0]!);
    const lines = readFileSync(casesFile, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    // docs/scale.md: the first 16 hex digits of SHA-256 over each line, without its newline.
    const header = JSON.parse(readFileSync(files[0]!, 'utf8')) as { shard: { record_digests: string[] } };
    expect(header.shard.record_digests).toEqual(
      lines.map((l) => createHash('sha256').update(l).digest('hex').slice(0, 16)),
    );
    const merged = await runMerge({ files, out: join(dir, 'merged'), report: false, cwd: dir, env: {} });
    expect(merged.result.cases).toHaveLength(total);

    const second = JSON.parse(lines[1]!) as CaseRecord;
    lines[1] = JSON.stringify({ ...second, answer: 'An answer nobody generated.' });
    writeFileSync(casesFile, `${lines.join('\n')}\n`);
    const refused = await runMerge({ files, out: join(dir, 'refused'), report: false, cwd: dir, env: {} }).then(
      () => undefined,
      (e: unknown) => e as InputError,
    );
    expect(refused).toBeInstanceOf(InputError);
    expect(refused!.problems).toEqual([
      `${files[0]}: case ${second.id} (record 2) is not the record this shard wrote (its digest differs): edited since?`,
    ]);
  });
});

describe('light records', () => {
  it('give the summaries of the full records', () => {
    const run = readResults(RUN);
    const light = new LightRecords();
    const lights = run.cases.map((r) => light.of(r));
    // They are light: no sources, one item per node, the answer's start.
    expect(lights.every((r) => r.sources === undefined)).toBe(true);
    expect(JSON.stringify(lights).length * 3).toBeLessThan(JSON.stringify(run.cases).length);
    const nodes = run.nodes.map((n) => n.name);
    expect(summariseRetrieval(lights, nodes)).toEqual(summariseRetrieval(run.cases, nodes));
    const node = storedEvidenceNode(run.summary);
    expect(summariseGeneration(lights, node)).toEqual(run.summary.generation);
    const j = run.summary.judge!;
    const opts = { judge: { id: j.judge, offline: j.offline, promptVersions: j.prompt_versions } };
    expect(summariseJudge(lights, opts)).toEqual(summariseJudge(run.cases, opts));
    const probes = readResults(PROBES);
    expect(summariseProbes(probes.cases.map((r) => light.of(r)))).toEqual(probes.summary.probes);
    // Reading light gives the same figures compare and calibrate read.
    expect(readResults(RUN, { light: true }).cases).toEqual(lights);
  });
});

describe('records kept on disk come back in case order', () => {
  const records = (): CaseRecord[] => readResults(RUN).cases.slice(0, 5);
  const newLedger = (prefix: string, cases: number) =>
    Ledger.create(workDir(prefix), 'run', {
      ledger: 1,
      kind: 'run',
      config_digest: 'x',
      created_at: '2026-01-01T00:00:00.000Z',
      cases,
    });

  it('a spool put in any order reads in position order', () => {
    const rs = records();
    const spool = new CaseSpool(rs.length);
    for (const i of [3, 0, 4, 1, 2]) spool.put(i, JSON.stringify({ case: rs[i] }));
    expect([...spool.records()]).toEqual(rs);
    spool.dispose();
  });

  it('the ledger keeps entries, reads records back in the order asked, and passes over other kinds of line', () => {
    const rs = records();
    const ledger = newLedger('jsonl-ledger', rs.length);
    for (const r of [...rs].reverse()) {
      ledger.append({ record: r, line: JSON.stringify({ case: r }) });
      appendFileSync(ledger.file, `${JSON.stringify({ batch: { id: `b-${r.id}` } })}\n`);
    }
    const ids = rs.map((r) => r.id);
    expect([...ledger.store(ids).records()]).toEqual(rs);
    const opened = Ledger.open(ledger.file);
    expect(opened.warnings).toEqual([]);
    expect([...opened.done.keys()]).toEqual([...ids].reverse());
    expect(opened.done.get(ids[0]!)?.status).toBe(rs[0]!.status);
    expect([...opened.store(ids).records()]).toEqual(rs);
    expect(opened.record(ids[2]!)).toEqual(rs[2]);
    expect(opened.record('nope')).toBeUndefined();
  });

  it('hands out the records it kept once, as stored, and reads the others back', () => {
    const rs = records();
    const ledger = newLedger('jsonl-ledger-kept', rs.length);
    // Appended before keeping was asked, then three kept of the four appended after (at most 3).
    ledger.append({ record: rs[0]!, line: JSON.stringify({ case: rs[0] }) });
    ledger.keepAppended(3);
    const stored = rs.slice(1).map((r) => structuredClone(r));
    for (const r of stored) ledger.append({ record: r, line: JSON.stringify({ case: r }) });
    const ids = rs.map((r) => r.id);
    const first = [...ledger.store(ids).records()];
    expect(first).toEqual(rs);
    // The kept objects themselves, not copies; the first and the fifth were read from the file.
    expect(first.map((r, i) => (i >= 1 && i <= 3 ? r === stored[i - 1] : r === rs[i]))).toEqual([
      false,
      true,
      true,
      true,
      false,
    ]);
    // Handed out once: a second reader gets its own copies from the file.
    const second = [...ledger.store(ids).records()];
    expect(second).toEqual(rs);
    expect(second.some((r, i) => r === first[i])).toBe(false);
  });
});

// Large runs, streamed: wall time and peak RSS of `retrieval` and `run` (offline generator and
// judge) on the embedded demo at N synthetic cases (the demo's questions reused with new ids, as
// bench/retrieval-replay.mjs makes them), and of reading the results back (the streamed reader,
// and the light read compare and calibrate use). Each step runs in its own process, so each peak
// RSS is that step's; a first small run fills the demo's cache (its snapshot is built once, at
// about 1 GB, and would otherwise be charged to the first step). See bench/README.md ("streamed results").
//
//   node bench/stream-100k.mjs                                   # run at 10k, 50k, 100k; no retrieval
//   node bench/stream-100k.mjs --retrieval 10000,100000 --run 10000,50000
//   node bench/stream-100k.mjs --run 100000 --no-read            # without reading the results back
//   node bench/stream-100k.mjs --run 100000 --no-read --no-gc-pacing  # without the executable's paced collections
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    retrieval: { type: 'string', default: '' },
    run: { type: 'string', default: '10000,50000,100000' },
    'no-read': { type: 'boolean', default: false },
    // The executable paces full collections while a run is read back (src/io/heap.ts); this turns it off.
    'no-gc-pacing': { type: 'boolean', default: false },
    // Internal: one step in this process.
    step: { type: 'string' },
    cases: { type: 'string' },
    out: { type: 'string' },
    file: { type: 'string' },
  },
});
const dist = resolve(process.env.RETRIEVAL_DIST ?? join(import.meta.dirname, '..', 'dist'));
const load = (p) => import(pathToFileURL(join(dist, p)).href);
const root = resolve(import.meta.dirname, '..');
const mb = (kb) => Math.round(kb / 1024);

/** One step, in this process; prints one JSON line. */
async function step() {
  const t0 = performance.now();
  // As the executable does (src/cli/ragaudit.ts): children run with --expose-gc.
  if (!values['no-gc-pacing'] && typeof globalThis.gc === 'function') {
    const { allowCollections } = await load('io/heap.js');
    allowCollections(() => globalThis.gc());
  }
  const n = Number(values.cases);
  let file;
  if (values.step === 'retrieval' || values.step === 'run') {
    const { loadConfig } = await load('config/load.js');
    const { createRunContext, casePaths } = await load('runs/context.js');
    const { loadCases } = await load('cases/load.js');
    const { SILENT_HOOKS } = await load('app/hooks.js');
    const loaded = loadConfig(undefined, {}, []);
    const ctx = await createRunContext(loaded, { env: {}, cwd: root });
    const base = loadCases(casePaths(loaded).map((p) => resolve(root, p)));
    const cases = Array.from({ length: n }, (_, i) => {
      const c = base[i % base.length];
      return { ...c, value: { ...c.value, id: `${c.value.id}-${i}` } };
    });
    try {
      if (values.step === 'retrieval') {
        const { retrieveAndWrite } = await load('app/retrieval.js');
        ({
          files: { json: file },
        } = await retrieveAndWrite(ctx, cases, [], SILENT_HOOKS, { outputDir: values.out }));
      } else {
        // The audit's per-case retrieval answered from the demo's questions retrieved once (the
        // stand-in: a run's retrieval of reused questions is the retrieval bench's subject).
        const retrieved = new Map();
        for (const c of base) retrieved.set(c.value.question, await ctx.graph.run(c.value.question));
        ctx.graph.run = async (q) => retrieved.get(q);
        const { auditAndWrite } = await load('app/audit.js');
        ({
          files: { json: file },
        } = await auditAndWrite(ctx, cases, [], SILENT_HOOKS, { kind: 'run', outputDir: values.out, env: {} }));
      }
    } finally {
      await ctx.close();
    }
  } else if (values.step === 'read') {
    file = values.file;
    const { openResults } = await load('runs/results-file.js');
    const opened = openResults(file);
    let count = 0;
    for (const c of opened.cases()) if (c.id) count++;
    if (count !== n) throw new Error(`read ${count} cases, expected ${n}`);
  } else if (values.step === 'light') {
    file = values.file;
    const { readResults } = await load('runs/results-file.js');
    const r = readResults(file, { light: true });
    if (r.cases.length !== n) throw new Error(`read ${r.cases.length} cases, expected ${n}`);
  }
  const secs = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ file, secs, rss: mb(process.resourceUsage().maxRSS) }));
}

function child(args) {
  const pacing = values['no-gc-pacing'] ? ['--no-gc-pacing'] : [];
  const out = execFileSync(process.execPath, ['--expose-gc', import.meta.filename, ...args, ...pacing], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 26,
  });
  return JSON.parse(out.trim().split('\n').at(-1));
}

async function bench() {
  const sizes = (s) => (s ? s.split(',').filter(Boolean).map(Number) : []);
  const row = (what, n, r, extra = '') =>
    console.log(
      `| ${what} | ${n.toLocaleString('en')} | ${r.secs.toFixed(1)} s | ${Math.round(n / r.secs)} cases/s | ${r.rss} MB | ${loadavg()[0].toFixed(1)} |${extra}`,
    );
  const warm = mkdtempSync(join(tmpdir(), 'ragaudit-stream-bench-'));
  try {
    child(['--step', 'run', '--cases', '20', '--out', warm]);
  } finally {
    rmSync(warm, { recursive: true, force: true });
  }
  console.log('| step | cases | wall | rate | peak RSS | load |\n|---|---|---|---|---|---|');
  for (const [kind, list] of [
    ['retrieval', sizes(values.retrieval)],
    ['run', sizes(values.run)],
  ]) {
    for (const n of list) {
      const out = mkdtempSync(join(tmpdir(), 'ragaudit-stream-bench-'));
      try {
        const r = child(['--step', kind, '--cases', String(n), '--out', out]);
        const cases = r.file.replace(/\.json$/, '.cases.jsonl');
        const size = statSync(cases, { throwIfNoEntry: false })?.size ?? statSync(r.file).size;
        row(kind, n, r, ` ${Math.round(size / 1e6)} MB of cases`);
        if (values['no-read']) continue;
        row(`read (${kind}, streamed)`, n, child(['--step', 'read', '--cases', String(n), '--file', r.file]));
        row(`read (${kind}, light)`, n, child(['--step', 'light', '--cases', String(n), '--file', r.file]));
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    }
  }
}

if (values.step) await step();
else await bench();

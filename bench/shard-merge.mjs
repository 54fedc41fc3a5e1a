#!/usr/bin/env node
// Shard and merge at scale: N synthetic cases run once whole and once as S shards (`--shard I/S`,
// the S processes at once, as the jobs of a CI matrix would run), the shards merged with
// `ragaudit merge`, and the merged results compared with the whole run's: every case record and
// every summary figure, timings aside (latencies, the batch block, stamps, the response cache's
// flag). `run` answers from a local OpenAI-compatible server (bench/audit-concurrency.mjs --serve).
// Exit 1 when the two differ.
//
//   npx tsc -p tsconfig.build.json
//   node bench/shard-merge.mjs [--cases 2000] [--shards 4] [--kind run|retrieval] [--delay 5]
import { fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { casesYaml, GRAPHS } from './lib.mjs';

const root = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '2000' },
    shards: { type: 'string', default: '4' },
    kind: { type: 'string', default: 'run' },
    delay: { type: 'string', default: '5' },
  },
});
const N = Number(values.cases);
const S = Number(values.shards);
const kind = values.kind;
if (kind !== 'run' && kind !== 'retrieval') throw new Error('--kind: run or retrieval');
const cli = path.join(root, 'dist', 'cli', 'ragaudit.js');
const { openResults } = await import(pathToFileURL(path.join(root, 'dist', 'runs', 'results-file.js')).href);

/** One CLI process: its wall time and peak RSS (from /usr/bin/time when present). */
async function timed(args, cwd) {
  const time = fs.existsSync('/usr/bin/time');
  const cmd = time ? '/usr/bin/time' : process.execPath;
  const argv = time ? ['-f', 'peak-rss-kb %M', process.execPath, cli, ...args] : [cli, ...args];
  const t0 = performance.now();
  const child = spawn(cmd, argv, {
    cwd,
    env: { PATH: process.env.PATH, OPENAI_API_KEY: 'sk-bench-not-a-key' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => child.on('exit', r));
  if (code !== 0) throw new Error(`ragaudit ${args.join(' ')} exited ${code}\n${err}`);
  const rss = Number(/peak-rss-kb (\d+)/.exec(err)?.[1] ?? NaN) / 1024;
  return { secs: (performance.now() - t0) / 1000, rss };
}

/** The results file a command wrote in `dir` (the one whose name ends with `suffix`). */
function resultsIn(dir, suffix = '.json') {
  const f = fs.readdirSync(dir).find((x) => x.endsWith(suffix) && !x.endsWith('.ledger.jsonl'));
  if (!f) throw new Error(`no results file in ${dir}`);
  return path.join(dir, f);
}

/** A value without what differs from run to run of one config. */
function withoutTimings(v) {
  if (Array.isArray(v)) return v.map(withoutTimings);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !['latency_ms', 'latency', 'retrieval_batch', 'created_at', 'cached'].includes(k))
        .map(([k, x]) => [k, withoutTimings(x)]),
    );
  return v;
}

/** The first place two values differ, as a path, or undefined. */
function firstDifference(a, b, at = '') {
  if (JSON.stringify(a) === JSON.stringify(b)) return undefined;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[k], b[k], `${at}.${k}`);
      if (d) return d;
    }
  }
  return at || '(root)';
}

const server =
  kind === 'run'
    ? fork(path.join(root, 'bench', 'audit-concurrency.mjs'), ['--serve', '--delay', values.delay], {
        stdio: 'inherit',
      })
    : undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ragaudit-bench-shards-'));
try {
  const url = server ? (await new Promise((r) => server.once('message', r))).url : undefined;
  const shared = path.join(root, '.cache', 'ragaudit', 'demo-db');
  fs.mkdirSync(shared, { recursive: true });
  fs.mkdirSync(path.join(dir, '.cache', 'ragaudit'), { recursive: true });
  fs.symlinkSync(shared, path.join(dir, '.cache', 'ragaudit', 'demo-db'));
  fs.writeFileSync(path.join(dir, 'cases.yml'), casesYaml(N));
  fs.writeFileSync(
    path.join(dir, 'bench.yml'),
    'name: shards\ncases: [cases.yml]\n' +
      GRAPHS.demo +
      (url
        ? `generator: { provider: openai, model: bench-model, base_url: "${url}/v1", concurrency: 16, retries: 0, timeout_ms: 30000 }\n`
        : '') +
      'judge: { provider: none }\n',
  );
  const common = [kind, '--config', 'bench.yml', '--no-report'];
  const whole = await timed([...common, '--out', 'whole'], dir);
  const t0 = performance.now();
  const shards = await Promise.all(
    Array.from({ length: S }, (_, i) => timed([...common, '--shard', `${i + 1}/${S}`, '--out', `shard${i + 1}`], dir)),
  );
  const shardsWall = (performance.now() - t0) / 1000;
  const files = Array.from({ length: S }, (_, i) => resultsIn(path.join(dir, `shard${i + 1}`)));
  const merge = await timed(['merge', ...files, '--out', 'merged', '--no-report'], dir);

  const a = openResults(resultsIn(path.join(dir, 'whole')));
  const b = openResults(resultsIn(path.join(dir, 'merged')));
  const casesA = [...a.cases()].map(withoutTimings);
  const casesB = [...b.cases()].map(withoutTimings);
  const recordDiff = firstDifference(casesA, casesB);
  const summaryDiff = firstDifference(withoutTimings(a.summary), withoutTimings(b.summary));
  const sampled = files.reduce((n, f) => n + (openResults(f).summary.retrieval_batch?.latency_sample ?? 0), 0);
  const merged = Object.values(b.summary.retrieval.latency)[0]?.n;
  console.log(`${kind}, ${N} cases, ${S} shards (format ${a.format})`);
  console.log(`whole run    ${whole.secs.toFixed(1)} s, peak RSS ${whole.rss.toFixed(0)} MB`);
  console.log(
    `${S} shards    ${shardsWall.toFixed(1)} s at once (each ${shards.map((s) => s.secs.toFixed(1)).join(' / ')} s, peak RSS ${shards.map((s) => s.rss.toFixed(0)).join(' / ')} MB)`,
  );
  console.log(`merge        ${merge.secs.toFixed(1)} s, peak RSS ${merge.rss.toFixed(0)} MB`);
  console.log(
    `records      ${casesA.length} whole, ${casesB.length} merged: ${recordDiff ? `DIFFER at ${recordDiff}` : 'equal'}`,
  );
  console.log(`summary      ${summaryDiff ? `DIFFERS at ${summaryDiff}` : 'equal'} (timings aside)`);
  console.log(`latency      merged over ${merged} sample questions (the shards timed ${sampled})`);
  console.log(`load         ${os.loadavg()[0].toFixed(1)}`);
  if (recordDiff || summaryDiff || casesA.length !== N || merged !== sampled) process.exitCode = 1;
} finally {
  server?.disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
}

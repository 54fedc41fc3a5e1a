#!/usr/bin/env node
// Times the audit (`ragaudit run`) on N synthetic questions at generator concurrency C against a
// local OpenAI-compatible server (its own process) that answers every request after D ms. Each
// run gets a fresh response cache, so every case calls the server; the embedded demo database's
// cache is shared with the repository's (.cache/ragaudit/demo-db), so it is built once at most.
//
//   npx tsc -p tsconfig.build.json
//   node bench/audit-concurrency.mjs [--cases 800] [--concurrency 16] [--delay 100]
//        [--graph light|demo] [--mode both|cli|split] [--runs 1] [--prof DIR]
//
// Two measurements of the same audit path (dist/):
//   cli    the built CLI as a child process, end to end: total wall (process start to exit) and
//          the server's span (first request in → last response out). Retrieval on the embedded
//          database runs in the same lanes and on the same thread as generation, so it is in
//          that span too.
//   split  in-process: createRunContext, then every case's retrieval first (timed as its own
//          phase), then runAudit with those retrieval results — generator, cache, deterministic
//          scorers (one database query per case), ledger, all real. The server's span of this
//          phase is the generation-only figure.
// Target (issue 3): generation of 800 cases at concurrency 16 within 1.2 × the ideal
// N × D / C = 5 s, i.e. ≤ 6 s; it applies to the generation-only figure (split).
// --graph light: one keyword channel over posts + the offline lexical rerank (cheap retrieval);
// --graph demo: the built-in demo graph (3 channels, 2 fusions, rerank).
// --prof DIR writes a V8 CPU profile of the CLI process (cli mode).
import { fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { casesYaml, GRAPHS } from './lib.mjs';

const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), '..');
const dist = (p) => pathToFileURL(path.join(root, 'dist', p)).href;
const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '800' },
    concurrency: { type: 'string', default: '16' },
    delay: { type: 'string', default: '100' },
    graph: { type: 'string', default: 'light' },
    mode: { type: 'string', default: 'both' },
    runs: { type: 'string', default: '1' },
    prof: { type: 'string' },
    serve: { type: 'boolean' },
  },
});
const N = Number(values.cases);
const C = Number(values.concurrency);
const D = Number(values.delay);

/**
 * The server process: chat completions after D ms; GET /v1/models lists the model at once, as
 * vLLM and Ollama do (a client checks the model there before its first request); GET /stats
 * returns and clears its log of completions.
 */
function serve() {
  let log = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const content = 'According to [[1]], yes. To go further, open the thread or ask the community in a new topic.';
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: [{ id: 'bench-model', object: 'model', created: 0, owned_by: 'bench' }],
        }),
      );
      return;
    }
    if (req.method === 'GET') {
      res.end(JSON.stringify({ log, maxInFlight }));
      log = [];
      maxInFlight = 0;
      return;
    }
    const arrived = performance.now();
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-bench',
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: 'bench-model',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content, refusal: null },
                logprobs: null,
                finish_reason: 'stop',
              },
            ],
            usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
          }),
        );
        inFlight--;
        log.push({ arrived, answered: performance.now() });
      }, D),
    );
  });
  server.listen(0, '127.0.0.1', () => process.send({ url: `http://127.0.0.1:${server.address().port}` }));
  process.on('disconnect', () => process.exit(0));
}

/** A work dir with the cases, a config pointing at the server, and the shared demo-db cache. */
function workDir(url) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ragaudit-bench-run-'));
  const shared = path.join(root, '.cache', 'ragaudit', 'demo-db');
  fs.mkdirSync(shared, { recursive: true });
  fs.mkdirSync(path.join(dir, 'cache'));
  fs.symlinkSync(shared, path.join(dir, 'cache', 'demo-db'));
  fs.writeFileSync(path.join(dir, 'cases.yml'), casesYaml(N));
  fs.writeFileSync(
    path.join(dir, 'bench.yml'),
    `name: bench\ncases: [cases.yml]\n${GRAPHS[values.graph]}` +
      `generator: { provider: openai, model: bench-model, base_url: "${url}/v1", concurrency: ${C}, retries: 0, timeout_ms: 30000 }\n` +
      'judge: { provider: none }\noutput_dir: out\ncache_dir: cache\n',
  );
  return dir;
}

const ENV = { PATH: process.env.PATH, OPENAI_API_KEY: 'sk-bench-not-a-key' };

async function stats(url) {
  const { log, maxInFlight } = await (await fetch(`${url}/stats`)).json();
  if (log.length !== N) throw new Error(`the server saw ${log.length} requests, expected ${N}`);
  const first = Math.min(...log.map((l) => l.arrived));
  const last = Math.max(...log.map((l) => l.answered));
  const span = (last - first) / 1000;
  const busy = log.reduce((a, l) => a + (l.answered - l.arrived), 0) / 1000;
  return { span, meanInFlight: busy / span, maxInFlight };
}

/** The built CLI end to end. */
async function cliRun(url) {
  const dir = workDir(url);
  const prof = values.prof ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(values.prof)] : [];
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [...prof, path.join(root, 'dist', 'cli', 'main.js'), 'run', '--config', 'bench.yml'],
    { cwd: dir, env: ENV, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => child.on('exit', r));
  const total = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`ragaudit run exited ${code}\n${err}`);
  fs.rmSync(dir, { recursive: true, force: true });
  return { total, ...(await stats(url)) };
}

/** In-process: retrieval of every case first, then the audit over those results. */
async function splitRun(url) {
  const dir = workDir(url);
  const [
    { loadConfig },
    { createRunContext, casePaths },
    { loadCases },
    { runAudit },
    { createGenerator },
    { PROMPTS_DIR },
    { forEachConcurrent },
  ] = await Promise.all(
    [
      'config/load.js',
      'runs/context.js',
      'cases/load.js',
      'runs/audit-run.js',
      'runs/generator.js',
      'paths.js',
      'runs/pool.js',
    ].map((p) => import(dist(p))),
  );
  const t0 = performance.now();
  const loaded = loadConfig(path.join(dir, 'bench.yml'), ENV);
  const ctx = await createRunContext(loaded, { env: ENV, cwd: dir });
  const cases = loadCases(casePaths(loaded));
  const tOpen = performance.now();
  const retrieved = new Map();
  await forEachConcurrent(
    cases,
    ctx.config.retrieval.concurrency,
    async ({ value }) => void retrieved.set(value.question, await ctx.graph.run(value.question)),
  );
  const tRetrieved = performance.now();
  // The audit asks the graph again: answer from what was just retrieved.
  ctx.graph.run = async (q) => retrieved.get(q);
  const cpu0 = process.cpuUsage();
  try {
    const generator = createGenerator(ctx.config, ENV, PROMPTS_DIR, ctx.cacheDir);
    const { result } = await runAudit(
      { ctx, generator, promptsDir: PROMPTS_DIR, intentRules: [], forumName: 'The Last & Welt', clauses: [] },
      cases,
      [],
      { outputDir: path.join(dir, 'out') },
    );
    const errors = result.cases.filter((c) => c.status !== 'ok').length;
    if (errors) throw new Error(`${errors} cases ended in error: ${result.cases.find((c) => c.error)?.error?.message}`);
  } finally {
    await ctx.close();
  }
  const tDone = performance.now();
  const cpu = process.cpuUsage(cpu0);
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    open: (tOpen - t0) / 1000,
    retrieval: (tRetrieved - tOpen) / 1000,
    audit: (tDone - tRetrieved) / 1000,
    cpu: (cpu.user + cpu.system) / 1e6,
    ...(await stats(url)),
  };
}

async function bench() {
  const server = fork(self, ['--serve', '--delay', String(D)], { stdio: 'inherit' });
  const { url } = await new Promise((r) => server.once('message', r));
  const ideal = (N * D) / 1000 / C;
  const verdict = (s) => `${(s / ideal).toFixed(2)}× ideal, ${s <= ideal * 1.2 ? 'within' : 'OVER'} the 1.2× target`;
  console.log(
    `${N} cases, concurrency ${C}, server delay ${D} ms, graph ${values.graph}: ideal generation ${ideal.toFixed(2)} s, target ≤ ${(ideal * 1.2).toFixed(2)} s`,
  );
  try {
    for (let i = 1; i <= Number(values.runs); i++) {
      if (values.mode !== 'split') {
        const r = await cliRun(url);
        console.log(
          `cli   #${i}: total wall ${r.total.toFixed(2)} s · server span ${r.span.toFixed(2)} s (${verdict(r.span)}; retrieval interleaved) · in flight mean ${r.meanInFlight.toFixed(1)}, max ${r.maxInFlight} · load ${os.loadavg()[0].toFixed(1)}`,
        );
      }
      if (values.mode !== 'cli') {
        const r = await splitRun(url);
        console.log(
          `split #${i}: generation ${r.span.toFixed(2)} s (${verdict(r.span)}) · audit phase ${r.audit.toFixed(2)} s (CPU ${r.cpu.toFixed(2)} s) · retrieval ${r.retrieval.toFixed(2)} s · ` +
            `database open ${r.open.toFixed(2)} s · in flight mean ${r.meanInFlight.toFixed(1)}, max ${r.maxInFlight} · load ${os.loadavg()[0].toFixed(1)}`,
        );
      }
    }
  } finally {
    server.disconnect();
  }
}

if (values.serve) serve();
else await bench();

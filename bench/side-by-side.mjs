#!/usr/bin/env node
// The side-by-side: N cases at generator concurrency C against one local OpenAI-compatible
// server answering every chat completion after D ms and listing its model at GET /v1/models at
// once, as vLLM and Ollama do (bench/audit-concurrency.mjs --serve, its own process), timed as
// whole processes, rounds interleaved so both see the same machine:
//   ragaudit  the executable (dist/cli/ragaudit.js run) on the built-in demo graph (3 channels,
//             2 fusions, offline rerank) with the generator pointed at the server, no judge;
//   sdk       a bare loop over the `openai` SDK: the same N requests, C at a time, nothing else.
// Each ragaudit run gets a fresh response cache, so every case calls the server.
//
//   npx tsc -p tsconfig.build.json
//   node bench/side-by-side.mjs [--cases 200] [--concurrency 10] [--delay 50] [--rounds 3]
//   node bench/side-by-side.mjs --db postgres://…/ragaudit_demo   # the demo on a server (bench/pg-demo.mjs)
//
// Target: ragaudit within 2 × the bare loop in the same round; the floor is N × D / C.
import { fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { casesYaml, GRAPHS } from './lib.mjs';

const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), '..');
const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '10' },
    delay: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    loop: { type: 'string' },
    // A PostgreSQL database holding the demo forum (bench/pg-demo.mjs) instead of the embedded one.
    db: { type: 'string' },
  },
});
const N = Number(values.cases);
const C = Number(values.concurrency);
const D = Number(values.delay);

/** The bare loop, run as its own process (`--loop URL`): N chat completions, C at a time. */
async function loop(url) {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey: 'sk-bench-not-a-key', baseURL: `${url}/v1`, maxRetries: 0 });
  let next = 0;
  const lane = async () => {
    while (next < N) {
      const i = next++;
      const r = await client.chat.completions.create({
        model: 'bench-model',
        messages: [{ role: 'user', content: `How should I care for my shoes? (bench question ${i})` }],
        max_tokens: 400,
      });
      if (!r.choices[0]?.message.content) throw new Error('empty answer');
    }
  };
  await Promise.all(Array.from({ length: C }, lane));
}

/** A work dir with the cases, a config pointing at the server, and the repository's demo-db cache. */
function workDir(url) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ragaudit-bench-side-'));
  const shared = path.join(root, '.cache', 'ragaudit', 'demo-db');
  fs.mkdirSync(shared, { recursive: true });
  fs.mkdirSync(path.join(dir, '.cache', 'ragaudit'), { recursive: true });
  fs.symlinkSync(shared, path.join(dir, '.cache', 'ragaudit', 'demo-db'));
  fs.writeFileSync(path.join(dir, 'cases.yml'), casesYaml(N));
  fs.writeFileSync(
    path.join(dir, 'bench.yml'),
    'name: bench\ncases: [cases.yml]\n' +
      GRAPHS.demo +
      `generator: { provider: openai, model: bench-model, base_url: "${url}/v1", concurrency: ${C}, retries: 0, timeout_ms: 30000 }\n` +
      'judge: { provider: none }\noutput_dir: out\n',
  );
  return dir;
}

async function timed(args, cwd) {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH, OPENAI_API_KEY: 'sk-bench-not-a-key' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => child.on('exit', r));
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}\n${err}`);
  return (performance.now() - t0) / 1000;
}

async function main() {
  const server = fork(path.join(root, 'bench', 'audit-concurrency.mjs'), ['--serve', '--delay', String(D)], {
    stdio: 'inherit',
  });
  const { url } = await new Promise((r) => server.once('message', r));
  const floor = (N * D) / C / 1000;
  console.log(`${N} cases, concurrency ${C}, server delay ${D} ms: floor ${floor.toFixed(2)} s`);
  try {
    for (let round = 1; round <= Number(values.rounds); round++) {
      const sdk = await timed([self, '--loop', url, '--cases', String(N), '--concurrency', String(C)], root);
      await fetch(`${url}/stats`);
      const dir = workDir(url);
      const db = values.db ? ['--db', values.db] : [];
      const ours = await timed(
        [path.join(root, 'dist', 'cli', 'ragaudit.js'), 'run', '--config', 'bench.yml', ...db],
        dir,
      );
      fs.rmSync(dir, { recursive: true, force: true });
      const { log } = await (await fetch(`${url}/stats`)).json();
      // N answers (the check before the first case finds the model in the server's list).
      if (log.length !== N) throw new Error(`ragaudit sent ${log.length} completions, expected ${N}`);
      console.log(
        `round ${round}: ragaudit ${ours.toFixed(2)} s · bare SDK loop ${sdk.toFixed(2)} s · ratio ${(ours / sdk).toFixed(2)} · load ${os.loadavg()[0].toFixed(1)}`,
      );
    }
  } finally {
    server.disconnect();
  }
}

if (values.loop) await loop(values.loop);
else await main();

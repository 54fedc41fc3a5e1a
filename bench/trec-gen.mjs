#!/usr/bin/env node
// Generates a synthetic TREC qrels + run for benchmarking `ragaudit trec`, deterministically
// (seeded PRNG): by default 50,000 queries x 100 results (5 million run lines, ~230 MB).
//
//   node bench/trec-gen.mjs [--dir DIR] [--queries N] [--depth K] [--seed S] [--shuffle F]
//
// Run: scores fall with rank, 4 decimals, ~5% tied with the previous one; a fraction F
// (default 0.1) of the queries have their lines written in random order, so the evaluator
// must sort them. Qrels: for most queries 1-3 graded (1..3) relevant docs among the
// retrieved, 3 judged non-relevant, one relevant doc never retrieved; 1% of queries are all
// zeros; 1% of run queries have no judgements; 1,000 judged queries are absent from the run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { mulberry32 } from '../dist/scoring/statistics.js';

const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: path.join(os.tmpdir(), 'ragaudit-trec-bench') },
    queries: { type: 'string', default: '50000' },
    depth: { type: 'string', default: '100' },
    seed: { type: 'string', default: '1' },
    shuffle: { type: 'string', default: '0.1' },
  },
});
const numQueries = Number(values.queries);
const depth = Number(values.depth);
const shuffle = Number(values.shuffle);
const COLLECTION = 2_000_000;

const rnd = mulberry32(Number(values.seed));
const int = (n) => Math.floor(rnd() * n);
const docno = (n) => `D${String(n).padStart(8, '0')}`;

fs.mkdirSync(values.dir, { recursive: true });
const runPath = path.join(values.dir, 'run.txt');
const qrelsPath = path.join(values.dir, 'qrels.txt');
const runFd = fs.openSync(runPath, 'w');
const qrelsFd = fs.openSync(qrelsPath, 'w');
let runChunk = [];
let qrelsChunk = [];
const flush = (force) => {
  if (force || runChunk.length > 20000) {
    fs.writeSync(runFd, runChunk.join(''));
    runChunk = [];
  }
  if (force || qrelsChunk.length > 20000) {
    fs.writeSync(qrelsFd, qrelsChunk.join(''));
    qrelsChunk = [];
  }
};

let runLines = 0;
let qrelsLines = 0;
for (let q = 0; q < numQueries; q++) {
  const qid = `q${q}`;
  const docs = new Set();
  while (docs.size < depth) docs.add(int(COLLECTION));
  const list = [...docs];
  const lines = [];
  let score = 20 + rnd() * 10;
  for (let i = 0; i < depth; i++) {
    if (i > 0 && rnd() >= 0.05) score -= 0.0001 + rnd() * 0.2;
    lines.push(`${qid} Q0 ${docno(list[i])} ${i + 1} ${score.toFixed(4)} ragaudit-bench\n`);
  }
  if (rnd() < shuffle) {
    for (let i = lines.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [lines[i], lines[j]] = [lines[j], lines[i]];
    }
  }
  runChunk.push(...lines);
  runLines += lines.length;

  const kind = rnd();
  if (kind < 0.01) continue; // run query without judgements
  const judged = new Map();
  if (kind < 0.02) {
    for (let k = 0; k < 4; k++) judged.set(list[int(depth)], 0);
  } else {
    const nrel = 1 + int(3);
    for (let k = 0; k < nrel; k++) judged.set(list[int(depth)], 1 + int(3));
    for (let k = 0; k < 3; k++) if (!judged.has(list[int(depth)])) judged.set(list[int(depth)], 0);
    let extra = int(COLLECTION);
    while (docs.has(extra) || judged.has(extra)) extra = int(COLLECTION);
    judged.set(extra, 1);
  }
  for (const [d, rel] of judged) qrelsChunk.push(`${qid} 0 ${docno(d)} ${rel}\n`);
  qrelsLines += judged.size;
  flush(false);
}
for (let q = numQueries; q < numQueries + 1000; q++) {
  qrelsChunk.push(`q${q} 0 ${docno(int(COLLECTION))} ${1 + int(3)}\n`);
  qrelsLines++;
}
flush(true);
fs.closeSync(runFd);
fs.closeSync(qrelsFd);
const mb = (p) => (fs.statSync(p).size / 1e6).toFixed(1);
console.log(`${runPath}: ${runLines} lines, ${mb(runPath)} MB`);
console.log(`${qrelsPath}: ${qrelsLines} lines, ${mb(qrelsPath)} MB`);

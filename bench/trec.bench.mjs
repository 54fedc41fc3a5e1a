#!/usr/bin/env node
// Times `ragaudit trec` on the synthetic 50,000 x 100 data set: wall time and peak RSS of a
// whole process (node start, reading, parsing, evaluating, printing), measured by
// /usr/bin/time -v (Debian package `time`). Generates the data first if it is missing.
//
//   npx tsc -p tsconfig.build.json
//   node bench/trec.bench.mjs [--dir DIR] [--runs N]
//
// TREC_DIST=DIR runs another build of src/ than dist/ (see bench/trec-run.mjs). Other jobs on
// the machine stretch the wall time; the load average is printed so figures can be judged.
//
// Targets: under 5 s wall and 1.5 GB peak RSS on a 2-core machine.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: path.join(os.tmpdir(), 'ragaudit-trec-bench') },
    runs: { type: 'string', default: '3' },
  },
});
const qrels = path.join(values.dir, 'qrels.txt');
const run = path.join(values.dir, 'run.txt');
if (!fs.existsSync(qrels) || !fs.existsSync(run)) {
  const gen = spawnSync(process.execPath, [path.join(here, 'trec-gen.mjs'), '--dir', values.dir], { stdio: 'inherit' });
  if (gen.status !== 0) process.exit(gen.status ?? 1);
}
if (!fs.existsSync('/usr/bin/time')) {
  console.error('needs /usr/bin/time (apt-get install -y time)');
  process.exit(1);
}

const variants = [
  { name: 'default measures', args: [] },
  { name: '-c', args: ['-c'] },
  { name: '-q -c (~555,000 lines out)', args: ['-q', '-c'] },
];
console.log(
  `load average at the start: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (${os.cpus().length} cores)`,
);
const runs = Number(values.runs);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const v of variants) {
  const walls = [];
  const rss = [];
  const cpu = [];
  for (let i = 0; i < runs; i++) {
    const out = fs.openSync('/dev/null', 'w');
    const r = spawnSync(
      '/usr/bin/time',
      ['-v', process.execPath, path.join(here, 'trec-run.mjs'), ...v.args, qrels, run],
      {
        stdio: ['ignore', out, 'pipe'],
        encoding: 'utf8',
      },
    );
    fs.closeSync(out);
    if (r.status !== 0) {
      console.error(r.stderr);
      process.exit(1);
    }
    const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(r.stderr);
    const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
    const user = /User time \(seconds\): ([\d.]+)/.exec(r.stderr);
    const sys = /System time \(seconds\): ([\d.]+)/.exec(r.stderr);
    cpu.push(Number(user[1]) + Number(sys[1]));
    walls.push(Number(wall[1] ?? 0) * 3600 + Number(wall[2]) * 60 + Number(wall[3]));
    rss.push(Number(kb[1]) / 1024);
  }
  console.log(
    `${v.name.padEnd(28)} wall median ${median(walls).toFixed(2)} s (runs: ${walls.map((w) => w.toFixed(2)).join(', ')}), ` +
      `CPU user+sys median ${median(cpu).toFixed(2)} s, peak RSS max ${Math.max(...rss).toFixed(0)} MB`,
  );
}
console.log(
  `load average at the end: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (${os.cpus().length} cores)`,
);

// A large `ragaudit run` as a user starts it: the executable (node's default settings, no
// NODE_OPTIONS) on the embedded demo with its offline stand-ins, over N cases that cycle the
// demo's questions (new ids), written as a directory of case files (a YAML file holds at most
// 8 MiB). Each size runs as its own process under GNU time (`/usr/bin/time -v`, apt-get install
// time): wall, CPU and peak RSS, and the rate, so 10,000 against 100,000 shows whether time is
// linear. See bench/README.md ("a 100,000-case run").
//
//   node bench/run-100k.mjs                       # 10,000 and 100,000 cases
//   node bench/run-100k.mjs --cases 10000 --keep /tmp/run10k
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '10000,100000' },
    // Keep the case files and results here (one folder per size) instead of a temporary directory.
    keep: { type: 'string' },
    // More arguments for `ragaudit run`, one string split on spaces (e.g. '--no-report').
    args: { type: 'string', default: '' },
  },
});
const root = resolve(import.meta.dirname, '..');
const dist = resolve(process.env.RETRIEVAL_DIST ?? join(root, 'dist'));
const cli = join(dist, 'cli', 'ragaudit.js');
const { loadCases } = await import(pathToFileURL(join(dist, 'cases', 'load.js')).href);
const base = loadCases(['questions-core.yml', 'questions-more.yml'].map((f) => join(root, 'cases', 'demo', f))).map(
  (c) => c.value,
);

/** The cases as files of 10,000 each in `dir`: the demo's questions in turn, goldens kept. */
function writeCases(dir, n) {
  mkdirSync(dir, { recursive: true });
  for (let from = 0, part = 0; from < n; from += 10_000, part++) {
    let out = '';
    for (let i = from; i < Math.min(n, from + 10_000); i++) {
      const c = base[i % base.length];
      out += `- id: ${c.id}-${i}\n  question: ${JSON.stringify(c.question)}\n  kind: ${c.kind}\n`;
      for (const key of ['expected_topic_ids', 'expected_post_ids', 'expected_content'])
        if (c[key]?.length) out += `  ${key}: ${JSON.stringify(c[key])}\n`;
    }
    writeFileSync(join(dir, `part-${String(part).padStart(3, '0')}.yml`), out);
  }
}

/** One `ragaudit run` under GNU time: its figures. */
function timed(casesDir, out) {
  const args = ['-v', process.execPath, cli, 'run', '--cases', casesDir, '--out', out, '--name', 'bench'];
  if (values.args) args.push(...values.args.split(' ').filter(Boolean));
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const r = spawnSync('/usr/bin/time', args, { cwd: root, encoding: 'utf8', env, maxBuffer: 1 << 28 });
  const field = (name) => r.stderr.match(new RegExp(`${name}: (.*)`))?.[1]?.trim();
  // Exit 1 is a run with some cases in error (still a run); anything else, or no results file, is a failure.
  const written = existsSync(out) && readdirSync(out).some((f) => f.endsWith('.json'));
  if ((r.status !== 0 && r.status !== 1) || !written) throw new Error(`exit ${r.status}: ${r.stderr.slice(-2000)}`);
  const [m, s] = field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)').split(':').slice(-2).map(Number);
  const h = field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)').split(':').length === 3 ? 1 : 0;
  return {
    wall:
      (h ? Number(field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)').split(':')[0]) * 3600 : 0) + m * 60 + s,
    cpu: Number(field('User time \\(seconds\\)')) + Number(field('System time \\(seconds\\)')),
    rssMb: Math.round(Number(field('Maximum resident set size \\(kbytes\\)')) / 1024),
    exit: r.status,
  };
}

const top = values.keep ? resolve(values.keep) : mkdtempSync(join(tmpdir(), 'ragaudit-run-bench-'));
console.log('| cases | wall | CPU | rate | peak RSS | load (1 min) at the end | exit |\n|---|---|---|---|---|---|---|');
for (const n of values.cases.split(',').filter(Boolean).map(Number)) {
  const dir = join(top, String(n));
  writeCases(join(dir, 'cases'), n);
  const r = timed(join(dir, 'cases'), join(dir, 'results'));
  console.log(
    `| ${n.toLocaleString('en')} | ${r.wall.toFixed(1)} s | ${r.cpu.toFixed(1)} s | ${Math.round(n / r.wall)} cases/s | ${r.rssMb} MB | ${loadavg()[0].toFixed(1)} | ${r.exit} |`,
  );
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
}
if (!values.keep) rmSync(top, { recursive: true, force: true });

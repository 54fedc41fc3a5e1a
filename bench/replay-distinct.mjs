// Replay of N distinct questions through the whole `ragaudit retrieval` command on the embedded
// demo (or --db URL): a case file of N questions no two alike (each demo question with one of
// twenty lead-ins and tails, its goldens kept), the executable run on it as a child process, and
// a one-case run beside it for the start-up. See bench/README.md ("distinct questions").
//
//   node bench/replay-distinct.mjs                    # 2,000 questions, 3 rounds
//   node bench/replay-distinct.mjs --prof /tmp/prof   # one round under node --cpu-prof (both threads)
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    db: { type: 'string' },
    // A directory for node --cpu-prof's profiles (main thread and the engine's worker); one round.
    prof: { type: 'string' },
    // Keep the case file and results here instead of a temporary directory.
    keep: { type: 'string' },
  },
});
const root = resolve(import.meta.dirname, '..');
const dist = resolve(process.env.RETRIEVAL_DIST ?? join(root, 'dist'));
const cli = join(dist, 'cli', 'ragaudit.js');
const { loadCases } = await import(pathToFileURL(join(dist, 'cases', 'load.js')).href);

const LEADS = ['', 'Quick question: ', 'New here. ', 'Asking for a friend: ', 'Sorry if this is basic, but '];
const TAILS = ['', ' Thanks in advance.', ' Any advice welcome.', ' (UK based)'];

/** N case lines, each question distinct: a demo question with a lead-in and a tail, goldens kept. */
export function distinctCasesYaml(n) {
  const base = loadCases(['questions-core.yml', 'questions-more.yml'].map((f) => join(root, 'cases', 'demo', f))).map(
    (c) => c.value,
  );
  const variants = LEADS.length * TAILS.length;
  if (n > base.length * variants) throw new Error(`--cases: at most ${base.length * variants}`);
  let out = '';
  for (let i = 0; i < n; i++) {
    const c = base[i % base.length];
    const v = Math.floor(i / base.length);
    const lead = LEADS[v % LEADS.length];
    const q = lead ? lead + c.question[0].toLowerCase() + c.question.slice(1) : c.question;
    const question = q + TAILS[Math.floor(v / LEADS.length)];
    out += `- id: ${c.id}-v${v}\n  question: ${JSON.stringify(question)}\n  kind: ${c.kind}\n`;
    for (const key of ['expected_topic_ids', 'expected_post_ids', 'expected_content'])
      if (c[key]?.length) out += `  ${key}: ${JSON.stringify(c[key])}\n`;
  }
  return out;
}

const dir = values.keep ? resolve(values.keep) : mkdtempSync(join(tmpdir(), 'ragaudit-distinct-'));
mkdirSync(dir, { recursive: true });
const n = Number(values.cases);
const many = join(dir, 'distinct.yml');
const one = join(dir, 'one.yml');
writeFileSync(many, distinctCasesYaml(n));
writeFileSync(one, distinctCasesYaml(1));

function run(cases, out, prof) {
  mkdirSync(out, { recursive: true });
  const args = [
    ...(prof ? ['--cpu-prof', '--cpu-prof-dir', prof] : []),
    cli,
    'retrieval',
    '--cases',
    cases,
    '--out',
    out,
    '--no-report',
    ...(values.db ? ['--db', values.db] : []),
  ];
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
  const file = readdirSync(out).find((f) => f.endsWith('.json') || f.endsWith('.jsonl'));
  const head = readFileSync(join(out, file), 'utf8').slice(0, 1 << 20);
  const batch = /"cases_per_s":\s*(\d+)/.exec(head);
  return { wall, batchRate: batch ? Number(batch[1]) : null };
}

const rounds = values.prof ? 1 : Number(values.rounds);
for (let r = 0; r < rounds; r++) {
  const single = run(one, join(dir, `one-${r}`));
  const whole = run(many, join(dir, `many-${r}`), values.prof ? resolve(values.prof) : undefined);
  const net = whole.wall - single.wall;
  console.log(
    `round ${r + 1}: ${n} distinct questions ${whole.wall.toFixed(2)} s, one case ${single.wall.toFixed(2)} s; ` +
      `after start-up ${(n / net).toFixed(0)} cases/s; batched part ${whole.batchRate} cases/s`,
  );
}
if (!values.keep) rmSync(dir, { recursive: true, force: true });

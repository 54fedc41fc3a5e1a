#!/usr/bin/env node
// Retrieval replay on the forum bench/ann-gen.mjs filled (PostgreSQL + pgvector, discourse-ai's
// HNSW indexes), through ragaudit's own retrieval (runRetrieval from dist/, batched as a run
// batches): N distinct questions through the semantic channels (posts and topics, `search: ann`)
// at each pool size (`database.connections`), then a few through `exact` beside them, then the
// keyword channels, each channel's share of the statement time; and every statement the tool sent
// for the keyword and ann parts run again alone in psql, so the tool's overhead over the database
// itself shows (statement by statement, the same SQL and parameters, one at a time).
//
//   node bench/ann-replay.mjs --url postgres://postgres@127.0.0.1:5432/ann_bench
//        [--questions 2000] [--connections 1,2,4] [--exact 20] [--keyword 200] [--no-psql]
//
// Questions: distinct texts; each one's vector is a stored post vector with Gaussian noise (what
// an embedding of a forum question looks like to the index: near the forum's own vectors), given
// to the run as its embedder; keyword questions: three words of a topic's title and one of a
// post's, so no two are alike. See bench/README.md ("production scale on PostgreSQL").
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { validateConfig } from '../dist/config/load.js';
import { createRunContext } from '../dist/wiring/context.js';
import { runRetrieval } from '../dist/runs/retrieval-run.js';
import { connectPostgres } from '../dist/db/sql-client.js';
import { mulberry32 } from '../dist/scoring/statistics.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.ANN_BENCH_URL ?? 'postgres://postgres@127.0.0.1:5432/ann_bench' },
    questions: { type: 'string', default: '2000' },
    connections: { type: 'string', default: '1,2,4' },
    exact: { type: 'string', default: '20' },
    keyword: { type: 'string', default: '200' },
    'no-psql': { type: 'boolean', default: false },
    // database.statement_timeout_ms for the replays (default: the config's default, what a user gets).
    'timeout-ms': { type: 'string' },
    seed: { type: 'string', default: '11' },
  },
});
const uptime = () =>
  execFileSync('uptime', { encoding: 'utf8' })
    .trim()
    .replace(/.*load/, 'load');
const rnd = mulberry32(Number(values.seed));
const gauss = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
const N = Number(values.questions);

// Questions and their vectors, drawn once.
const admin = await connectPostgres(values.url, { statementTimeoutMs: 120_000 });
const ids = (await admin.query('SELECT post_id AS id FROM ai_posts_embeddings WHERE model_id = 1')).map((r) => r.id);
const picked = Array.from({ length: N }, () => Number(ids[Math.floor(rnd() * ids.length)]));
const stored = new Map(
  (
    await admin.query(
      'SELECT post_id AS id, embeddings::text AS v FROM ai_posts_embeddings WHERE post_id = ANY($1::int[]) AND model_id = 1 AND strategy_id = 1',
      [picked],
    )
  ).map((r) => [Number(r.id), JSON.parse(r.v)]),
);
const titles = (await admin.query('SELECT title FROM topics ORDER BY id')).map((r) => r.title.split(' '));
const raws = (await admin.query('SELECT raw FROM posts ORDER BY id LIMIT 20000')).map((r) => r.raw.split(' '));
await admin.close();
const vectorOf = new Map();
const semanticQuestions = picked.map((id, i) => {
  const v = stored.get(id);
  const scale = Math.sqrt(v.reduce((a, x) => a + x * x, 0) / v.length);
  const q = `question ${i} near post ${id}`;
  vectorOf.set(
    q,
    v.map((x) => Math.round((x + 0.6 * scale * gauss()) * 100) / 100),
  );
  return q;
});
const keywordQuestions = Array.from({ length: Number(values.keyword) }, () => {
  const t = titles[Math.floor(rnd() * titles.length)];
  const p = raws[Math.floor(rnd() * raws.length)];
  return [...t.slice(0, 3), p[Math.floor(rnd() * p.length)]].join(' ');
});

/** The run's embedder: each question's vector as drawn above. */
const embedder = {
  id: 'bench:stored-plus-noise',
  offline: true,
  dimensions: 384,
  embed: async (texts) => texts.map((t) => vectorOf.get(t) ?? new Array(384).fill(0.01)),
};

const cases = (questions) =>
  questions.map((question, i) => ({
    file: 'bench',
    line: i + 1,
    value: {
      id: `q${i}`,
      question,
      kind: 'in_domain',
      difficulty: 'unrated',
      tags: [],
      expected_topic_ids: [],
      expected_post_ids: [],
      expected_content: [],
    },
  }));

/** A run context on the bench database with these channels; every statement it sends is logged with its time. */
async function context(channels, connections) {
  const config = validateConfig(
    {
      retrieval: { top_k: 25, channels },
      database: {
        connections,
        ...(values['timeout-ms'] ? { statement_timeout_ms: Number(values['timeout-ms']) } : {}),
      },
    },
    null,
    {},
  );
  const ctx = await createRunContext(
    { config, source: '(bench)', baseDir: process.cwd() },
    { env: {}, cwd: process.cwd(), dbUrl: values.url, embedder },
  );
  const log = [];
  const query = ctx.db.query.bind(ctx.db);
  ctx.db.query = async (sql, params, opts) => {
    const t0 = performance.now();
    const rows = await query(sql, params, opts);
    log.push({ sql, params: params ?? [], settings: opts?.settings ?? [], ms: performance.now() - t0 });
    return rows;
  };
  return { ctx, log };
}

const SEMANTIC = (search) => [
  { name: 'posts', kind: 'semantic', grain: 'post', search },
  { name: 'topics', kind: 'semantic', grain: 'topic', search },
];
const KEYWORD = [
  { name: 'kw_posts', kind: 'keyword', grain: 'post' },
  { name: 'kw_topics', kind: 'keyword', grain: 'topic' },
];

/** One replay: wall, rate, the batched part's rate, each channel's statement time. */
async function replay(label, channels, connections, questions, opts = {}) {
  const { ctx, log } = await context(channels, connections);
  try {
    await runRetrieval(ctx, cases(questions.slice(0, 1)), []); // warm-up: connections open, plans cached
    log.length = 0;
    const t0 = performance.now();
    const result = await runRetrieval(ctx, cases(questions), [], undefined, { latencySample: 0, ...opts });
    const secs = (performance.now() - t0) / 1000;
    const b = result.summary.retrieval_batch;
    const failed = result.cases.filter((c) => c.status === 'error');
    const errors = failed.length;
    if (errors) console.log(`(${label}: ${errors} cases in error, the first: ${failed[0].error.message})`);
    console.log(
      `| ${label} | ${connections} | ${questions.length} | ${secs.toFixed(2)} s | **${Math.round(questions.length / secs)} q/s** | ${b?.cases_per_s ?? '-'} | ${b?.fallbacks ?? '-'} | ${errors} | ${uptime()} |`,
    );
    return log.map((l) => ({ ...l }));
  } finally {
    await ctx.close();
  }
}

/** A parameter as psql text: a string or number as a literal, an array as its array literal, NULL. */
function literal(v) {
  if (v === null || v === undefined) return 'NULL';
  if (Array.isArray(v))
    return literal(`{${v.map((x) => `"${String(x).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`);
  if (typeof v === 'number') return `'${v}'`;
  return `'${String(v).replace(/'/g, "''")}'`;
}

/**
 * The statements run again in psql, one at a time, each as the driver sends it (untyped text
 * parameters: PREPARE infers their types as the extended protocol does), its settings set for its
 * own transaction as the tool does; psql's own timing of each (client to server and back).
 */
function psqlTimes(statements) {
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-psql-'));
  let script = '\\timing on\n';
  statements.forEach((s, i) => {
    const args = s.params.map(literal).join(', ');
    const exec = `EXECUTE s${i}${s.params.length ? `(${args})` : ''};\n`;
    script += `\\echo @prepare\nPREPARE s${i} AS ${s.sql};\n\\echo @run\n`;
    if (s.settings.length)
      script += `BEGIN READ ONLY;\n${s.settings.map(([k, v]) => `SELECT set_config(${literal(k)}, ${literal(v)}, true);\n`).join('')}${exec}COMMIT;\n`;
    else script += exec;
    script += `\\echo @end\nDEALLOCATE s${i};\n`;
  });
  const file = join(dir, 'replay.sql');
  writeFileSync(file, script);
  const r = spawnSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', values.url, '-f', file], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  rmSync(dir, { recursive: true, force: true });
  if (r.status !== 0) throw new Error(`psql: ${r.stderr.slice(0, 2000)}`);
  // Sum of the Time: lines between @run and @end of each statement (the transaction's steps included).
  const times = [];
  let current = null;
  for (const line of r.stdout.split('\n')) {
    if (line === '@run') current = 0;
    else if (line === '@end') {
      times.push(current);
      current = null;
    } else if (current !== null) {
      const m = /^Time: ([\d.]+) ms/.exec(line);
      if (m) current += Number(m[1]);
    }
  }
  return times;
}

/** The statements sent again through the tool's own client (node-pg, its settings transaction, its row parsing), one at a time. */
async function toolTimes(channels, statements) {
  const { ctx } = await context(channels, 1);
  try {
    const times = [];
    for (const s of statements) {
      const t0 = performance.now();
      await ctx.db.query(s.sql, s.params, s.settings.length ? { settings: s.settings } : undefined);
      times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await ctx.close();
  }
}

/** Which channel a statement belongs to, by the table it reads. */
function channelOf(channels, sql) {
  const table = (c) =>
    c.kind === 'keyword'
      ? `${c.grain}_search_data`
      : c.grain === 'post'
        ? 'ai_posts_embeddings'
        : 'ai_topics_embeddings';
  return channels.find((c) => sql.includes(table(c)))?.name ?? 'other';
}

/**
 * Per channel: the statements' time through the tool and alone in psql, one at a time, and the
 * channel's share. Two passes of each, interleaved (tool, psql, tool, psql), each statement's
 * best of its two: the host's speed moves between minutes.
 */
async function compare(label, channels, statements) {
  if (values['no-psql'] || !statements.length) return;
  const best = (a, b) => a.map((x, i) => Math.min(x, b[i]));
  const tool1 = await toolTimes(channels, statements);
  const psql1 = psqlTimes(statements);
  const tool = best(tool1, await toolTimes(channels, statements));
  const psql = best(psql1, psqlTimes(statements));
  const sum = (xs) => xs.reduce((a, x) => a + x, 0);
  const total = sum(tool);
  for (const name of [...new Set(statements.map((s) => channelOf(channels, s.sql)))]) {
    const at = statements.flatMap((s, i) => (channelOf(channels, s.sql) === name ? [i] : []));
    const t = sum(at.map((i) => tool[i]));
    const p = sum(at.map((i) => psql[i]));
    console.log(
      `| ${label}: ${name} | ${at.length} | ${(t / 1000).toFixed(2)} s (${((100 * t) / total).toFixed(0)} % of the ${label}) | ${(p / 1000).toFixed(2)} s | **${((100 * (t - p)) / p).toFixed(1)} %** | ${uptime()} |`,
    );
  }
}

console.log(`start: ${uptime()}; ${N} semantic questions, ${keywordQuestions.length} keyword questions`);
console.log(
  '\n| channels | connections | questions | wall | rate | batched part (cases/s) | fallbacks | errors | load |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
let annLog = [];
for (const c of values.connections.split(',').map(Number)) {
  const log = await replay('semantic, ann', SEMANTIC('ann'), c, semanticQuestions);
  if (c === 1) annLog = log;
}
const exactN = Number(values.exact);
if (exactN) await replay('semantic, exact', SEMANTIC('exact'), 2, semanticQuestions.slice(0, exactN));
let kwLog = [];
if (keywordQuestions.length) {
  kwLog = await replay('keyword', KEYWORD, 1, keywordQuestions);
  await replay('keyword', KEYWORD, 2, keywordQuestions);
}
// The per-query path of the same channels (each question's own statements), for the statement-level comparison.
const annSingle = values['no-psql']
  ? []
  : await replay('semantic, ann, per query', SEMANTIC('ann'), 1, semanticQuestions.slice(0, 200), { batch: false });
if (!values['no-psql']) {
  console.log(
    "\n| statements of one connection's replay, sent again one at a time | n | through the tool (share) | alone in psql | overhead | load |",
  );
  console.log('|---|---|---|---|---|---|');
  await compare('semantic ann batches', SEMANTIC('ann'), annLog);
  await compare('semantic ann per query', SEMANTIC('ann'), annSingle);
  await compare('keyword', KEYWORD, kwLog);
}
console.log(`\nend: ${uptime()}`);

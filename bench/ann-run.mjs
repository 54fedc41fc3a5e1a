#!/usr/bin/env node
// Times the semantic channels in `ann` and `exact` mode and the keyword channels on a forum that
// bench/ann-gen.mjs filled, through the profile's own statements (dist/), and measures the recall
// of `ann` against `exact` at k. Prints the EXPLAIN (ANALYZE) plans of both semantic shapes.
//
//   node bench/ann-run.mjs --url postgres://postgres@127.0.0.1:5432/ann_bench [--queries 50] [--k 25]
//        [--candidates N] [--ef-search N] [--dims 384] [--seed 7] [--no-plans]
//
// Query vectors: stored vectors of random public posts with Gaussian noise added (so the nearest
// neighbours are not the post itself alone); keyword questions: three words of a random topic's title.
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { DiscourseProfile } from '../dist/corpus/discourse.js';
import { connectPostgres } from '../dist/db/sql-client.js';
import { mulberry32 } from '../dist/scoring/statistics.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.ANN_BENCH_URL ?? 'postgres://postgres@127.0.0.1:5432/ann_bench' },
    queries: { type: 'string', default: '50' },
    k: { type: 'string', default: '25' },
    candidates: { type: 'string' },
    'ef-search': { type: 'string' },
    dims: { type: 'string', default: '384' },
    seed: { type: 'string', default: '7' },
    'no-plans': { type: 'boolean', default: false },
  },
});
const Q = Number(values.queries);
const K = Number(values.k);
const DIMS = Number(values.dims);
const rnd = mulberry32(Number(values.seed));
const gauss = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

const db = await connectPostgres(values.url, { statementTimeoutMs: 120_000 });
const profile = new DiscourseProfile(db);
console.log(`start: ${uptime()}`);
const [{ n }] = await db.query('SELECT count(*)::int AS n FROM posts');
console.log(`posts: ${n}`);

const ids = await db.query('SELECT post_id AS id FROM ai_posts_embeddings WHERE model_id = 1 ORDER BY post_id');
const picked = Array.from({ length: Q }, () => Number(ids[Math.floor(rnd() * ids.length)].id));
const stored = await db.query(
  'SELECT post_id AS id, embeddings::text AS v FROM ai_posts_embeddings WHERE post_id = ANY($1::int[]) AND model_id = 1 AND strategy_id = 1 ORDER BY post_id',
  [picked],
);
const vectors = stored.map((r) => {
  const v = JSON.parse(r.v);
  const scale = Math.sqrt(v.reduce((a, x) => a + x * x, 0) / v.length);
  return `[${v.map((x) => (x + 0.6 * scale * gauss()).toFixed(2)).join(',')}]`;
});
const titles = await db.query('SELECT title FROM topics ORDER BY id');
const questions = Array.from({ length: Q }, () => {
  const words = titles[Math.floor(rnd() * titles.length)].title.split(' ');
  return words.slice(0, 3).join(' ');
});

const quantile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const fmt = (xs) => `median ${quantile(xs, 0.5).toFixed(1)} ms, p90 ${quantile(xs, 0.9).toFixed(1)} ms`;
const base = {
  dimensions: DIMS,
  modelId: 1,
  strategyId: 1,
  limit: K,
  ...(values.candidates ? { candidates: Number(values.candidates) } : {}),
  ...(values['ef-search'] ? { efSearch: Number(values['ef-search']) } : {}),
};

for (const grain of ['post', 'topic']) {
  const ask = (q) => (grain === 'post' ? profile.semanticPosts(q) : profile.semanticTopics(q));
  const lists = {};
  for (const mode of ['ann', 'exact']) {
    const times = [];
    lists[mode] = [];
    await ask({ ...base, vector: vectors[0], search: mode }); // warm-up, untimed
    for (const vector of vectors) {
      const t0 = performance.now();
      lists[mode].push(await ask({ ...base, vector, search: mode }));
      times.push(performance.now() - t0);
    }
    console.log(`semantic ${grain} ${mode}: ${fmt(times)} (${Q} queries, k ${K})`);
  }
  const idOf = (i) => (grain === 'post' ? i.post_id : i.topic_id);
  const recalls = lists.exact.map((ex, i) => {
    const ann = new Set(lists.ann[i].map(idOf));
    return ex.length ? ex.filter((x) => ann.has(idOf(x))).length / ex.length : 1;
  });
  const short = lists.ann.filter((l) => l.length < K).length;
  console.log(
    `semantic ${grain} ann recall@${K} vs exact: mean ${(recalls.reduce((a, b) => a + b, 0) / Q).toFixed(3)}, min ${Math.min(...recalls).toFixed(3)}; short ann lists ${short}/${Q}`,
  );
  const t0 = performance.now();
  const batch = await (grain === 'post' ? profile.semanticPostsBatch : profile.semanticTopicsBatch).call(profile, {
    ...base,
    vectors,
    search: 'ann',
  });
  const same = batch.every((l, i) => JSON.stringify(l) === JSON.stringify(lists.ann[i]));
  console.log(
    `semantic ${grain} ann batch of ${Q}: ${(performance.now() - t0).toFixed(0)} ms, lists equal to the single queries: ${same}`,
  );
  if (!values['no-plans']) {
    for (const mode of ['ann', 'exact']) {
      const st = profile.semanticStatement(grain, { ...base, vector: vectors[0], search: mode });
      const plan = await db.query(`EXPLAIN (ANALYZE, COSTS OFF) ${st.sql}`, st.params, { settings: st.settings ?? [] });
      console.log(`\nEXPLAIN ANALYZE, semantic ${grain}, ${mode}:\n${plan.map((r) => r['QUERY PLAN']).join('\n')}\n`);
    }
  }
}

for (const grain of ['post', 'topic']) {
  const ask = (q) => (grain === 'post' ? profile.keywordPosts(q) : profile.keywordTopics(q));
  const times = [];
  let found = 0;
  await ask({ text: questions[0], config: 'english', limit: K });
  for (const text of questions) {
    const t0 = performance.now();
    found += (await ask({ text, config: 'english', limit: K })).length;
    times.push(performance.now() - t0);
  }
  console.log(`keyword ${grain}: ${fmt(times)} (${Q} questions, ${(found / Q).toFixed(1)} items each)`);
  if (!values['no-plans']) {
    const st = await profile.keywordStatement(grain, { text: questions[0], config: 'english', limit: K });
    const plan = await db.query(`EXPLAIN (ANALYZE, COSTS OFF) ${st.sql}`, st.params);
    console.log(`\nEXPLAIN ANALYZE, keyword ${grain}:\n${plan.map((r) => r['QUERY PLAN']).join('\n')}\n`);
  }
}
console.log(`end: ${uptime()}`);
await db.close();

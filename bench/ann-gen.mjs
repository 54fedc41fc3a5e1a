#!/usr/bin/env node
// Fills a real PostgreSQL + pgvector with a Discourse-shaped forum of N posts (synthetic text and
// vectors, deterministic: mulberry32 seeded), with discourse-ai's partial HNSW index and the
// search-data GIN indexes, for bench/ann-run.mjs.
//
//   node bench/ann-gen.mjs --url postgres://postgres@127.0.0.1:5432/postgres [--db ann_bench]
//        [--posts 200000] [--dims 384] [--seed 1] [--no-index]
//
// The database named by --db is dropped and created again on the server of --url. Tables are the
// ones ragaudit reads (src/demo/ddl.ts, from dist/). Content: 20 categories (2 read-restricted),
// about 8 posts per topic; ~2 % of topics private messages, ~1 % invisible, ~1 % deleted; ~1 % of
// posts hidden, ~1 % deleted, ~1 % whispers, ~1 % small actions, so visibility filtering has work.
// Vectors: 400 themes, each topic near a theme, each post near its topic (integer components,
// scale does not matter to cosine). Rows go in by multi-row INSERT … SELECT unnest(…) in batches.
import pg from 'pg';
import { parseArgs } from 'node:util';
import { recreateDatabase } from './lib.mjs';
import { EMBEDDINGS_DDL, FORUM_DDL } from '../dist/demo/ddl.js';
import { mulberry32 } from '../dist/scoring/statistics.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.ANN_BENCH_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    db: { type: 'string', default: 'ann_bench' },
    posts: { type: 'string', default: '200000' },
    dims: { type: 'string', default: '384' },
    seed: { type: 'string', default: '1' },
    'no-index': { type: 'boolean', default: false },
  },
});
const N = Number(values.posts);
const DIMS = Number(values.dims);

const rnd = mulberry32(Number(values.seed));
const int = (n) => Math.floor(rnd() * n);
const gauss = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());

const SYL = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'ti',
  'vo',
  'ze',
  'pa',
  'do',
  'fi',
  'gu',
  'he',
  'ja',
  'be',
  'co',
  'wy',
];
const VOCAB = Array.from({ length: 6000 }, (_, i) => {
  let w = '';
  let x = i + 7;
  for (let k = 0; k < 2 + (i % 3); k++) {
    w += SYL[x % SYL.length];
    x = Math.floor(x / SYL.length) + k * 5 + 3;
  }
  return `${w}${i % 10}`;
});
const zipf = () => VOCAB[Math.min(VOCAB.length - 1, Math.floor(Math.exp(rnd() * Math.log(VOCAB.length))) - 1)];
const THEMES = 400;
const themeWords = Array.from({ length: THEMES }, () => Array.from({ length: 12 }, () => VOCAB[int(VOCAB.length)]));
const themeCenters = Array.from({ length: THEMES }, () => Array.from({ length: DIMS }, () => gauss()));

function near(center, spread) {
  return center.map((c) => c + spread * gauss());
}
const asInts = (v) => {
  const m = Math.max(...v.map(Math.abs)) || 1;
  return `[${v.map((x) => Math.round((900 * x) / m)).join(',')}]`;
};

const target = await recreateDatabase(values.url, values.db);
const db = new pg.Client({ connectionString: target });
await db.connect();
const t0 = performance.now();
const lap = (what) => console.log(`${what}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
await db.query(FORUM_DDL);
await db.query(EMBEDDINGS_DDL);

await db.query(
  `INSERT INTO categories (id, name, slug, read_restricted)
   SELECT i, 'Category ' || i, 'category-' || i, i IN (7, 13) FROM generate_series(1, 20) i`,
);
await db.query(`INSERT INTO users (id, username) SELECT i, 'user' || i FROM generate_series(1, 1000) i`);

let postId = 0;
let topicId = 0;
const topics = { id: [], title: [], slug: [], cat: [], arch: [], visible: [], deleted: [], count: [] };
let posts = { id: [], topic: [], n: [], raw: [], reply: [], type: [], hidden: [], deleted: [] };
let vecs = { id: [], v: [] };
let tvecs = { id: [], v: [] };

async function flushPosts(force) {
  if (!force && posts.id.length < 2000) return;
  if (posts.id.length) {
    await db.query(
      `INSERT INTO posts (id, topic_id, post_number, raw, cooked, user_id, reply_to_post_number, post_type, hidden, deleted_at)
       SELECT id, topic_id, n, raw, '<p>' || raw || '</p>', 1 + id % 1000, reply, type, hidden, CASE WHEN del THEN '2025-02-01'::timestamp END
       FROM unnest($1::int[], $2::int[], $3::int[], $4::text[], $5::int[], $6::int[], $7::bool[], $8::bool[])
         AS x(id, topic_id, n, raw, reply, type, hidden, del)`,
      [posts.id, posts.topic, posts.n, posts.raw, posts.reply, posts.type, posts.hidden, posts.deleted],
    );
    await db.query(
      `INSERT INTO ai_posts_embeddings (post_id, model_id, strategy_id, embeddings)
       SELECT id, 1, 1, v FROM unnest($1::int[], $2::halfvec[]) AS x(id, v)`,
      [vecs.id, vecs.v],
    );
  }
  posts = { id: [], topic: [], n: [], raw: [], reply: [], type: [], hidden: [], deleted: [] };
  vecs = { id: [], v: [] };
}

async function flushTopics() {
  await db.query(
    `INSERT INTO topics (id, title, slug, category_id, archetype, visible, deleted_at, posts_count)
     SELECT id, title, slug, CASE WHEN arch = 'private_message' THEN NULL ELSE cat END, arch, visible,
       CASE WHEN del THEN '2025-02-01'::timestamp END, cnt
     FROM unnest($1::int[], $2::text[], $3::text[], $4::int[], $5::text[], $6::bool[], $7::bool[], $8::int[])
       AS x(id, title, slug, cat, arch, visible, del, cnt)`,
    [topics.id, topics.title, topics.slug, topics.cat, topics.arch, topics.visible, topics.deleted, topics.count],
  );
  await db.query(
    `INSERT INTO ai_topics_embeddings (topic_id, model_id, strategy_id, embeddings)
     SELECT id, 1, 1, v FROM unnest($1::int[], $2::halfvec[]) AS x(id, v)`,
    [tvecs.id, tvecs.v],
  );
  for (const k of Object.keys(topics)) topics[k] = [];
  tvecs = { id: [], v: [] };
}

// Topics first (posts reference them): the posts of a topic are made with it and held back.
const pending = [];
while (postId < N) {
  const id = ++topicId;
  const theme = int(THEMES);
  const words = themeWords[theme];
  const center = near(themeCenters[theme], 0.6);
  const count = Math.min(N - postId, 1 + Math.floor(-Math.log(1 - rnd()) * 7));
  const title = Array.from({ length: 4 + int(4) }, () => (rnd() < 0.7 ? words[int(words.length)] : zipf())).join(' ');
  const r = rnd();
  topics.id.push(id);
  topics.title.push(title);
  topics.slug.push(title.replace(/ /g, '-'));
  topics.cat.push(1 + int(20));
  topics.arch.push(r < 0.02 ? 'private_message' : 'regular');
  topics.visible.push(!(r >= 0.02 && r < 0.03));
  topics.deleted.push(r >= 0.03 && r < 0.04);
  topics.count.push(count);
  tvecs.id.push(id);
  tvecs.v.push(asInts(center));
  for (let n = 1; n <= count; n++) {
    const pid = ++postId;
    const len = 30 + int(60);
    const raw = Array.from({ length: len }, () => (rnd() < 0.25 ? words[int(words.length)] : zipf())).join(' ');
    const q = rnd();
    pending.push([
      pid,
      id,
      n,
      raw,
      n > 1 && rnd() < 0.3 ? 1 + int(n - 1) : null,
      q < 0.01 ? 4 : q < 0.02 ? 3 : 1,
      q >= 0.02 && q < 0.03,
      q >= 0.03 && q < 0.04,
      asInts(near(center, 0.8)),
    ]);
  }
  if (topics.id.length >= 2000) await flushTopics();
}
if (topics.id.length) await flushTopics();
lap(`${topicId} topics`);
for (const p of pending) {
  posts.id.push(p[0]);
  posts.topic.push(p[1]);
  posts.n.push(p[2]);
  posts.raw.push(p[3]);
  posts.reply.push(p[4]);
  posts.type.push(p[5]);
  posts.hidden.push(p[6]);
  posts.deleted.push(p[7]);
  vecs.id.push(p[0]);
  vecs.v.push(p[8]);
  await flushPosts(false);
}
await flushPosts(true);
lap(`${postId} posts and their vectors`);

await db.query(
  `INSERT INTO post_search_data (post_id, search_data, raw_data, locale)
   SELECT p.id, setweight(to_tsvector('english', t.title), 'A') || to_tsvector('english', p.raw), p.raw, 'en'
   FROM posts p JOIN topics t ON t.id = p.topic_id`,
);
await db.query(
  `INSERT INTO topic_search_data (topic_id, search_data, raw_data, locale)
   SELECT t.id, setweight(to_tsvector('english', t.title), 'A') || to_tsvector('english', coalesce(p.raw, '')), t.title, 'en'
   FROM topics t LEFT JOIN posts p ON p.topic_id = t.id AND p.post_number = 1`,
);
lap('search data (GIN indexes from the DDL)');
if (!values['no-index']) {
  // discourse-ai's partial HNSW indexes, one per table for model 1 / strategy 1.
  await db.query(`SET maintenance_work_mem = '1GB'`);
  await db.query(
    `CREATE INDEX ai_posts_embeddings_1_1_search ON ai_posts_embeddings
     USING hnsw ((embeddings::halfvec(${DIMS})) halfvec_cosine_ops) WHERE model_id = 1 AND strategy_id = 1`,
  );
  lap('HNSW index on ai_posts_embeddings');
  await db.query(
    `CREATE INDEX ai_topics_embeddings_1_1_search ON ai_topics_embeddings
     USING hnsw ((embeddings::halfvec(${DIMS})) halfvec_cosine_ops) WHERE model_id = 1 AND strategy_id = 1`,
  );
  lap('HNSW index on ai_topics_embeddings');
}
await db.query('ANALYZE');
await db.query('VACUUM (ANALYZE) ai_posts_embeddings');
lap('analyze');
// The URL of the filled database, for the benches that read it; a password is never printed.
const shown = new URL(target);
if (shown.password) shown.password = '***';
console.log(`database: ${shown.href}`);
await db.end();

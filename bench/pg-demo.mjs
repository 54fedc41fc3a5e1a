// Loads the demo forum into a database of a real PostgreSQL server (with pgvector), as the
// embedded demo holds it: the same tables, the offline hash embedder's 384-dim vectors, the
// english text search configuration. For the benches' `--db` runs against a server. See
// bench/README.md ("start-up and the side-by-side").
//
//   npx tsc -p tsconfig.build.json
//   node bench/pg-demo.mjs --url postgres://postgres@127.0.0.1:5432/postgres [--db ragaudit_demo]
//
// The database named by --db is dropped and created again; the URL of the loaded database is printed.
import pg from 'pg';
import { parseArgs } from 'node:util';
import { loadForum } from '../dist/demo/load-forum.js';
import { readForum } from '../dist/demo/forum.js';
import { demoEmbedder } from '../dist/demo/demo-snapshot.js';
import { DEMO_FORUM_DIR } from '../dist/paths.js';
import { recreateDatabase } from './lib.mjs';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    db: { type: 'string', default: 'ragaudit_demo' },
  },
});
const url = await recreateDatabase(values.url, values.db);
const client = new pg.Client({ connectionString: url });
await client.connect();
try {
  await client.query('CREATE EXTENSION IF NOT EXISTS vector');
  const writer = {
    script: async (sql) => void (await client.query(sql)),
    exec: async (sql, params) => void (await client.query(sql, params)),
  };
  const loaded = await loadForum(writer, readForum(DEMO_FORUM_DIR), {
    textSearchConfig: 'english',
    embedder: demoEmbedder(),
  });
  await client.query('ANALYZE');
  console.error(`loaded ${loaded.topics} topics, ${loaded.posts} posts`);
  console.log(url);
} finally {
  await client.end();
}

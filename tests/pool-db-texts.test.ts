/**
 * `pool` on runs made against a real PostgreSQL forum: a retrieval run keeps only ids, so a
 * candidate no run showed as a source had a thread title at best; its text is now read from the
 * forum's database (`--db` or DATABASE_URL), read-only, and only while the post is still public.
 * Texts are read off tests/fixtures/forum by hand.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { PoolFileSchema, type PoolFile } from '../src/labelling/pooling.js';
import { freshDatabase } from './helpers/pg.js';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';

const forum = readForum(join(import.meta.dirname, 'fixtures', 'forum'));

async function cli(cwd: string, args: string[], env: NodeJS.ProcessEnv) {
  let out = '';
  const code = await main(args, { out: (t) => void (out += t), err: () => undefined, isTTY: false, cwd, env });
  return { code, out };
}

describe('pool reads candidate texts from the forum database', () => {
  let url: string;
  let dir: string;
  let results: string;
  beforeAll(async () => {
    const fresh = await freshDatabase('pooltexts');
    await loadForum(fresh.writer, forum);
    await fresh.close();
    url = fresh.url;
    dir = workDir('pooltexts');
    writeFileSync(
      join(dir, 'fx.yml'),
      `name: fx
database: { url: "\${DATABASE_URL}" }
cases: [cases.yml]
retrieval:
  top_k: 5
  channels:
    - { name: kw, kind: keyword, grain: post }
`,
    );
    // Golden topic 15: the suede posts of topic 10 are candidates nobody has judged.
    writeFileSync(
      join(dir, 'cases.yml'),
      '- { id: suede, question: "How do I bring faded suede colour back?", expected_topic_ids: [15] }\n',
    );
    const r = await cli(dir, ['retrieval', '--config', 'fx.yml', '--out', 'runs'], { DATABASE_URL: url });
    expect(r.code, r.out).toBe(0);
    results = join(
      dir,
      'runs',
      readdirSync(join(dir, 'runs')).find((f) => /-fx\.json$/.test(f))!,
    );
  });
  afterAll(() => removeWorkDirs());

  let calls = 0;
  const pooled = async (args: string[], env: NodeJS.ProcessEnv): Promise<PoolFile> => {
    const r = await cli(dir, ['pool', results, '--k', '5', '--out', `pools-${++calls}`, ...args], env);
    expect(r.code, r.out).toBe(0);
    const file = join(dir, /pool: (.*)$/m.exec(r.out)![1]!.trim());
    return PoolFileSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  };

  // Fails before this change: every candidate of a run on PostgreSQL had text null (title null too).
  it('fills the text and title of a candidate no run showed, from DATABASE_URL or --db', async () => {
    for (const [args, env] of [
      [[], { DATABASE_URL: url }],
      [['--db', url], {}],
    ] as const) {
      const [q] = (await pooled([...args], env)).questions;
      const c = q!.candidates.find((x) => x.post_id === 10002)!;
      expect(c.title).toBe('Reviving faded suede');
      expect(c.text).toBe('A suede renovator spray in the matching colour, then a brass brush once dry.');
    }
    // No database named: the text stays unknown (the label page says so).
    const [q] = (await pooled([], {})).questions;
    expect(q!.candidates.find((x) => x.post_id === 10002)!.text).toBeNull();
  });

  it('reads only posts that are still public: one hidden since the run keeps no text', async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('UPDATE posts SET hidden = true WHERE id = 10002');
    await admin.end();
    const [q] = (await pooled(['--db', url], {})).questions;
    expect(q!.candidates.find((x) => x.post_id === 10002)!.text).toBeNull();
    expect(q!.candidates.find((x) => x.post_id === 10001)!.text).toBe(
      'My suede chukkas faded in the sun. Any way to bring the colour back?',
    );
  });
});

/** A real database queried with the offline hash embedder is called out, not silently ranked. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPipeline } from '../src/app/pipeline.js';
import { cliHooks, loadWithOverrides } from '../src/cli/common.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { freshDatabase, standInEmbeddingsSql } from './helpers/pg.js';

describe('offline embedder on a real database', () => {
  it('warns in the results and on the console', async () => {
    const fresh = await freshDatabase('warn');
    await loadForum(fresh.writer, readForum(join(import.meta.dirname, 'fixtures', 'forum')));
    // The semantic channels' tables must exist (checked before the first case); pgvector is not here.
    await fresh.writer.script(standInEmbeddingsSql(384));
    await fresh.close();
    const err: string[] = [];
    const io = { out: () => undefined, err: (t: string) => void err.push(t), isTTY: false, cwd: PACKAGE_ROOT, env: {} };
    const args = { db: fresh.url, cases: [join(PACKAGE_ROOT, 'tests', 'fixtures', 'audit', 'questions.yml')] };
    const loaded = loadWithOverrides(args, io);
    const { ctx, warnings } = await openPipeline({ ...args, loaded, cwd: io.cwd, env: io.env }, cliHooks(io));
    await ctx.close();
    expect(warnings.some((w) => w.includes("OFFLINE hash embedder's vectors"))).toBe(true);
    // The fixture forum has none of the demo's goldens: each is a warning naming file:line and case.
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /questions\.yml:\d+: case '[a-z0-9-]+': expected topic \d+ is not a public topic in the database$/,
      ),
    );
    expect(err.join('')).toMatch(/^warning: the semantic channels query postgres:\/\/127\.0\.0\.1:\d+\/warn_/m);
  });
});

/**
 * A French forum onboarded end to end on the real PostgreSQL test server: the beekeeping forum of
 * tests/fixtures/forum-apiculture indexed with the `french` text-search configuration, its
 * Discourse site setting `default_locale = fr`. `init` must write `language: fr`, and what follows
 * speaks French: `run`'s answers end with the French CTA, `mine` writes French template questions.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../src/cli/main.js';
import { readForum } from '../src/demo/forum.js';
import { loadForum } from '../src/demo/load-forum.js';
import { FRENCH } from '../src/model/languages/fr.js';
import { freshDatabase } from './helpers/pg.js';
import { removeWorkDirs, workDir } from './helpers/work-dir.js';

const forum = readForum(join(import.meta.dirname, 'fixtures', 'forum-apiculture'));

async function cli(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  let out = '';
  let err = '';
  const code = await main(args, { out: (t) => void (out += t), err: (t) => void (err += t), isTTY: false, cwd, env });
  return { code, out, err };
}

describe('a French forum onboarded with init, then retrieval, run and mine', () => {
  let url: string;
  let dir: string;
  beforeAll(async () => {
    const fresh = await freshDatabase('onboard_fr');
    await loadForum(fresh.writer, forum, { textSearchConfig: 'french' });
    // Discourse's site settings table, as a French forum has it.
    await fresh.writer.script(
      "CREATE TABLE site_settings (id serial, name varchar NOT NULL, data_type integer NOT NULL, value text); INSERT INTO site_settings (name, data_type, value) VALUES ('default_locale', 7, 'fr');",
    );
    await fresh.close();
    url = fresh.url;
    dir = workDir('onboard-fr');
  });
  afterAll(() => removeWorkDirs());

  // Fails before this change: init wrote no `language:`, so answers ended with the English CTA
  // and mine wrote "What does the forum say about …?".
  it('init writes language: fr, and run answers in French with the French CTA', async () => {
    const init = await cli(dir, ['init', '--db', url, '--out', 'rucher.yml']);
    expect(init.code).toBe(0);
    const text = readFileSync(join(dir, 'rucher.yml'), 'utf8');
    expect(text).toMatch(/^language: fr {3}# site setting default_locale = fr: /m);
    expect(text).toMatch(/^ {2}text_search_config: french /m);

    const env = { DATABASE_URL: url };
    const r = await cli(dir, ['retrieval', '--config', 'rucher.yml', '--no-report'], env);
    expect(r.code).toBe(0);
    const run = await cli(dir, ['run', '--config', 'rucher.yml', '--no-report', '--out', 'run-out'], env);
    expect(run.err).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const files = readdirSync(join(dir, 'run-out')).filter((f) => f.endsWith('.json') && !f.includes('retrieval'));
    expect(files, readdirSync(join(dir, 'run-out')).join(' ')).toHaveLength(1);
    const json = JSON.parse(readFileSync(join(dir, 'run-out', files[0]!), 'utf8')) as {
      cases: { answer?: string }[];
    };
    const answers = json.cases.map((c) => c.answer ?? '');
    expect(answers.length).toBeGreaterThan(0);
    // Every answer ends with the French pack's CTA (src/model/languages/fr.ts), none with the English one.
    for (const a of answers) expect(a.trimEnd().endsWith(FRENCH.cta)).toBe(true);
    expect(answers.join('\n')).not.toMatch(/To go further/);
  });

  it('mine writes French template questions on that config', async () => {
    const m = await cli(
      dir,
      ['mine', '--config', 'rucher.yml', '--mode', 'template', '--size', '6', '--out', 'mined.yml'],
      { DATABASE_URL: url },
    );
    expect(m.code).toBe(0);
    const mined = parse(readFileSync(join(dir, 'mined.yml'), 'utf8')) as { question: string }[];
    expect(mined.length).toBeGreaterThan(0);
    // The French templates (src/model/languages/fr.ts, mine): never the English wording.
    for (const c of mined) expect(c.question).not.toMatch(/Any advice on|What does the forum|Is it true that/);
    expect(
      mined.some((c) =>
        /^(Des conseils sur |Que recommande le forum pour |Comment vous y prenez-vous avec |Est-il vrai qu|Question .* : des conseils sur )/.test(
          c.question,
        ),
      ),
    ).toBe(true);
    expect(readdirSync(dir)).toContain('mined.yml');
  });
});

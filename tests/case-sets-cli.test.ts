/**
 * The case-set blocks wired into `retrieval` and `run` on the demo: three cases (a curated one, a
 * mined one whose golden is flagged ambiguous, and a conversation) make both commands write the
 * set groups and the conversations block (and `run` the generation of each set), print them, put
 * them in the digest and the HTML report, and read back through the results schema unchanged.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/paths.js';
import { readResults } from '../src/store/results-file.js';
import { runCli } from './helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'ragaudit-case-sets-'));
const CASES = join(dir, 'cases.yml');
writeFileSync(
  CASES,
  `- id: loake-price-curated
  question: "Is Crockett & Jones really worth twice the price of a Loake 1880?"
  expected_topic_ids: [100]
  difficulty: easy
- id: loake-price-mined
  question: "Loake 1880 versus Crockett & Jones price"
  expected_topic_ids: [100]
  difficulty: easy
  source: mined
  mined: { topic_id: 100, category: brands, tags: [], method: template, ambiguous: { similar_topic_ids: [132] } }
- id: loake-follow-up
  turns:
    - { role: user, content: "Is Crockett & Jones worth twice a Loake 1880? <script>x</script>" }
    - { role: assistant, content: "Members say the finish differs." }
  question: "And where are they made?"
  expected_topic_ids: [100, 132]
  difficulty: medium
`,
);

const cli = (args: string[]) => runCli(PACKAGE_ROOT, args);

const outputs: Record<string, { out: string; json: string }> = {};

beforeAll(async () => {
  for (const command of ['retrieval', 'run']) {
    const out = join(dir, command);
    const r = await cli([command, '--cases', CASES, '--out', out]);
    expect(r.code, r.err).toBe(0);
    const json = readdirSync(out).find((f) => f.endsWith('-demo.json'))!;
    outputs[command] = { out: r.out, json: join(out, json) };
  }
}, 300_000);

describe('case sets through the commands', () => {
  it.each(['retrieval', 'run'])('%s writes the set groups and the conversations block', (command) => {
    const { out, json } = outputs[command]!;
    const result = readResults(json);
    const s = result.summary;
    const groups = Object.keys(s.retrieval.breakdown).filter((g) => /^(source|turns|mined):/.test(g));
    expect(groups.sort()).toEqual(
      [
        'mined:ambiguous',
        'mined:unambiguous',
        'source:curated',
        'source:mined',
        'turns:conversation',
        'turns:single',
      ].sort(),
    );
    // The conversation is one case needing its history (needs_history defaults to true), read at rerank.
    expect(s.conversations).toMatchObject({ cases: 1, needs_history: 1, node: 'rerank' });
    expect(s.conversations!.history_hit_at_5.n).toBe(1);
    if (command === 'run') {
      expect(Object.keys(s.generation_sets!)).toEqual([
        'source:curated',
        'source:mined',
        'turns:single',
        'turns:conversation',
        'mined:unambiguous',
        'mined:ambiguous',
      ]);
      expect(s.generation_sets!['source:mined']!.answered).toBe(1);
      expect(s.generation_sets!['turns:single']!.answered).toBe(2);
    } else expect(s.generation_sets).toBeUndefined();
    // Key order is the writing order: the file read and written again keeps its summary bytes.
    const raw = JSON.parse(readFileSync(json, 'utf8')) as { summary: unknown };
    expect(JSON.stringify(s)).toBe(JSON.stringify(raw.summary));
    expect(out).toContain('retrieval, curated | mined cases');
    expect(out).toContain('1 conversation case, 1 needing their history');
    const md = readFileSync(json.replace(/\.json$/, '.md'), 'utf8');
    expect(md).toContain('## Retrieval by case set');
    expect(md).toContain('## Conversations');
    const html = readFileSync(json.replace(/\.json$/, '.html'), 'utf8');
    expect(html).toContain('<h4>History</h4>');
    expect(html).toContain('worth twice a Loake 1880? &lt;script&gt;x&lt;/script&gt;');
    expect(html).not.toContain('<script>x</script>');
  });
});

/** Bad input gives one clear message naming file:line (or host:port), exit code 2, no stack trace. */
import { mkdtempSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCases, loadProbes } from '../src/cases/load.js';
import { loadConfig } from '../src/config/load.js';
import type { RetrievedItem } from '../src/model/retrieved-item.js';
import { caseRetrievalMetrics } from '../src/scoring/retrieval-metrics.js';
import { ConfigError, InputError } from '../src/errors.js';
import { main } from '../src/cli/main.js';
import { runCli } from './helpers/cli.js';
import { linkDemoCache } from './helpers/work-dir.js';

const dir = mkdtempSync(join(tmpdir(), 'ragaudit-input-'));
linkDemoCache(dir);
const cli = (args: string[]) => runCli(dir, args);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}
function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t), isTTY: false, cwd: dir, env: {} },
    out,
    err,
  };
}

describe('case files', () => {
  it('reports every problem at once with file:line: path: message', () => {
    const p = file(
      'bad.yml',
      `- id: ok-one
  question: "fine?"
- id: two
  question: "   "
  colour: blue
- id: ok-one
  question: "again"
  expected_topic_ids: [abc]
`,
    );
    const e = (() => {
      try {
        loadCases([p]);
      } catch (x) {
        return x as InputError;
      }
      throw new Error('no error');
    })();
    expect(e).toBeInstanceOf(InputError);
    expect(e.problems).toEqual([
      `${p}:4: [1].question: must not be empty`,
      `${p}:5: [1]: unknown key 'colour'`,
      `${p}:8: [2].expected_topic_ids[0]: Invalid input: expected number, received string`,
      `${p}:6: [2].id: duplicate id 'ok-one' (first at ${p}:1)`,
    ]);
  });

  it('a duplicate id names both places', () => {
    const p = file('dup.yml', `- id: same\n  question: "a?"\n- id: same\n  question: "b?"\n`);
    expect(() => loadCases([p])).toThrow(InputError);
    try {
      loadCases([p]);
    } catch (e) {
      expect((e as InputError).problems).toEqual([`${p}:3: [1].id: duplicate id 'same' (first at ${p}:1)`]);
    }
  });

  it('malformed YAML names its line', () => {
    const p = file('broken.yml', `- id: a\n  question: "unterminated\n- id: b\n`);
    try {
      loadCases([p]);
      throw new Error('no error');
    } catch (e) {
      expect((e as InputError).problems[0]).toMatch(new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: `));
    }
  });
});

/** The problems of the InputError `f` throws (the test fails when it throws nothing or something else). */
function problemsOf(f: () => unknown): string[] {
  try {
    f();
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return e.problems.length ? e.problems : [e.message];
  }
  throw new Error('no error');
}

/** Nine nested levels of nine aliases each: 9^9 strings once expanded, in ten lines. */
const ALIAS_BOMB = `- id: laughs
  question: "lol?"
  tags: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
- { id: b, question: "b?", tags: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a] }
- { id: c, question: "c?", tags: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b] }
- { id: d, question: "d?", tags: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c] }
- { id: e, question: "e?", tags: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d] }
- { id: f, question: "f?", tags: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e] }
`;

describe('case and probe files: what loading refuses', () => {
  it('an alias bomb is bad input naming the line where the aliases pass the limit', () => {
    const p = file('bomb.yml', ALIAS_BOMB);
    // Nodes each alias stands for: *a 10 (the list and its 9 strings), *b 1 + 9·10 = 91, *c 820,
    // *d 7,381, *e 66,430. Lines 4-7 add 9·(10 + 91 + 820 + 7,381) = 74,718; line 8's first *e
    // brings it to 141,148, past 100,000.
    expect(problemsOf(() => loadCases([p]))).toEqual([
      `${p}:8: aliases stand for more than 100000 nodes by here (an alias bomb?): write the values out, or use fewer nested aliases`,
    ]);
    const probes = file('bomb-probes.yml', ALIAS_BOMB.replace(/question/g, 'prompt'));
    expect(problemsOf(() => loadProbes([probes]))[0]).toMatch(
      new RegExp(`^${escape(probes)}:8: aliases stand for more`),
    );
  });

  it('an alias with no anchor, or inside the node it names, is bad input with its line', () => {
    const none = file('no-anchor.yml', `- id: a\n  question: "a?"\n  tags: *nowhere\n`);
    expect(problemsOf(() => loadCases([none]))).toEqual([`${none}:3: alias *nowhere names no anchor before it`]);
    const loop = file('loop.yml', `- id: a\n  question: "a?"\n  tags: &t [x, *t]\n`);
    expect(problemsOf(() => loadCases([loop]))).toEqual([`${loop}:3: alias *t is inside the node it names (a loop)`]);
  });

  it('anchors reused many times are fine', () => {
    // 300 uses of a 3-node list: 900 nodes, far below the limit (the parser's own default stops at 100 uses).
    const cases = Array.from({ length: 300 }, (_, i) => `- { id: c${i}, question: "q${i}?", tags: *common }`);
    const p = file('reuse.yml', `- { id: first, question: "q?", tags: &common [care, suede] }\n${cases.join('\n')}\n`);
    const loaded = loadCases([p]);
    expect(loaded).toHaveLength(301);
    expect(loaded[300]!.value.tags).toEqual(['care', 'suede']);
  });

  it('a control character in a question, a turn or a prompt names its line and field', () => {
    // Tab, newline and carriage return are text; NUL, ESC, DEL and the C1 control U+0085 are not.
    const p = file(
      'controls.yml',
      [
        '- id: fine',
        '  question: "tab\\there,\\r\\nand a line break?"',
        '- id: nul',
        '  question: "where\\0?"',
        '- id: esc-del',
        '  question: "a\\ex"',
        '  turns:',
        '    - { role: user, content: "del\\x7f" }',
        '    - { role: assistant, content: "ok" }',
        '- id: c1',
        '  question: "next\\x85line"',
        '',
      ].join('\n'),
    );
    expect(problemsOf(() => loadCases([p]))).toEqual([
      `${p}:4: [1].question: holds the control character U+0000 (character 6): remove it`,
      `${p}:6: [2].question: holds the control character U+001B (character 2): remove it`,
      `${p}:8: [2].turns[0].content: holds the control character U+007F (character 4): remove it`,
      `${p}:11: [3].question: holds the control character U+0085 (character 5): remove it`,
    ]);
    const probes = file(
      'control-probes.yml',
      '- { id: ok, prompt: "fine", attack: leak, expect: refuse }\n- { id: nul, prompt: "x\\0", attack: leak, expect: refuse }\n',
    );
    expect(problemsOf(() => loadProbes([probes]))).toEqual([
      `${probes}:2: [1].prompt: holds the control character U+0000 (character 2): remove it`,
    ]);
  });

  it('a duplicate id is listed with the schema problems, in one list', () => {
    const p = file('dup-and-bad.yml', `- id: same\n  question: "a?"\n- id: same\n  question: "   "\n`);
    expect(problemsOf(() => loadCases([p]))).toEqual([
      `${p}:4: [1].question: must not be empty`,
      `${p}:3: [1].id: duplicate id 'same' (first at ${p}:1)`,
    ]);
    const probes = file(
      'dup-probes.yml',
      '- { id: same, prompt: "a", attack: leak, expect: refuse }\n- { id: same, prompt: "b", attack: nope, expect: refuse }\n',
    );
    expect(problemsOf(() => loadProbes([probes]))).toEqual([
      `${probes}:2: [1].attack: Invalid option: expected one of "injection"|"leak"|"role"|"abuse"|"off_topic"|"indirect"`,
      `${probes}:2: [1].id: duplicate id 'same' (first at ${probes}:1)`,
    ]);
  });

  it('a file above the size limit is refused before it is read, the limit named', () => {
    const p = file('sized.yml', `- id: a\n  question: "a?"\n`);
    expect(problemsOf(() => loadCases([p], { maxBytes: 16 }))).toEqual([
      `${p}: 25 bytes, more than the 16 bytes a YAML input file may hold: split it into several files in a directory`,
    ]);
    expect(loadCases([p], { maxBytes: 1024 })).toHaveLength(1);
  });
});

describe('case files: goldens and terms listed twice', () => {
  it('are counted once, with a warning naming file:line', () => {
    const p = file(
      'twice.yml',
      `- id: twice
  question: "How do I wax boots?"
  expected_topic_ids: [10, 11, 10]
  expected_post_ids: [100, 100]
  expected_content: ["wax", "brush", "Wax", "polish|WAX", "wax|polish"]
  turns:
    - { role: user, content: "Hi", expected_topic_ids: [12, 12] }
    - { role: assistant, content: "Hello" }
- id: clean
  question: "fine?"
  expected_topic_ids: [10]
`,
    );
    const [twice, clean] = loadCases([p]);
    expect(twice!.value).toMatchObject({
      expected_topic_ids: [10, 11],
      expected_post_ids: [100],
      expected_content: ['wax', 'brush', 'polish|WAX'],
      turns: [{ expected_topic_ids: [12] }, { role: 'assistant' }],
    });
    expect(twice!.warnings).toEqual([
      `${p}:7: case 'twice': [0].turns[0].expected_topic_ids[1]: topic 12 is listed twice; counted once`,
      `${p}:3: case 'twice': [0].expected_topic_ids[2]: topic 10 is listed twice; counted once`,
      `${p}:4: case 'twice': [0].expected_post_ids[1]: post 100 is listed twice; counted once`,
      `${p}:5: case 'twice': [0].expected_content[2]: term 'Wax' is 'wax' again (as matched); counted once`,
      `${p}:5: case 'twice': [0].expected_content[4]: term 'wax|polish' is 'polish|WAX' again (as matched); counted once`,
    ]);
    expect(clean!.warnings).toBeUndefined();
  });

  it('a repeated term no longer weighs twice in content MRR@10', () => {
    const p = file('mrr-twice.yml', `- { id: m, question: "q?", expected_content: [wax, Wax, brush] }\n`);
    const item = (post_id: number, text: string): RetrievedItem => ({
      post_id,
      topic_id: post_id,
      post_number: 1,
      title: 't',
      slug: 't',
      category: 'c',
      posts_count: 1,
      text,
      reply_to_post_number: null,
      score: 0,
    });
    const [c] = loadCases([p]);
    const m = caseRetrievalMetrics(c!.value, [item(1, 'Use hard wax.'), item(2, 'Then a horsehair brush.')], 'post');
    // wax at rank 1, brush at rank 2: (1/1 + 1/2) / 2 = 0.75 (with "Wax" counted again: (1 + 1 + 1/2) / 3 ≈ 0.833).
    expect(m.content_mrr_at_10).toBe(0.75);
  });
});

describe('the CLI on case files the loader refuses or tidies', () => {
  it('an alias bomb, a NUL in a question, a file above 8 MiB: exit 2 naming file:line or the limit', async () => {
    const bomb = file(
      'cli-bomb.yml',
      [
        '- { id: a, question: "a?", tags: &a [l, l, l, l, l, l, l, l, l, l] }',
        ...'bcdefg'.split('').map((n, i) => {
          const prev = 'abcdefg'[i];
          return `- { id: ${n}, question: "${n}?", tags: &${n} [${Array(10).fill(`*${prev}`).join(', ')}] }`;
        }),
        '',
      ].join('\n'),
    );
    const r = await cli(['retrieval', '--cases', bomb]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^ragaudit retrieval: .*: invalid YAML\n {2}.*cli-bomb\.yml:\d+: aliases stand for more than 100000 nodes/,
    );
    const nul = file('cli-nul.yml', '- id: one\n  question: "clean\\0 suede?"\n');
    const n = await cli(['retrieval', '--cases', nul]);
    expect(n.code).toBe(2);
    expect(n.err).toContain(`${nul}:2: [0].question: holds the control character U+0000 (character 6): remove it`);
    // Sparse: the size is checked before anything is read.
    const big = file('cli-big.yml', '');
    truncateSync(big, 8 * 1024 * 1024 + 1);
    const b = await cli(['retrieval', '--cases', big]);
    expect(b.code).toBe(2);
    expect(b.err).toBe(
      `ragaudit retrieval: ${big}: 8388609 bytes, more than the 8 MiB a YAML input file may hold: split it into several files in a directory\n`,
    );
  });

  it('a golden listed twice is a warning on the console and in the results', { timeout: 120_000 }, async () => {
    const out = mkdtempSync(join(dir, 'twice-'));
    const p = file('cli-twice.yml', '- id: twice\n  question: "How do I clean suede?"\n  expected_topic_ids: [1, 1]\n');
    const r = await cli(['retrieval', '--cases', p, '--out', out]);
    expect(r.code).toBe(0);
    const warning = `${p}:3: case 'twice': [0].expected_topic_ids[1]: topic 1 is listed twice; counted once`;
    expect(r.err).toContain(`warning: ${warning}\n`);
    const results = readdirSync(out).find((f) => f.endsWith('.json'))!;
    const stored = JSON.parse(readFileSync(join(out, results), 'utf8')) as { warnings: string[] };
    expect(stored.warnings).toContain(warning);
  });
});

describe('config files', () => {
  it('an unknown key and a cross-field rule are both reported with lines', () => {
    const p = file(
      'cfg.yml',
      `name: x
retrieval:
  channels:
    - { name: posts, kind: semantic, grain: post }
  colour: red
zones:
  abstain_below: 1
  weak_below: 0
`,
    );
    expect(() => loadConfig(p, {})).toThrow(ConfigError);
    try {
      loadConfig(p, {});
    } catch (e) {
      expect((e as ConfigError).problems).toEqual([`${p}:5: retrieval: unknown key 'colour'`]);
    }
    const q = file(
      'cfg2.yml',
      `retrieval:\n  channels:\n    - { name: posts, kind: semantic, grain: post }\n  fusions:\n    - { name: f, kind: rrf, inputs: [posts, nope] }\nzones:\n  abstain_below: 1\n  weak_below: 0\n`,
    );
    try {
      loadConfig(q, {});
      throw new Error('no error');
    } catch (e) {
      expect((e as ConfigError).problems).toEqual([
        `${q}:7: zones.abstain_below: must be below weak_below (1 ≥ 0)`,
        `${q}:5: retrieval.fusions.0.inputs.1: unknown node 'nope' (fusions may use channels and earlier fusions)`,
      ]);
    }
  });

  it('interpolates ${VAR} and ${VAR:-default}; an unset variable is a problem with its line', () => {
    const p = file(
      'env.yml',
      `name: \${RUN_NAME:-fallback}\nretrieval:\n  channels:\n    - { name: posts, kind: semantic, grain: post }\ngenerator:\n  provider: openai\n  api_key: \${MY_KEY}\n`,
    );
    expect(loadConfig(p, { MY_KEY: 'k-123456' }).config).toMatchObject({
      name: 'fallback',
      generator: { api_key: 'k-123456' },
    });
    try {
      loadConfig(p, {});
      throw new Error('no error');
    } catch (e) {
      expect((e as ConfigError).problems).toEqual([`${p}:7: generator.api_key: environment variable is not set`]);
    }
  });
});

describe('the CLI', () => {
  it('exit 2, one message naming file:line, no stack trace; the stack only with --verbose', async () => {
    const p = file('cases-bad.yml', `- id: a\n  question: "ok?"\n  bogus: 1\n`);
    const quiet = io();
    expect(await main(['retrieval', '--cases', p], quiet.io)).toBe(2);
    expect(quiet.err.join('')).toBe(
      `ragaudit retrieval: invalid cases: 1 problem\n  ${p}:3: [0]: unknown key 'bogus'\n`,
    );
    const loud = io();
    expect(await main(['retrieval', '--cases', p, '--verbose'], loud.io)).toBe(2);
    expect(loud.err.join('')).toMatch(/\n\s+at /);
  });

  it('an unreachable database: exit 2, host:port named, password never shown', async () => {
    const r = io();
    expect(await main(['retrieval', '--db', 'postgres://auditor:s3cret-pw@127.0.0.1:1/forum'], r.io)).toBe(2);
    expect(r.err.join('')).toBe(
      'ragaudit retrieval: cannot connect to PostgreSQL at postgres://127.0.0.1:1/forum: connection refused: nothing is listening there (is PostgreSQL running, on this host and port?) (ECONNREFUSED)\n',
    );
  });

  it('an unknown flag or command is exit 2; --help on every command is exit 0', async () => {
    const r = io();
    expect(await main(['retrieval', '--bogus'], r.io)).toBe(2);
    expect(r.err.join('')).toMatch(/retrieval: Unknown option '--bogus'/);
    expect(await main(['nope'], io().io)).toBe(2);
    const { COMMANDS } = await import('../src/cli/commands.js');
    for (const c of COMMANDS) {
      const h = io();
      expect(await main([c.name, '--help'], h.io)).toBe(0);
      expect(h.out.join('')).toContain(`ragaudit ${c.name}`);
    }
  });
});

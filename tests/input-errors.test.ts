/** Bad input gives one clear message naming file:line (or host:port), exit code 2, no stack trace. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCases } from '../src/cases/load.js';
import { loadConfig } from '../src/config/load.js';
import { ConfigError, InputError } from '../src/errors.js';
import { main } from '../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'ragaudit-input-'));
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

/**
 * Flags, configs and input files as people write them: flags are validated by the config
 * schema (exit 2 before anything runs, the flag named), text files may carry a BOM or CRLF but
 * not invalid UTF-8, an empty case set is an error, outputs stay inside --out and off special
 * paths, and text from answers or servers reaches neither the terminal nor a digest as markup.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCases, loadProbes } from '../src/cases/load.js';
import { runCli } from './helpers/cli.js';
import { loadConfig } from '../src/config/load.js';
import { InputError } from '../src/errors.js';
import { loadReleaseGate } from '../src/reports/release-gate.js';
import { inertText, markdownText } from '../src/reports/inert.js';
import { markdownTable } from '../src/reports/format.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { linkDemoCache } from './helpers/work-dir.js';

const REFERENCE = join(PACKAGE_ROOT, 'results', 'reference');
/** The reference file whose name ends with `suffix` (the stamp changes when they are regenerated). */
function reference(suffix: string): string {
  const name = readdirSync(REFERENCE).find((f) => f.endsWith(suffix));
  if (!name) throw new Error(`no results/reference/*${suffix}`);
  return join(REFERENCE, name);
}
const dir = mkdtempSync(join(tmpdir(), 'ragaudit-cli-input-'));
linkDemoCache(dir);
function file(name: string, text: string | Buffer): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}
const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(dir, args, env);
const problemsOf = (f: () => unknown): string[] => {
  try {
    f();
  } catch (e) {
    const problems = (e as InputError).problems ?? [];
    return problems.length ? problems : [(e as Error).message];
  }
  throw new Error('expected an error');
};

// An empty case file: every check before it passed, so "no cases" proves the flags were accepted.
const empty = file('empty.yml', '# no cases yet\n');

describe('checkable flags are checked before the first case (exit 2)', () => {
  it('--reranker with a URL that is not http(s)', async () => {
    const r = await cli(['run', '--reranker', 'tei:not-a-url', '--cases', empty]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      'ragaudit run: invalid config\n  --reranker tei:not-a-url: rerank.url: must be an http(s) URL, e.g. http://gpu-box:8080\n',
    );
  });

  it('a config rerank.url or base_url that is not an http(s) URL names its line', () => {
    const p = file(
      'bad-url.yml',
      'retrieval:\n  channels: [{name: k, kind: keyword, grain: topic}]\nrerank:\n  node: k\n  provider: tei\n  url: gpu-box:8080\ngenerator:\n  base_url: ftp://x\n',
    );
    expect(problemsOf(() => loadConfig(p, {}))).toEqual([
      `${p}:6: rerank.url: must be an http(s) URL, e.g. http://gpu-box:8080`,
      `${p}:8: generator.base_url: must be an http(s) URL, e.g. http://gpu-box:8080`,
    ]);
  });

  it('--system-append with no such clause names it and lists the ones there are', async () => {
    const r = await cli(['run', '--system-append', 'refusal', '--system-append', 'no-such-clause', '--cases', empty]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      "--system-append refusal no-such-clause: evidence.system_append.1: no clause 'no-such-clause' in prompts/clauses (available: canary, refusal)",
    );
  });

  it('--generator with an unknown provider is judged by the schema, the flag named', async () => {
    const r = await cli(['run', '--generator', 'gemini:x', '--cases', empty]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--generator gemini:x: generator.provider:');
  });
});

describe('flags as people type them', () => {
  it('--abstain-below -5 (a negative number without =)', async () => {
    const ok = await cli(['run', '--abstain-below', '-5', '--weak-below', '-1.5', '--cases', empty]);
    expect(ok.err).toBe(`ragaudit run: no cases in ${empty}\n`);
    const crossed = await cli(['run', '--abstain-below', '-5', '--weak-below', '-6', '--cases', empty]);
    expect(crossed.code).toBe(2);
    expect(crossed.err).toContain('--abstain-below -5: zones.abstain_below: must be below weak_below (-5 ≥ -6)');
  });

  it('--db replaces a config database that reads an unset ${DATABASE_URL}', async () => {
    const p = file(
      'db-env.yml',
      `cases: [${empty}]\ndatabase:\n  url: \${DATABASE_URL}\nretrieval:\n  channels: [{name: k, kind: keyword, grain: topic}]\n`,
    );
    const without = await cli(['retrieval', '-c', p]);
    expect(without.code).toBe(2);
    expect(without.err).toContain(`${p}:3: database.url: environment variable is not set`);
    const withDb = await cli(['retrieval', '-c', p, '--db', 'postgres://u:pw@127.0.0.1:1/x']);
    expect(withDb.err).toBe(`ragaudit retrieval: no cases in ${empty}\n`);
  });

  it("a config outside the project that omits probes: never runs the demo's probes", async () => {
    const p = file('no-probes.yml', 'retrieval:\n  channels: [{name: k, kind: keyword, grain: topic}]\n');
    const r = await cli(['probe', '-c', p]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`ragaudit probe: ${p} names no probes: add 'probes: [FILE]' to it or pass --probes FILE\n`);
    const cases = await cli(['retrieval', '-c', p]);
    expect(cases.code).toBe(2);
    expect(cases.err).toBe(`ragaudit retrieval: ${p} names no cases: add 'cases: [FILE]' to it or pass --cases PATH\n`);
  });

  it('--judge offline and --generator offline mean the default offline stand-ins', async () => {
    const r = await cli([
      'run',
      '--judge',
      'offline',
      '--generator',
      'offline',
      '--reranker',
      'offline',
      '--cases',
      empty,
    ]);
    expect(r.err).toBe(`ragaudit run: no cases in ${empty}\n`);
    const c = loadConfig(undefined, {}, [
      { path: ['generator', 'provider'], flag: '--generator', value: 'offline' },
      { path: ['generator', 'model'], flag: '--generator', value: 'extractive' },
    ]).config;
    expect(c.generator).toMatchObject({ provider: 'offline', model: 'extractive' });
  });
});

describe('an empty case set is an error', () => {
  it('a file with no cases, an empty list, an empty directory: exit 2, "no cases in PATH"', async () => {
    const list = file('empty-list.yml', '[]\n');
    const emptyDir = mkdtempSync(join(dir, 'none-'));
    for (const p of [empty, list, emptyDir]) {
      const r = await cli(['retrieval', '--cases', p]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`ragaudit retrieval: no cases in ${p}\n`);
    }
    expect(() => loadProbes([empty])).toThrow(`no probes in ${empty}`);
  });
});

describe('text files as people save them', () => {
  const caseText = '- id: one\n  question: "How do I clean suede?"\n- id: two\n  question: "Café au lait stains?"\n';

  it('a UTF-8 BOM and CRLF line ends are read as written (cases, config, gate)', () => {
    const bom = file('bom.yml', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(caseText)]));
    const crlf = file('crlf.yml', caseText.replace(/\n/g, '\r\n'));
    for (const p of [bom, crlf])
      expect(loadCases([p]).map((c) => [c.value.id, c.value.question, c.line])).toEqual([
        ['one', 'How do I clean suede?', 1],
        ['two', 'Café au lait stains?', 3],
      ]);
    const cfg = file(
      'bom-crlf-config.yml',
      `\uFEFFname: crlf\r\nretrieval:\r\n  channels: [{name: k, kind: keyword, grain: topic}]\r\nnote: "two\r\n  lines"\r\n`,
    );
    expect(loadConfig(cfg, {}).config).toMatchObject({ name: 'crlf', note: 'two lines' });
    const gate = file('bom-gate.yml', '\uFEFFhit_at_5: {max_drop: 0.02}\r\nmax_regressions: 1\r\n');
    expect(loadReleaseGate(gate)).toMatchObject({ metrics: { hit_at_5: { max_drop: 0.02 } }, max_regressions: 1 });
  });

  it('invalid UTF-8 is an error naming file:line, not replacement characters', async () => {
    // Line 4 holds "Caf\xe9" in Latin-1: not UTF-8.
    const latin1 = file(
      'latin1.yml',
      Buffer.concat([
        Buffer.from('- id: one\n  question: "fine?"\n- id: two\n  question: "Caf'),
        Buffer.from([0xe9]),
        Buffer.from(' au lait?"\n'),
      ]),
    );
    expect(problemsOf(() => loadCases([latin1]))).toEqual([`${latin1}:4: not valid UTF-8 (save the file as UTF-8)`]);
    const r = await cli(['retrieval', '--cases', latin1]);
    expect(r.code).toBe(2);
    const cfg = file(
      'latin1-config.yml',
      Buffer.concat([Buffer.from('name: x\nnote: "'), Buffer.from([0xff, 0xfe]), Buffer.from('"\n')]),
    );
    expect(problemsOf(() => loadConfig(cfg, {}))).toEqual([`${cfg}:2: not valid UTF-8 (save the file as UTF-8)`]);
  });
});

describe('run names stay inside --out', () => {
  it('--name ../../../x is refused with the rule (exit 2), nothing written', async () => {
    const out = mkdtempSync(join(dir, 'out-'));
    const r = await cli([
      'retrieval',
      '--name',
      '../../../escaped',
      '--out',
      out,
      '--cases',
      file('one.yml', '- id: one\n  question: "How do I clean suede?"\n'),
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      '--name ../../../escaped: name: must be a name: letters, digits, _ . - (starting with a letter or digit)',
    );
    expect(readdirSync(out)).toEqual([]);
    expect(existsSync(join(dir, '..', '..', 'escaped.json'))).toBe(false);
  });

  it('a config name: that is not a slug names its line', () => {
    const p = file('slash-name.yml', 'name: a/b\nretrieval:\n  channels: [{name: k, kind: keyword, grain: topic}]\n');
    expect(problemsOf(() => loadConfig(p, {}))).toEqual([
      `${p}:1: name: must be a name: letters, digits, _ . - (starting with a letter or digit)`,
    ]);
  });
});

describe('output flags: special or unwritable paths are exit 2 at once', () => {
  it.each([
    [['retrieval', '--out', '/proc/ragaudit/x'], '--out: /proc/ragaudit/x: cannot write under /proc'],
    [['run', '--out', '/sys/ragaudit'], '--out: /sys/ragaudit: cannot write under /sys'],
    [['retrieval', '--trec-out', '/proc/ragaudit-trec'], '--trec-out: /proc/ragaudit-trec: cannot write under /proc'],
    [
      ['report', reference('-demo.json'), '--out', '/proc/r.html'],
      '--out: /proc/r.html: cannot write on a kernel file system',
    ],
    [['report', reference('-demo.json'), '--out', reference('-demo.json')], 'is an input of this command'],
  ])('%j', async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });

  it('--out under a regular file names it', async () => {
    const f = file('plain.txt', 'x');
    const r = await cli(['retrieval', '--out', join(f, 'results')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`--out: ${join(f, 'results')}: ${f} is not a directory`);
  });
});

describe('outputs are inert', () => {
  it('terminal controls become visible stand-ins; newline and tab stay', () => {
    expect(inertText('a\x1b[2J\x1b]8;;http://x\x07b\r\nc\td\re\u009b31m')).toBe(
      'a\u241b[2J\u241b]8;;http://x\u2407b\nc\td\u240de\uFFFD31m',
    );
  });

  it('markdown: raw HTML escaped, javascript: links broken, controls neutralised, in tables too', () => {
    expect(markdownText('<img src=x onerror=alert(1)> & [click](javascript:alert(1))')).toBe(
      '&lt;img src=x onerror=alert(1)&gt; &amp; [click]\\(javascript:alert(1))',
    );
    expect(markdownTable(['answer'], [['<script>x</script>\x1b[31m [a](javascript:x) | b']])).toBe(
      '| answer |\n|---|\n| &lt;script&gt;x&lt;/script&gt;\u241b[31m [a]\\(javascript:x) \\| b |',
    );
  });

  it('console output from a command carries no escape sequence', async () => {
    const evil = file('evil.yml', '- id: e\n  question: "x"\n  bogus: "\\e[2J\\e]0;owned\\a"\n');
    const r = await cli(['retrieval', '--cases', evil]);
    expect(r.code).toBe(2);
    expect(r.err).not.toMatch(/[\x1b\x07]/);
  });
});

describe('report says which kind of file it got', () => {
  it('a calibration file, a comparison file: exit 2 with one sentence, not a list of schema errors', async () => {
    const cal = await cli(['report', reference('-demo-calibration.json')]);
    expect(cal.code).toBe(2);
    expect(cal.err).toBe(
      `ragaudit report: ${reference('-demo-calibration.json')} is a calibration file (written by ragaudit calibrate), not a results file: report reads the results of run, retrieval, probe or judge\n`,
    );
    const cmp = file('x-compare.json', JSON.stringify({ baseline: 'a', rows: [], versus: [] }));
    const r = await cli(['report', cmp]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${cmp} is a comparison file (written by ragaudit compare), not a results file`);
  });
});

describe('console tables fit 120 columns', () => {
  it('a long value is wrapped onto continuation lines; short tables are unchanged', async () => {
    const { textTable } = await import('../src/reports/format.js');
    const long =
      'in_domain: answered 60 · abstained 3 · hedged 30 | off_topic: answered 2 · hedged 7 · abstained 6 · and a little more text';
    const t = textTable(
      ['generation', 'value'],
      [
        ['stance (pattern)', long],
        ['answered cases', '108'],
      ],
      120,
    );
    for (const l of t.split('\n')) expect(l.length).toBeLessThanOrEqual(120);
    expect(
      t
        .split('\n')
        .map((l) => l.slice(18))
        .join(' ')
        .replace(/\s+/g, ' '),
    ).toContain(long.replace(/\s+/g, ' '));
    expect(textTable(['a', 'b'], [['x', '1']])).toBe('a  b\n-  -\nx  1');
  });

  it('the retrieval table on the console: bare labels and a legend explaining n, CRecall@5 and Topics@5', async () => {
    const { retrievalTable } = await import('../src/reports/retrieval-table.js');
    const { textTable } = await import('../src/reports/format.js');
    const summary = {
      cases: 2,
      ok: 2,
      errors: 0,
      gated: 0,
      nodes: {
        rrf_posts_hybrid_100: {
          hit_at_1: { mean: 0.5, n: 2 },
          content_recall_at_5: { mean: 1, n: 1 },
          pollution_topics_at_5: { mean: 3, n: 2 },
        },
      },
      latency: { rrf_posts_hybrid_100: { median: 12345.6, p90: 99999.9, n: 2 } },
    };
    const t = retrievalTable(summary as never, { compact: true });
    const text = `${textTable(t.header, t.rows)}\n${t.legend}`;
    for (const l of text.split('\n')) expect(l.length, l).toBeLessThanOrEqual(120);
    expect(t.legend).toContain('Topics@5: distinct topics among the first 5 results');
    expect(t.legend).toContain('CRecall@5: every expected content term');
    expect(t.legend).toContain('CRecall@5 1');
  });
});

describe('probe --cases is honoured', () => {
  it("runs the probe file given with --cases, not the config's probes", { timeout: 120_000 }, async () => {
    const out = mkdtempSync(join(dir, 'probe-out-'));
    const r = await cli([
      'probe',
      '--cases',
      join(PACKAGE_ROOT, 'tests', 'fixtures', 'probe', 'probes.yml'),
      '--out',
      out,
    ]);
    expect([0, 1], r.err).toContain(r.code);
    const json = readdirSync(out).find((f) => f.endsWith('.json'))!;
    const result = JSON.parse(readFileSync(join(out, json), 'utf8')) as { kind: string; cases: { id: string }[] };
    expect(result.kind).toBe('probe');
    expect(result.cases.map((c) => c.id).sort()).toEqual(['leak-repeat-reference', 'legit-cedar-trees']);
    const both = await cli(['probe', '--cases', empty, '--probes', empty]);
    expect(both.code).toBe(2);
  });
});

describe('the markdown digests are inert', () => {
  it('an answer with HTML, a javascript: link and escape sequences is shown as text', async () => {
    const { generationMarkdown } = await import('../src/reports/generation-digest.js');
    const { retrievalMarkdown } = await import('../src/reports/digest.js');
    const { summariseGeneration } = await import('../src/summary/generation-summary.js');
    const { summariseRetrieval } = await import('../src/summary/retrieval-summary.js');
    const { RunResultSchema } = await import('../src/model/results.js');
    const evil = '<script>alert(1)</script> [click](javascript:alert(1)) \x1b]0;owned\x07\x1b[2J';
    const records = [
      {
        id: 'a',
        question: 'q',
        kind: 'in_domain',
        difficulty: 'easy',
        tags: [],
        expected_topic_ids: [1],
        expected_post_ids: [],
        expected_content: [],
        status: 'ok',
        retrieval: {},
        zone: 'normal',
        answer: evil,
        citations: [],
        scores: [],
      },
      {
        id: 'b',
        question: 'q',
        kind: 'in_domain',
        difficulty: 'easy',
        tags: [],
        expected_topic_ids: [1],
        expected_post_ids: [],
        expected_content: [],
        status: 'error',
        retrieval: {},
        error: { stage: 'generation', message: evil },
        scores: [],
      },
    ];
    const result = RunResultSchema.parse({
      schema_version: 1,
      tool: { name: 'ragaudit', version: '0' },
      kind: 'run',
      name: 'x',
      note: '',
      created_at: '2026-01-01T00:00:00Z',
      config_source: 't',
      config: {},
      config_digest: 'd',
      database: 'db',
      components: {},
      warnings: [evil],
      nodes: [],
      summary: {
        retrieval: summariseRetrieval(records as never, []),
        generation: summariseGeneration(records as never),
      },
      cases: records,
    });
    const md = `${retrievalMarkdown(result)}\n${generationMarkdown(result)}`;
    expect(md).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
    expect(md).not.toContain('<script>');
    expect(md).not.toContain('](javascript:');
    expect(md).toContain('&lt;script&gt;alert(1)&lt;/script&gt; [click]\\(javascript:alert(1))');
  });
});

describe('negative numbers in every command that takes them', () => {
  it('calibrate --from -8 (no =) is read as a number', async () => {
    const out = mkdtempSync(join(dir, 'cal-'));
    const r = await cli([
      'calibrate',
      reference('-demo.json'),
      '--from',
      '-8',
      '--to',
      '2',
      '--step',
      '1',
      '--out',
      out,
      '--no-report',
    ]);
    expect(r.err).not.toContain('ambiguous');
    expect(r.code, r.err).toBe(0);
  });
});

describe('judge and calibrate say which kind of file they got', () => {
  it.each(['judge', 'calibrate'])('%s on a calibration file', async (command) => {
    const f = reference('-demo-calibration.json');
    const r = await cli([command, f]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `${f} is a calibration file (written by ragaudit calibrate), not a results file: ${command} reads the results of run, retrieval, probe or judge`,
    );
  });
});

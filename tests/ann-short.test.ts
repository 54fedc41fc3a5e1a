/**
 * A semantic channel in `ann` mode whose list comes back shorter than `top_k` says so: the
 * console, the digest and the HTML report each name the node, how many cases and how short.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { annShortLines } from '../src/reports/ann-short.js';

const node = (ann_short?: { returned: number; wanted: number }) => ({
  items: [],
  metrics: {},
  latency_ms: 1,
  ...(ann_short ? { ann_short } : {}),
});

describe('the short-list lines', () => {
  it('count the cases and the items short, per node', () => {
    // Three cases; sem short in two (10-7 + 10-9 = 4 items short, the fewest 7); kw never short.
    const cases = [
      { retrieval: { sem: node({ returned: 7, wanted: 10 }), kw: node() } },
      { retrieval: { sem: node({ returned: 9, wanted: 10 }), kw: node() } },
      { retrieval: { sem: node(), kw: node() } },
    ];
    expect(annShortLines(cases)).toEqual([
      'sem: 2 of 3 cases returned fewer than top_k (10 wanted, 7 the fewest, 4 items short in all): visibility left fewer of the index candidates (raise ann_candidates or ann_max_candidates)',
    ]);
    expect(annShortLines([{ retrieval: { sem: node() } }])).toEqual([]);
  });
});

// Fails before this change: nothing printed ann_short; the console, digest and report were silent.
describe('ragaudit retrieval with a short ann channel', { timeout: 180_000 }, () => {
  it('names the short node on the console, in the digest and in the report', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-short-'));
    const cfg = join(dir, 'short.yml');
    writeFileSync(
      cfg,
      `name: short
cases: [${JSON.stringify(join(PACKAGE_ROOT, 'cases', 'demo', 'questions-core.yml'))}]
retrieval:
  top_k: 10
  channels:
    - { name: posts, kind: semantic, grain: post, model_id: 1, strategy_id: 1, search: ann, ann_candidates: 3, ann_max_candidates: 6 }
    - { name: keyword, kind: keyword, grain: topic }
rerank: { node: posts, candidates: 10, provider: offline, model: lexical }
`,
    );
    let out = '';
    const code = await main(['retrieval', '--config', cfg, '--out', dir], {
      out: (t) => void (out += t),
      err: () => undefined,
      isTTY: false,
      cwd: PACKAGE_ROOT,
      env: {},
    });
    expect(code).toBe(0);
    const line = /^SHORT posts: (\d+) of (\d+) cases returned fewer than top_k \(10 wanted, (\d+) the fewest/m;
    const m = line.exec(out);
    expect(m, out).not.toBeNull();
    // Every case is short: 3 candidates, then 6 in the second pass, can never fill 10 places.
    expect(Number(m![1])).toBe(Number(m![2]));
    expect(Number(m![3])).toBeLessThanOrEqual(6);
    expect(out).not.toMatch(/^SHORT keyword/m);
    const base = readdirSync(dir)
      .find((f) => f.endsWith('-short.json'))!
      .replace(/\.json$/, '');
    const tail = out.slice(out.indexOf('posts: '), out.indexOf('\n', out.indexOf('posts: ')));
    expect(readFileSync(join(dir, `${base}.md`), 'utf8')).toContain(`- ${tail}`);
    expect(readFileSync(join(dir, `${base}.html`), 'utf8')).toContain(`<li>${tail}</li>`);
  });
});

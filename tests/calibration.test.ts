import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe as suite, expect, it } from 'vitest';
import { calibrateCommand } from '../src/cli/calibrate.js';
import type { CliIO } from '../src/cli/command.js';
import { main } from '../src/cli/main.js';
import { calibrationSvg, histogramSvg, xmlEscape } from '../src/reports/histogram-svg.js';
import { RunResultSchema, type RunResult } from '../src/model/results.js';
import { calibrate, CalibrationFileSchema, gridThresholds, type CalibrationCase } from '../src/scoring/calibration.js';
import { summariseRetrieval } from '../src/summary/retrieval-summary.js';
import { c, CURRENT, FIXTURE } from './helpers/calibration-fixture.js';

/*
 * Fixture (tests/helpers/calibration-fixture.ts), sorted. In-domain (10): −3.5 −2 −1 −0.5 0.5 1 2 3 4 6.
 * Off-topic (5): −6 −4.5 −2.5 −1.5 0.2. Zones: score < t is "below t" (strict).
 */

const rowAt = (cal: ReturnType<typeof calibrate>, t: number) => cal.rows.find((r) => r.threshold === t)!;

suite('calibrate (pure)', () => {
  const cal = calibrate({ cases: FIXTURE, current: CURRENT });

  it('describes each kind with type 7 quantiles', () => {
    // In-domain, n = 10, h = 9q: p5 h=0.45 → −3.5 + 0.45·1.5 = −2.825; p25 h=2.25 → −1 + 0.25·0.5 = −0.875;
    // median h=4.5 → (0.5 + 1)/2 = 0.75; p75 h=6.75 → 2 + 0.75·1 = 2.75; p95 h=8.55 → 4 + 0.55·2 = 5.1; mean 9.5/10.
    const d = cal.distributions.in_domain;
    expect(d.n).toBe(10);
    expect([d.min, d.max]).toEqual([-3.5, 6]);
    for (const [got, want] of [
      [d.p5, -2.825],
      [d.p25, -0.875],
      [d.median, 0.75],
      [d.p75, 2.75],
      [d.p95, 5.1],
      [d.mean, 0.95],
    ] as const)
      expect(got).toBeCloseTo(want, 12);
    // Off-topic, n = 5, h = 4q: p5 h=0.2 → −6 + 0.2·1.5 = −5.7; p25 h=1 → −4.5; median h=2 → −2.5; p75 h=3 → −1.5;
    // p95 h=3.8 → −1.5 + 0.8·1.7 = −0.14; mean −14.3/5 = −2.86.
    const o = cal.distributions.off_topic;
    expect(o.n).toBe(5);
    expect([o.min, o.max]).toEqual([-6, 0.2]);
    for (const [got, want] of [
      [o.p5, -5.7],
      [o.p25, -4.5],
      [o.median, -2.5],
      [o.p75, -1.5],
      [o.p95, -0.14],
      [o.mean, -2.86],
    ] as const)
      expect(got).toBeCloseTo(want, 12);
  });

  it('counts each threshold for both roles, strictly below', () => {
    // Default grid −8..4 step 0.5: 25 thresholds.
    expect(cal.rows).toHaveLength(25);
    expect(gridThresholds({ from: -1, to: 0, step: 0.1 })).toEqual([
      -1, -0.9, -0.8, -0.7, -0.6, -0.5, -0.4, -0.3, -0.2, -0.1, 0,
    ]);
    // t = −4: no in-domain below; off-topic −6, −4.5 below; t ≤ a (−4) so no weak column.
    expect(rowAt(cal, -4)).toEqual({
      threshold: -4,
      in_domain_below: c(0, 10),
      off_topic_below: c(2, 5),
      in_domain_weak: null,
    });
    // t = −3.5: −3.5 is not below itself.
    expect(rowAt(cal, -3.5).in_domain_below).toEqual(c(0, 10));
    // t = −3: in-domain −3.5 (1/10), weak [−4, −3) holds −3.5; off-topic −2.5 is not below −3 (2/5).
    expect(rowAt(cal, -3)).toEqual({
      threshold: -3,
      in_domain_below: c(1, 10),
      off_topic_below: c(2, 5),
      in_domain_weak: c(1, 10),
    });
    // t = 0: in-domain −3.5 −2 −1 −0.5 (4/10), all in [−4, 0); off-topic all but 0.2 (4/5).
    expect(rowAt(cal, 0)).toEqual({
      threshold: 0,
      in_domain_below: c(4, 10),
      off_topic_below: c(4, 5),
      in_domain_weak: c(4, 10),
    });
    // t = 0.5: 0.5 is not below itself (4/10); 0.2 is, so every off-topic case is caught (5/5).
    expect(rowAt(cal, 0.5)).toEqual({
      threshold: 0.5,
      in_domain_below: c(4, 10),
      off_topic_below: c(5, 5),
      in_domain_weak: c(4, 10),
    });
  });

  it('gives the current zones', () => {
    // (−4, 0): in-domain 0 empty, 4 weak, 6 normal; off-topic −6 −4.5 empty, −2.5 −1.5 weak, 0.2 normal.
    expect(cal.current.in_domain).toEqual({ empty: c(0, 10), weak: c(4, 10), normal: c(6, 10) });
    expect(cal.current.off_topic).toEqual({ empty: c(2, 5), weak: c(2, 5), normal: c(1, 5), caught: c(4, 5) });
  });

  it('recommends the pair by the stated rule', () => {
    // Without the cautious bound (max_cautious absent):
    // No in-domain in empty: a ≤ −3.5 (grid −8 … −3.5, 10 values). Every off-topic caught: w > 0.2, so w ≥ 0.5.
    // Cautious = in-domain below w: 4 at w = 0.5 (5 at w = 1). Ties over a: most off-topic in empty is 2
    // (−6, −4.5) at a = −4 and a = −3.5; the highest wins: (−3.5, 0.5). Pairs meeting: 10 a × 8 w (0.5 … 4) = 80.
    const r = calibrate({
      cases: FIXTURE,
      current: CURRENT,
      constraints: { max_silenced: 0, min_caught: 1 },
    }).recommendation;
    expect(r.status).toBe('ok');
    expect(r.pairs_meeting).toBe(80);
    expect(r.pair).toMatchObject({ abstain_below: -3.5, weak_below: 0.5 });
    expect(r.pair!.in_domain).toEqual({ empty: c(0, 10), weak: c(4, 10), normal: c(6, 10) });
    expect(r.pair!.off_topic).toEqual({ empty: c(2, 5), weak: c(3, 5), normal: c(0, 5), caught: c(5, 5) });
  });

  it('follows the constraints when they are relaxed', () => {
    // --max-silenced 0.1 allows one in-domain case in empty: a up to −2 (−3.5 below); cautious = 4 − 1 = 3 at
    // w = 0.5 for a ∈ {−3, −2.5, −2}; most off-topic in empty: 3 at a = −2 (−6 −4.5 −2.5).
    const r1 = calibrate({
      cases: FIXTURE,
      current: CURRENT,
      constraints: { max_silenced: 0.1, min_caught: 1 },
    }).recommendation;
    expect(r1.pair).toMatchObject({
      abstain_below: -2,
      weak_below: 0.5,
      in_domain: { empty: c(1, 10), weak: c(3, 10) },
    });
    // --min-caught 0.4 (2 of 5): w = −3.5 already catches −6 and −4.5 with no in-domain case below it, so the weak
    // zone is empty (cautious 0) for a = −4 (2 off-topic in empty; a = −4.5 has 1): (−4, −3.5).
    const r2 = calibrate({
      cases: FIXTURE,
      current: CURRENT,
      constraints: { max_silenced: 0, min_caught: 0.4 },
    }).recommendation;
    expect(r2.pair).toMatchObject({
      abstain_below: -4,
      weak_below: -3.5,
      in_domain: { weak: c(0, 10) },
      off_topic: { caught: c(2, 5) },
    });
  });

  it('says which constraint cannot be met, and gives the closest pair', () => {
    // Grid −8..0: 0.2 is never caught; best is 4/5 at t = 0. Relaxed to 4: w ≥ −1 (−1.5 is below −1);
    // in-domain below −1 = 2 (−3.5, −2), within the default bound of 2 in weak; a = −3.5 by the same ties.
    const r = calibrate({ cases: FIXTURE, current: CURRENT, grid: { from: -8, to: 0, step: 0.5 } }).recommendation;
    expect(r.status).toBe('unmet');
    expect(r.unmet).toEqual([{ constraint: 'min_caught', required: 1, best: c(4, 5), at: 0 }]);
    expect(r.pair).toMatchObject({ abstain_below: -3.5, weak_below: -1 });
    // Grid −3..4, no cautious bound: −3.5 is already below −3 (1/10). Relaxed to 1: a ∈ {−3, −2.5, −2}, w = 0.5,
    // cautious 3; a = −2.
    const s = calibrate({
      cases: FIXTURE,
      current: CURRENT,
      grid: { from: -3, to: 4, step: 0.5 },
      constraints: { max_silenced: 0, min_caught: 1 },
    }).recommendation;
    expect(s.unmet).toEqual([{ constraint: 'max_silenced', required: 0, best: c(1, 10), at: -3 }]);
    expect(s.pair).toMatchObject({ abstain_below: -2, weak_below: 0.5 });
  });

  it('counts cases without a score apart, never in a share', () => {
    const cases = [
      ...FIXTURE,
      { id: 'no-candidates', kind: 'in_domain', top1: null },
      { id: 'errored', kind: 'off_topic', top1: null },
      { id: 'p1', kind: 'probe', top1: 1 },
    ];
    const cal2 = calibrate({ cases, current: CURRENT });
    expect(cal2.excluded).toEqual({
      no_score: { in_domain: ['no-candidates'], off_topic: ['errored'] },
      other_kinds: { probe: 1 },
    });
    expect(cal2.distributions.in_domain.n).toBe(10);
    expect(rowAt(cal2, 0.5)).toEqual(rowAt(cal, 0.5));
    // Without off-topic scores there is nothing to recommend.
    const none = calibrate({ cases: FIXTURE.filter((x) => x.kind === 'in_domain') });
    expect(none.recommendation).toEqual({ status: 'no_data', pair: null, unmet: [], pairs_meeting: 0 });
    expect(none.distributions.off_topic).toMatchObject({ n: 0, min: null, median: null });
  });

  it('refuses a bad grid', () => {
    expect(() => gridThresholds({ from: 1, to: 0, step: 0.5 })).toThrow(/below from/);
    expect(() => gridThresholds({ from: 0, to: 1, step: 0 })).toThrow(/step/);
    expect(() => gridThresholds({ from: 0, to: 1e6, step: 1 })).toThrow(/at most/);
  });
});

/** Checks that every tag is closed in order (a small well-formedness check without a parser). */
function assertBalanced(svg: string): void {
  const body = svg.replace(/^<\?xml[^>]*\?>\s*/, '');
  expect(body.startsWith('<svg ')).toBe(true);
  const stack: string[] = [];
  for (const m of body.matchAll(/<(\/?)([a-zA-Z][\w:-]*)(?:\s[^<>]*?)?(\/?)>/g)) {
    if (m[3]) continue;
    if (m[1]) expect(stack.pop()).toBe(m[2]);
    else stack.push(m[2]!);
  }
  expect(stack).toEqual([]);
  // No raw '<' or '&' outside markup and entities.
  expect(body.replace(/<[^<>]*>/g, '').match(/<|&(?!(amp|lt|gt|quot|apos);)/)).toBeNull();
}

suite('histogram SVG', () => {
  it('draws both series and the threshold lines, escaping text', () => {
    const cal = calibrate({ cases: FIXTURE, current: CURRENT });
    const svg = calibrationSvg({
      cases: FIXTURE,
      calibration: cal,
      node: 're<rank>&"co"',
      notes: ['NOTE: OFFLINE <stand-in>'],
    });
    assertBalanced(svg);
    expect(svg).toContain('data-series="in_domain"');
    expect(svg).toContain('data-series="off_topic"');
    // The current pair, then the recommended one (the default bound's, worked out above).
    expect([...svg.matchAll(/class="threshold" data-x="([^"]+)"/g)].map((m) => m[1])).toEqual([
      '-4',
      '0',
      '-3.5',
      '-1',
    ]);
    expect(svg).toContain('recommended');
    expect(svg).not.toContain('closest');
    expect(svg).toContain('re&lt;rank&gt;&amp;&quot;co&quot;');
    expect(svg).toContain('OFFLINE &lt;stand-in&gt;');
    expect(svg).toContain('in_domain (n = 10)');
    expect(xmlEscape(`a<b>&'"`)).toBe('a&lt;b&gt;&amp;&apos;&quot;');
  });

  it('handles empty input and refuses absurd bins', () => {
    assertBalanced(histogramSvg({ title: 't', xLabel: 'x', series: [{ label: 'a', values: [], color: '#000' }] }));
    expect(() =>
      histogramSvg({ title: 't', xLabel: 'x', series: [{ label: 'a', values: [0, 1e6], color: '#000' }] }),
    ).toThrow(/bins/);
  });
});

function bufferIO(cwd = process.cwd()): CliIO & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return {
    out: (t) => (out += t),
    err: (t) => (err += t),
    isTTY: false,
    cwd,
    env: {},
    stdout: () => out,
    stderr: () => err,
  };
}

/** A minimal valid retrieval results file holding the fixture, checked against the real schema. */
function fixtureResult(): RunResult {
  const record = (x: CalibrationCase, i: number) => ({
    id: x.id,
    question: `question ${i}`,
    kind: x.kind,
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: [],
    expected_post_ids: [],
    expected_content: [],
    status: x.top1 === null ? 'error' : 'ok',
    ...(x.top1 === null ? { error: { stage: 'retrieval', message: 'boom' } } : {}),
    retrieval:
      x.top1 === null
        ? {}
        : {
            rerank: { items: [{ post_id: i, topic_id: i, post_number: 1, score: x.top1 }], metrics: {}, latency_ms: 1 },
          },
    scores: [],
  });
  return RunResultSchema.parse({
    schema_version: 1,
    tool: { name: 'ragaudit', version: '0.1.0' },
    kind: 'retrieval',
    name: 'fixture',
    note: '',
    created_at: '2026-01-02T03:04:05.000Z',
    config_source: 'test',
    config: { rerank: { enabled: true, name: 'rerank', node: 'posts' }, zones: CURRENT },
    config_digest: 'abc',
    database: 'test',
    components: {
      reranker: {
        id: 'offline:lexical',
        offline: true,
        label: 'offline:lexical (OFFLINE STAND-IN, not a cross-encoder)',
      },
    },
    warnings: [],
    nodes: [
      { name: 'posts', kind: 'semantic', grain: 'post' },
      { name: 'rerank', kind: 'rerank', grain: 'post' },
    ],
    summary: { retrieval: summariseRetrieval([], []) },
    cases: [...FIXTURE, { id: 'errored', kind: 'in_domain', top1: null }].map(record),
  });
}

suite('ragaudit calibrate (CLI)', () => {
  it('calibrates a results file and writes json, md and svg', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-cal-'));
    writeFileSync(join(dir, 'in.json'), JSON.stringify(fixtureResult()));
    const io = bufferIO(dir);
    expect(await calibrateCommand.run(['in.json', '--out', 'out'], io)).toBe(0);
    const out = io.stdout();
    // The default bound (in weak ≤ 20 %) holds; the pair and the trade as worked out in the pure test.
    expect(out).toContain(
      'recommended: abstain_below = -3.5, weak_below = -1  (in-domain in empty ≤ 0.0 %, in-domain in weak ≤ 20.0 % met; off-topic in empty or weak ≥ 100.0 % cannot be met with them: at most 80.0 % (4/5); 10 grid pairs reach it)',
    );
    expect(out).toContain(
      'in-domain: empty (silenced) 0.0 % (0/10) · weak (cautious) 20.0 % (2/10) · normal 80.0 % (8/10)',
    );
    expect(out).toContain(
      'trade: 20.0 % (2/10) of in-domain cases answered with caution (weak) and 0.0 % (0/10) silenced (empty), for 80.0 % (4/5) of off-topic cases caught; 20.0 % (1/5) of off-topic cases reach normal (answered as if on-topic)',
    );
    // 4/10 in weak without the bound: --max-cautious 0.4 allows it.
    expect(out).toContain(
      'the weak-zone bound (≤ 20.0 %) costs 1 off-topic case(s) caught: catching 100.0 % (5/5) needs abstain_below = -3.5, weak_below = 0.5, which answers 40.0 % (4/10) of in-domain cases with caution (--max-cautious 0.4 allows it)',
    );
    expect(out).toContain('OFFLINE lexical stand-in');
    expect(out).toContain('in_domain: 1 case(s) without a top-1 score');
    const files = readdirSync(join(dir, 'out')).sort();
    expect(files.map((f) => f.replace(/^\d{8}-\d{6}-/, ''))).toEqual([
      'fixture-calibration.json',
      'fixture-calibration.md',
      'fixture-calibration.svg',
    ]);
    const json = CalibrationFileSchema.parse(JSON.parse(readFileSync(join(dir, 'out', files[0]!), 'utf8')));
    expect(json).toMatchObject({
      kind: 'calibration',
      source: 'in.json',
      node: 'rerank',
      excluded: { no_score: { in_domain: ['errored'] } },
    });
    expect(json.grid_rows).toHaveLength(25);
    expect(json.notes[0]).toMatch(/OFFLINE lexical stand-in/);
    const md = readFileSync(join(dir, 'out', files[1]!), 'utf8');
    expect(md).toContain(`![top-1 score histogram](${files[2]})`);
    expect(md.split('\n').filter((l) => /^\| -?\d/.test(l))).toHaveLength(25); // the full grid
    expect(md).toMatch(/^\| off_topic \| 5 \| -6\.00 \| -5\.70 \| -4\.50 \| -2\.50 \| -1\.50 \| 0\.20 \| 0 \|$/m);
    assertBalanced(readFileSync(join(dir, 'out', files[2]!), 'utf8'));
  });

  it('samples a long grid on the console, keeps it whole in the digest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-cal-'));
    writeFileSync(join(dir, 'in.json'), JSON.stringify(fixtureResult()));
    const io = bufferIO(dir);
    // Step 0.1: 121 thresholds, every 5th printed. Without the cautious bound w must exceed 0.2, so w = 0.3
    // (in-domain below: 4).
    expect(await calibrateCommand.run(['in.json', '--out', 'out', '--step', '0.1', '--max-cautious', '1'], io)).toBe(0);
    const out = io.stdout();
    expect(out).toContain('recommended: abstain_below = -3.5, weak_below = 0.3');
    expect(out).toContain('(121 thresholds: every 5th row');
    expect(out).toMatch(/^-3\.5 .*← recommended abstain$/m);
    expect(out).toMatch(/^0\.3 .*← recommended weak$/m);
    expect(out).toMatch(/^-4 .*← current abstain$/m);
    const printed = out.split('\n').filter((l) => /^-?\d[\d.]* /.test(l));
    expect(printed.length).toBeLessThan(45);
    const md = readFileSync(
      join(
        dir,
        'out',
        readdirSync(join(dir, 'out')).find((f) => f.endsWith('.md'))!,
      ),
      'utf8',
    );
    expect(md.split('\n').filter((l) => /^\| -?\d/.test(l))).toHaveLength(121);
  });

  it('prints the unmet constraint and exits 2 on bad input', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragaudit-cal-'));
    writeFileSync(join(dir, 'in.json'), JSON.stringify(fixtureResult()));
    const io = bufferIO(dir);
    expect(await calibrateCommand.run(['in.json', '--out', 'out', '--to', '0'], io)).toBe(0);
    expect(io.stdout()).toContain(
      'off-topic in empty or weak ≥ 100.0 % cannot be met: only 80.0 % (4/5) of off-topic cases score below the highest grid threshold 0',
    );
    expect(io.stdout()).toContain(
      'closest pair (each failing constraint relaxed to what the grid reaches): abstain_below = -3.5, weak_below = -1',
    );
    for (const args of [
      ['missing.json'],
      ['in.json', '--max-silenced', '2'],
      ['in.json', '--max-cautious', '-0.1'],
      ['in.json', '--node', 'nope'],
      ['in.json', '--step', '0'],
      ['in.json', '--config', 'x.yml'],
    ]) {
      const bad = bufferIO(dir);
      expect(await main(['calibrate', ...args], bad), args.join(' ')).toBe(2);
      expect(bad.stderr()).toMatch(/ragaudit calibrate: /);
    }
  });

  it('runs retrieval itself on the embedded demo', { timeout: 180_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'ragaudit-cal-demo-'));
    const io = bufferIO();
    expect(await calibrateCommand.run(['--out', out], io)).toBe(0);
    const n = (kind: string) => Number(io.stdout().match(new RegExp(`^${kind}\\s+(\\d+)`, 'm'))?.[1]);
    expect(n('in_domain')).toBeGreaterThan(0);
    expect(n('off_topic')).toBeGreaterThan(0);
    expect(io.stdout()).toMatch(/OFFLINE lexical stand-in/);
    expect(readdirSync(out).filter((f) => f.endsWith('-calibration.json'))).toHaveLength(1);
  });
});

/**
 * Summaries and reports split by case set, on hand-written records (no pipeline): eight records
 * mixing curated and mined, single-turn and conversation cases, with figures chosen so each set's
 * mean differs; every expected value is worked out by hand in the comments. Also: the history
 * misses named with their query mode, a run without sets keeps its summary and reports as they
 * were (the reference run's digest is rebuilt byte for byte), a history turn holding <script> is
 * escaped in the HTML case view, and compare shows both queries of a conversation case whose
 * retrieval query changed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../src/paths.js';
import { RunResultSchema, type CaseRecord, type RunResult } from '../src/model/results.js';
import type { RunSummary } from '../src/model/summary.js';
import { compareRuns } from '../src/reports/compare.js';
import { comparisonMarkdown, comparisonText } from '../src/reports/compare-format.js';
import { caseSetsText } from '../src/reports/case-sets.js';
import { retrievalMarkdown } from '../src/reports/digest.js';
import { generationMarkdown } from '../src/reports/generation-digest.js';
import { reportHtml } from '../src/reports/html.js';
import { judgeMarkdown } from '../src/reports/judge-digest.js';
import { summariseCaseSets, summariseGeneration } from '../src/summary/generation-summary.js';
import { readResults } from '../src/store/results-file.js';
import { summariseConversations, summariseRetrieval } from '../src/summary/retrieval-summary.js';

const NODES = ['hybrid', 'rerank'];
const EVIL = '<script>alert(1)</script>';

type Fig = [h1: number | null, h5: number | null, mrr: number | null];
const m = ([h1, h5, mrr]: Fig) => ({ hit_at_1: h1, hit_at_5: h5, mrr_at_10: mrr });
const at = (f: Fig) => ({ items: [], metrics: m(f), latency_ms: 1 });

interface Spec {
  id: string;
  kind?: 'in_domain' | 'off_topic';
  hybrid?: Fig;
  rerank?: Fig;
  /** Citation checks: true = valid golden, false = invalid, 'v' = valid not golden. */
  cites?: (boolean | 'v')[];
  golden?: number;
  zone?: 'empty' | 'weak' | 'normal';
  stance?: 'answered' | 'hedged' | 'abstained';
  over?: Partial<CaseRecord>;
}

function rec(s: Spec): CaseRecord {
  const cites = s.cites ?? [];
  return {
    id: s.id,
    question: `question ${s.id}?`,
    kind: s.kind ?? 'in_domain',
    difficulty: 'easy',
    tags: [],
    expected_topic_ids: s.kind === 'off_topic' ? [] : [1],
    expected_post_ids: [],
    expected_content: [],
    status: 'ok',
    retrieval: s.hybrid && s.rerank ? { hybrid: at(s.hybrid), rerank: at(s.rerank) } : {},
    ...(s.zone ? { zone: s.zone } : {}),
    answer: `answer ${s.id}`,
    citations: cites.map((c, k) => ({
      n: k + 1,
      valid: c !== false,
      ...(c === true ? { golden: true } : {}),
    })),
    scores: [
      ...(s.golden === undefined ? [] : [{ name: 'golden_citation' as const, value: s.golden }]),
      { name: 'stance_pattern' as const, value: null, details: { stance: s.stance ?? 'answered' } },
    ],
    ...s.over,
  };
}

const TURNS = (first: string): CaseRecord['turns'] => [
  { role: 'user', content: first, expected_topic_ids: [1] },
  { role: 'assistant', content: 'an earlier answer' },
];
const MINED = (ambiguous: boolean): CaseRecord['mined'] => ({
  topic_id: 1,
  category: 'boots',
  tags: [],
  method: 'template',
  ...(ambiguous ? { ambiguous: { similar_topic_ids: [2] } } : {}),
});

/*
 * id      source   conversation  needs  ambiguous  hybrid h1/h5/mrr  rerank h1/h5/mrr  query
 * cur-1   –        no                             1/1/1             1/1/1
 * cur-2   curated  no                             0/0/0             0/1/0.5
 * min-1   mined    no                   no        1/1/1             1/1/1
 * min-2   mined    yes           (true) yes       0/1/0.25          0/0/0             last
 * conv-1  –        yes           true             0/1/0.5           0/0/0             condensed
 * conv-2  –        yes           false            0/0/0             0/0/0             last
 * conv-3  –        yes (off)     true             –/–/–             –/–/–             condensed
 * err-1   mined    yes           true   no        (error: no retrieval)               –
 */
const RECORDS: CaseRecord[] = [
  rec({ id: 'cur-1', hybrid: [1, 1, 1], rerank: [1, 1, 1], cites: [true], golden: 1, zone: 'normal' }),
  rec({
    id: 'cur-2',
    hybrid: [0, 0, 0],
    rerank: [0, 1, 0.5],
    cites: ['v', false],
    golden: 0,
    zone: 'weak',
    over: { source: 'curated' },
  }),
  rec({
    id: 'min-1',
    hybrid: [1, 1, 1],
    rerank: [1, 1, 1],
    cites: [true],
    golden: 1,
    zone: 'normal',
    over: { source: 'mined', mined: MINED(false) },
  }),
  rec({
    id: 'min-2',
    hybrid: [0, 1, 0.25],
    rerank: [0, 0, 0],
    zone: 'empty',
    stance: 'abstained',
    over: {
      source: 'mined',
      mined: MINED(true),
      turns: TURNS('which boots?'),
      retrieval_query: { mode: 'last', text: 'and in winter?' },
      turn_retrieval: [{ turn: 0, query: { mode: 'last', text: 'which boots?' }, metrics: { rerank: m([1, 1, 1]) } }],
    },
  }),
  rec({
    id: 'conv-1',
    hybrid: [0, 1, 0.5],
    rerank: [0, 0, 0],
    cites: [false],
    golden: 0,
    zone: 'weak',
    stance: 'hedged',
    over: {
      turns: TURNS(`first ${EVIL}`),
      needs_history: true,
      retrieval_query: { mode: 'condensed', text: `Which cream for boots ${EVIL}?`, by: 'offline:condenser' },
      turn_retrieval: [
        {
          turn: 0,
          query: { mode: 'last', text: 'first' },
          metrics: { hybrid: m([1, 1, 1]), rerank: m([0, 1, 0.5]) },
        },
      ],
    },
  }),
  rec({
    id: 'conv-2',
    hybrid: [0, 0, 0],
    rerank: [0, 0, 0],
    cites: [true],
    golden: 1,
    zone: 'normal',
    over: { turns: TURNS('a'), needs_history: false, retrieval_query: { mode: 'last', text: 'standalone?' } },
  }),
  rec({
    id: 'conv-3',
    kind: 'off_topic',
    hybrid: [null, null, null],
    rerank: [null, null, null],
    zone: 'empty',
    stance: 'abstained',
    over: { turns: TURNS('b'), needs_history: true, retrieval_query: { mode: 'condensed', text: 'weather?' } },
  }),
  rec({
    id: 'err-1',
    over: {
      status: 'error',
      error: { stage: 'retrieval', message: 'down' },
      source: 'mined',
      mined: MINED(false),
      turns: TURNS('c'),
      needs_history: true,
    },
  }),
].map((r) => (r.status === 'error' ? (({ answer: _a, citations: _c, ...rest }) => rest)(r) : r));

/** The records as single-turn curated cases: every set field removed. */
const PLAIN: CaseRecord[] = RECORDS.map(
  ({ source: _s, mined: _m, turns: _t, needs_history: _n, retrieval_query: _q, turn_retrieval: _tr, ...rest }) => rest,
);

function runOf(cases: CaseRecord[], name = 'sets', kind: 'run' | 'retrieval' = 'run'): RunResult {
  const summary: RunSummary = { retrieval: summariseRetrieval(cases, NODES) };
  if (kind === 'run') summary.generation = summariseGeneration(cases, 'rerank');
  Object.assign(summary, summariseCaseSets(cases, NODES, 'rerank', { generation: kind === 'run' }));
  return RunResultSchema.parse({
    schema_version: 1,
    tool: { name: 'ragaudit', version: '0' },
    kind,
    name,
    note: '',
    created_at: '2026-01-01T00:00:00Z',
    config_source: 'c',
    config: {},
    config_digest: 'd',
    database: 'db',
    components: {},
    warnings: [],
    nodes: [
      { name: 'hybrid', kind: 'rrf', grain: 'post' },
      { name: 'rerank', kind: 'rerank', grain: 'post' },
    ],
    summary,
    cases,
  });
}

describe('retrieval breakdown by case set', () => {
  const s = summariseRetrieval(RECORDS, NODES);
  const fig = (set: string, node: string, key: string) => s.breakdown[set]?.[node]?.[key];

  it('adds curated/mined, single/conversation and unambiguous/ambiguous groups with hand-computed means', () => {
    // curated = cur-1, cur-2, conv-1, conv-2, conv-3 (no source = curated); conv-3 has no goldens (null).
    // hybrid Hit@5: 1, 0, 1, 0 → 2/4; Hit@1: 1, 0, 0, 0 → 0.25; MRR: 1 + 0 + 0.5 + 0 = 1.5 / 4 = 0.375.
    expect(fig('source:curated', 'hybrid', 'hit_at_5')).toEqual({ mean: 0.5, n: 4 });
    expect(fig('source:curated', 'hybrid', 'hit_at_1')).toEqual({ mean: 0.25, n: 4 });
    expect(fig('source:curated', 'hybrid', 'mrr_at_10')).toEqual({ mean: 0.375, n: 4 });
    // mined = min-1, min-2, err-1 (error: no retrieval, not counted). hybrid Hit@5 1, 1 → 1; MRR (1 + 0.25) / 2.
    expect(fig('source:mined', 'hybrid', 'hit_at_5')).toEqual({ mean: 1, n: 2 });
    expect(fig('source:mined', 'hybrid', 'mrr_at_10')).toEqual({ mean: 0.625, n: 2 });
    // rerank Hit@5: curated 1, 1, 0, 0 → 0.5 (n 4); mined 1, 0 → 0.5 (n 2).
    expect(fig('source:curated', 'rerank', 'hit_at_5')).toEqual({ mean: 0.5, n: 4 });
    expect(fig('source:mined', 'rerank', 'hit_at_5')).toEqual({ mean: 0.5, n: 2 });
    // single = cur-1, cur-2, min-1: rerank Hit@5 1, 1, 1; hybrid 1, 0, 1 → 2/3.
    expect(fig('turns:single', 'rerank', 'hit_at_5')).toEqual({ mean: 1, n: 3 });
    expect(fig('turns:single', 'hybrid', 'hit_at_5')?.mean).toBeCloseTo(2 / 3, 12);
    // conversation = min-2, conv-1, conv-2 (conv-3 null, err-1 none): rerank 0, 0, 0; hybrid MRR (0.25 + 0.5 + 0) / 3.
    expect(fig('turns:conversation', 'rerank', 'hit_at_5')).toEqual({ mean: 0, n: 3 });
    expect(fig('turns:conversation', 'hybrid', 'mrr_at_10')).toEqual({ mean: 0.25, n: 3 });
    // mined only: unambiguous = min-1 (err-1 not retrieved) → 1; ambiguous = min-2 → 0.
    expect(fig('mined:unambiguous', 'rerank', 'hit_at_5')).toEqual({ mean: 1, n: 1 });
    expect(fig('mined:ambiguous', 'rerank', 'hit_at_5')).toEqual({ mean: 0, n: 1 });
  });

  it('leaves the summary unchanged when no case is mined or a conversation', () => {
    const plain = summariseRetrieval(PLAIN, NODES);
    const { breakdown, ...rest } = s;
    const kept = Object.fromEntries(Object.entries(breakdown).filter(([g]) => /^(kind|difficulty|tag):/.test(g)));
    // The set groups are the only difference: the rest of the summary is the same object.
    expect(plain).toEqual({ ...rest, breakdown: kept });
    expect(Object.keys(plain.breakdown)).toEqual(['difficulty:easy', 'kind:in_domain', 'kind:off_topic']);
    expect(summariseCaseSets(PLAIN, NODES, 'rerank')).toEqual({});
  });

  it('adds each dimension only when it splits the run', () => {
    // Mined cases but no conversation and no ambiguous golden: only curated / mined.
    const mined = PLAIN.map((r) => (r.id === 'min-1' ? { ...r, source: 'mined' as const, mined: MINED(false) } : r));
    const groups = Object.keys(summariseRetrieval(mined, NODES).breakdown).filter(
      (g) => !/^(kind|difficulty|tag):/.test(g),
    );
    expect(groups).toEqual(['source:curated', 'source:mined']);
    // One conversation and nothing mined: only single / conversation.
    const conv = PLAIN.map((r) => (r.id === 'conv-1' ? { ...r, turns: TURNS('x') } : r));
    const g2 = Object.keys(summariseRetrieval(conv, NODES).breakdown).filter((g) => !/^(kind|difficulty|tag):/.test(g));
    expect(g2).toEqual(['turns:conversation', 'turns:single']);
  });
});

describe('conversations block', () => {
  it('names the history-needing conversations that missed at the evidence node, with their query mode', () => {
    // Conversations: min-2, conv-1, conv-2, conv-3, err-1 (5); conv-2 says needs_history false → 4 need it.
    // Query modes: last = min-2, conv-2; condensed = conv-1, conv-3; err-1 recorded none.
    // Hit@5 at rerank of those needing history and measured: min-2 0, conv-1 0 (conv-3 has no goldens,
    // err-1 never reached the node) → 0 over n = 2, both missed; conv-2 missed too but stands alone.
    // Earlier turns: min-2's turn (rerank 1/1/1) and conv-1's (hybrid 1/1/1, rerank 0/1/0.5):
    // hybrid n 1; rerank Hit@1 (1 + 0) / 2, Hit@5 1, MRR (1 + 0.5) / 2 = 0.75.
    const c = summariseConversations(RECORDS, NODES, 'rerank')!;
    expect(c).toMatchObject({
      cases: 5,
      needs_history: 4,
      query_modes: { last: 2, condensed: 2 },
      node: 'rerank',
      history_hit_at_5: { mean: 0, n: 2 },
      history_misses: [
        { id: 'min-2', mode: 'last' },
        { id: 'conv-1', mode: 'condensed' },
      ],
    });
    expect(Object.keys(c.earlier_turns!.nodes)).toEqual(['hybrid', 'rerank']);
    expect(c.earlier_turns!.turns).toBe(2);
    expect(c.earlier_turns!.nodes['hybrid']!['hit_at_5']).toEqual({ mean: 1, n: 1 });
    expect(c.earlier_turns!.nodes['rerank']!['hit_at_1']).toEqual({ mean: 0.5, n: 2 });
    expect(c.earlier_turns!.nodes['rerank']!['mrr_at_10']).toEqual({ mean: 0.75, n: 2 });
    expect(summariseConversations(PLAIN, NODES, 'rerank')).toBeUndefined();
  });
});

describe('generation by case set', () => {
  const sets = summariseCaseSets(RECORDS, NODES, 'rerank').generation_sets!;

  it('computes the generation block of each set on its cases alone', () => {
    expect(Object.keys(sets)).toEqual([
      'source:curated',
      'source:mined',
      'turns:single',
      'turns:conversation',
      'mined:unambiguous',
      'mined:ambiguous',
    ]);
    const cur = sets['source:curated']!;
    // Curated answered: cur-1, cur-2, conv-1, conv-2, conv-3 = 5. Markers: cur-1 1 valid, cur-2 2 (1 valid),
    // conv-1 1 invalid, conv-2 1 valid → 3 of 5. Golden citation (in-domain): 1, 0, 0, 1 → 0.5 (n 4).
    expect(cur.answered).toBe(5);
    expect(cur.citation_validity).toEqual({ mean: 0.6, n: 5 });
    expect(cur.golden_citation_rate).toEqual({ mean: 0.5, n: 4 });
    // Zones: in-domain normal cur-1, conv-2; weak cur-2, conv-1; off-topic conv-3 empty.
    expect(cur.zones).toEqual({
      in_domain: { empty: 0, weak: 2, normal: 2 },
      off_topic: { empty: 1, weak: 0, normal: 0 },
    });
    expect(cur.stance_pattern).toEqual({ in_domain: { answered: 3, hedged: 1 }, off_topic: { abstained: 1 } });
    // Mined answered: min-1, min-2 (err-1 is an error). Markers 1 valid of 1; golden 1 (min-2 has no score).
    const mined = sets['source:mined']!;
    expect(mined.answered).toBe(2);
    expect(mined.citation_validity).toEqual({ mean: 1, n: 1 });
    expect(mined.golden_citation_rate).toEqual({ mean: 1, n: 1 });
    // Conversations: markers conv-1 invalid, conv-2 valid → 0.5 (n 2); golden 0, 1 → 0.5 (n 2).
    expect(sets['turns:conversation']!.citation_validity).toEqual({ mean: 0.5, n: 2 });
    // Single: cur-1, cur-2, min-1 → markers 3 valid of 4; golden 1, 0, 1 → 2/3.
    expect(sets['turns:single']!.citation_validity).toEqual({ mean: 0.75, n: 4 });
    expect(sets['turns:single']!.golden_citation_rate.mean).toBeCloseTo(2 / 3, 12);
    // Each set's block is exactly summariseGeneration over its records.
    expect(sets['mined:ambiguous']).toEqual(summariseGeneration([RECORDS[3]!], 'rerank'));
  });

  it('is absent from a retrieval summary', () => {
    expect(Object.keys(summariseCaseSets(RECORDS, NODES, 'rerank', { generation: false }))).toEqual(['conversations']);
  });
});

describe('reports by case set', () => {
  const run = runOf(RECORDS);

  it('puts the sets side by side per node in the digest', () => {
    const md = retrievalMarkdown(run);
    expect(md).toContain('## Retrieval by case set');
    expect(md).toContain(
      '| node | Hit@1 curated n=4 | Hit@1 mined n=2 | Hit@5 curated n=4 | Hit@5 mined n=2 | MRR@10 curated n=4 | MRR@10 mined n=2 |',
    );
    // hybrid: Hit@1 0.25 | 0.5, Hit@5 0.5 | 1, MRR 0.375 | 0.625 (values of the breakdown test).
    expect(md).toContain('| hybrid | 0.250 | 0.500 | 0.500 | 1.000 | 0.375 | 0.625 |');
    expect(md).toContain('### single-turn | conversation cases');
    expect(md).toContain('### mined cases: unambiguous | ambiguous goldens');
    expect(md).toContain(
      '- 5 conversation cases, 4 needing their history; retrieval query: last 2, condensed 2, not recorded 1.',
    );
    expect(md).toContain('missed (Hit@5 = 0), 2: min-2 (last), conv-1 (condensed).');
    const gen = generationMarkdown(run);
    expect(gen).toContain('## Generation by case set');
    expect(gen).toContain('| golden citations (in-domain) | 50.0 % (n=4) | 100.0 % (n=1) |');
    expect(gen).toContain('| real links (valid [[n]] markers) | 75.0 % of 4 markers | 50.0 % of 2 markers |');
  });

  it('adds content MRR@10 per set when some case of the pair measures it', () => {
    // min-1 alone declares content: CMRR@10 0.5 at both nodes; no curated case measures it (n 0, shown –).
    const withContent = RECORDS.map((r) =>
      r.id === 'min-1'
        ? {
            ...r,
            retrieval: Object.fromEntries(
              Object.entries(r.retrieval).map(([n, a]) => [
                n,
                { ...a, metrics: { ...a.metrics, content_mrr_at_10: 0.5 } },
              ]),
            ),
          }
        : r,
    );
    const md = retrievalMarkdown(runOf(withContent));
    expect(md).toContain('| MRR@10 curated n=4 | MRR@10 mined n=2 | CMRR@10 curated n=0 | CMRR@10 mined n=1 |');
    expect(md).toContain('| hybrid | 0.250 | 0.500 | 0.500 | 1.000 | 0.375 | 0.625 | – | 0.500 |');
  });

  it('prints the same tables on the console', () => {
    const text = caseSetsText(run.summary);
    expect(text).toContain('retrieval, curated | mined cases');
    expect(text).toMatch(/hybrid\s+0\.250\s+0\.500\s+0\.500\s+1\.000\s+0\.375\s+0\.625/);
    expect(text).toContain('cases measured (n): Hit@1 curated 4 / mined 2');
    expect(text).toContain('generation, single-turn | conversation cases');
    expect(text).toContain('min-2 (last), conv-1 (condensed)');
    expect(caseSetsText(runOf(PLAIN).summary)).toBe('');
  });

  it('shows a conversation case its history and retrieval query in the HTML, escaped', () => {
    const html = reportHtml(run);
    expect(html).toContain('<h2>Retrieval by case set</h2>');
    expect(html).toContain('<h2>Conversations</h2>');
    expect(html).toContain('<h2>Generation by case set</h2>');
    expect(html).toContain(`first ${'&lt;script&gt;alert(1)&lt;/script&gt;'}`);
    expect(html).toContain(
      '<span class="query-text">Which cream for boots &lt;script&gt;alert(1)&lt;/script&gt;?</span>',
    );
    expect(html).toContain('Retrieval query (<b>condensed</b>, by offline:condenser)');
    expect(html).toContain(
      '<p class="meta origin">Mined from topic 1 (boots) by template · ambiguous golden: near-identical topics 2</p>',
    );
    // The only <script> elements are the page's own two (data and code).
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).not.toContain(EVIL);
  });

  it('leaves the reports of a run without sets unchanged', () => {
    const html = reportHtml(runOf(PLAIN));
    expect(html).not.toContain('case set');
    expect(html).not.toContain('<h4>History</h4>');
    expect(retrievalMarkdown(runOf(PLAIN))).not.toContain('case set');
  });

  it('rebuilds the reference run’s digest byte for byte', () => {
    const dir = join(PACKAGE_ROOT, 'results', 'reference');
    const file = readdirSync(dir).find((f) => f.endsWith('-demo.json'))!;
    const result = readResults(join(dir, file));
    const md = readFileSync(join(dir, file.replace(/\.json$/, '.md')), 'utf8');
    expect(`${retrievalMarkdown(result)}\n${generationMarkdown(result)}\n${judgeMarkdown(result)}`).toBe(md);
    // Its summary, recomputed from its cases, has no set: the breakdown and blocks are as stored.
    const nodes = result.nodes.map((n) => n.name);
    expect(summariseRetrieval(result.cases, nodes).breakdown).toEqual(result.summary.retrieval.breakdown);
    expect(summariseCaseSets(result.cases, nodes, 'rerank')).toEqual({});
  });
});

describe('compare with conversation cases', () => {
  it('shows both retrieval queries of each conversation case whose query changed', () => {
    const base = runOf(RECORDS, 'last');
    // The condensed run: conv-2 condensed with a new text and a hit at both nodes; conv-1 keeps its query.
    const condensed = RECORDS.map((r) =>
      r.id === 'conv-2'
        ? {
            ...r,
            retrieval_query: { mode: 'condensed' as const, text: 'Which boots for winter hiking?' },
            retrieval: { hybrid: at([1, 1, 1]), rerank: at([1, 1, 1]) },
          }
        : r,
    );
    const cmp = compareRuns(
      [
        { label: 'last', file: 'a.json', result: base },
        { label: 'condensed', file: 'b.json', result: runOf(condensed, 'condensed') },
      ],
      { iterations: 200 },
    );
    expect(cmp.versus[0]!.queries).toEqual([
      {
        id: 'conv-2',
        old: { mode: 'last', text: 'standalone?' },
        new: { mode: 'condensed', text: 'Which boots for winter hiking?' },
      },
    ]);
    const md = comparisonMarkdown(cmp);
    expect(md).toContain('#### Retrieval queries of conversation cases (1 differ)');
    expect(md).toContain(
      '| conv-2 | last: standalone? | condensed: Which boots for winter hiking? | hit@5 0 → 1; mrr@10 0 → 1 |',
    );
    expect(md).toContain('### By case set');
    const text = comparisonText(cmp);
    expect(text).toContain('    conv-2: last: standalone? → condensed: Which boots for winter hiking?');
    // Runs of single-turn cases carry no query list and no set rows.
    const plain = compareRuns(
      [
        { label: 'a', file: 'a.json', result: runOf(PLAIN, 'a') },
        { label: 'b', file: 'b.json', result: runOf(PLAIN, 'b') },
      ],
      { iterations: 200 },
    );
    expect(plain.versus[0]!.queries).toBeUndefined();
    expect(plain.rows[0]!.sets).toBeUndefined();
    expect(comparisonMarkdown(plain)).not.toContain('Retrieval queries');
  });
});

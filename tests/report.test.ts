/**
 * The HTML report as text: every corpus and model text is escaped (answer, question, titles,
 * claims, config), the script data survives `</script>` and reads back unchanged, the page
 * fetches nothing, its CSP allows exactly its own script, judge figures show when present, and
 * a retrieval-only file gets `–` and zones computed from the configured thresholds.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { answerHtml } from '../src/reports/html-cases.js';
import { esc, jsonScript, safeHref } from '../src/reports/html-escape.js';
import { reportHtml } from '../src/reports/html.js';
import { summariseGeneration } from '../src/summary/generation-summary.js';
import { RunResultSchema, type CaseRecord, type RunResult } from '../src/model/results.js';
import { summariseJudge } from '../src/summary/judge-summary.js';
import type { RunSummary } from '../src/model/summary.js';
import { summariseRetrieval } from '../src/summary/retrieval-summary.js';

const EVIL = '<script>alert(1)</script>';

function record(over: Partial<CaseRecord> = {}): CaseRecord {
  return {
    id: 'q1',
    question: `How? ${EVIL}`,
    kind: 'in_domain',
    difficulty: 'easy',
    tags: ['t<b>'],
    expected_topic_ids: [7],
    expected_post_ids: [],
    expected_content: [],
    status: 'ok',
    retrieval: {
      rerank: {
        items: [{ post_id: 70, topic_id: 7, post_number: 1, score: 2.5 }],
        metrics: { hit_at_5: 1, mrr_at_10: 1 },
        latency_ms: 1,
      },
    },
    zone: 'normal',
    top1_score: 2.5,
    sources: [
      {
        n: 1,
        post_id: 70,
        topic_id: 7,
        post_number: 1,
        title: `Title ${EVIL}`,
        url: 'https://forum.example/t/x/7/1',
        score: 2.5,
        excerpt: `excerpt "quoted" & <i>x</i>`,
      },
      {
        n: 2,
        post_id: 71,
        topic_id: 8,
        post_number: 1,
        title: 'Other',
        url: 'javascript:alert(2)',
        score: 0.5,
        excerpt: 'e',
      },
    ],
    answer: `Answer ${EVIL} [[1]] and [[3]].`,
    citations: [
      { n: 1, valid: true, golden: true },
      { n: 3, valid: false, reason: 'no source 3 <shown>' },
    ],
    scores: [
      { name: 'citation_validity', value: 0.5 },
      {
        name: 'faithfulness',
        value: 0.5,
        details: {
          claims: [
            { claim: `It is ${EVIL}`, label: 'supported', source: 1 },
            { claim: 'Made up', label: 'contradicted', source: null },
          ],
        },
      },
      { name: 'judge_stance', value: null, details: { stance: 'answered', asserts_unsupported_facts: false } },
      { name: 'correct_abstention', value: 1 },
    ],
    ...over,
  };
}

function runOf(cases: CaseRecord[], kind: 'run' | 'retrieval' = 'run', judge = true): RunResult {
  const summary: RunSummary = { retrieval: summariseRetrieval(cases, ['rerank']) };
  if (kind === 'run') summary.generation = summariseGeneration(cases);
  if (judge)
    summary.judge = {
      ...summariseJudge(cases, { judge: { id: 'offline:heuristic', offline: true, promptVersions: {} } }),
      faithfulness: { mean: 0.5, n: 1, judge_errors: 0 },
      correct_abstention: { mean: 1, n: 1, judge_errors: 0 },
      judge_errors: 0,
    };
  return RunResultSchema.parse({
    schema_version: 1,
    tool: { name: 'ragaudit', version: '0' },
    kind,
    name: `n${EVIL}`,
    note: `note ${EVIL}`,
    created_at: '2026-01-01T00:00:00Z',
    config_source: 'c',
    config: { zones: { abstain_below: -4, weak_below: 0 } },
    config_digest: 'd',
    database: 'db',
    components: {
      generator: { id: 'offline:x', offline: true, label: `offline ${EVIL}` },
      reranker: { id: 'tei', offline: false, label: 'real reranker' },
    },
    warnings: [`warn ${EVIL}`],
    nodes: [{ name: 'rerank', kind: 'rerank', grain: 'post' }],
    summary,
    cases,
  });
}

/** The page's text with the JSON data and the page's own script removed. */
const markup = (html: string) =>
  html.replace(/<script type="application\/json"[^]*?<\/script>/, '').replace(/<script>[^]*?<\/script>/, '');

describe('escaping', () => {
  it('one function escapes content and attributes; only http(s) links are made', () => {
    expect(esc(`<a href="x" title='y'>&`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;');
    expect([safeHref('https://a.b/?x="1"'), safeHref('javascript:alert(1)'), safeHref('data:text/html,x')]).toEqual([
      'https://a.b/?x=&quot;1&quot;',
      null,
      null,
    ]);
  });

  it('the JSON data element cannot be closed early and reads back unchanged', () => {
    const data = { q: `</script><!-- ${EVIL} & \u2028` };
    const el = jsonScript('d', data);
    expect(el.slice(el.indexOf('>') + 1, el.lastIndexOf('</script>'))).not.toMatch(/[<>&\u2028]/);
    expect(JSON.parse(el.slice(el.indexOf('>') + 1, el.lastIndexOf('</script>')))).toEqual(data);
  });

  it('no text from the corpus, the cases or the model reaches the page unescaped', () => {
    const html = reportHtml(runOf([record()]));
    expect(markup(html)).not.toContain('<script>alert');
    expect(markup(html)).not.toContain('<i>x</i>');
    expect(html.match(/<script/g)).toHaveLength(2);
    for (const where of ['How? ', 'Answer ', 'Title ', 'It is ', 'warn ', 'offline ', 'note '])
      expect(html).toContain(`${where}&lt;script&gt;alert(1)&lt;/script&gt;`);
    expect(html).not.toContain('javascript:');
    expect(html).toContain('<a href="https://forum.example/t/x/7/1" rel="noreferrer noopener">');
  });

  it('marks each [[n]] marker valid or invalid, with the text around it escaped', () => {
    const r = record();
    expect(answerHtml(r, 4)).toBe(
      'Answer &lt;script&gt;alert(1)&lt;/script&gt; <a class="cite valid" href="#c4-s1" title="valid: source 1 (golden)">[[1]]</a> and <span class="cite invalid" title="invalid: no source 3 &lt;shown&gt;">[[3]]</span>.',
    );
  });
});

describe('the page', () => {
  const html = reportHtml(
    runOf([
      record(),
      record({
        id: 'q2',
        status: 'error',
        error: { stage: 'generation', message: 'boom' },
        answer: undefined,
        citations: undefined,
        scores: [],
      }),
    ]),
  );

  it('is self-contained: no external resource, and a CSP that allows only its own script', () => {
    expect(html).not.toMatch(/\b(src|href)="(https?:)?\/\/(?!forum\.example)/);
    expect(html).not.toMatch(/@import|url\(|<link rel="stylesheet"|<script src/);
    const script = /<script>([^]*?)<\/script>/.exec(html)![1]!;
    const hash = createHash('sha256').update(script).digest('base64');
    // The policy is an attribute value: its quotes are written as entities.
    expect(html).toContain(esc(`script-src 'sha256-${hash}'`));
    expect(html).toContain(esc("default-src 'none'"));
  });

  it('gives summary figures data-metric attributes, with faithfulness when the run was judged', () => {
    const cards = [
      ...html.matchAll(
        /<div class="card" data-metric="([^"]+)" data-value="([^"]*)"><div class="label">[^<]*<\/div><div class="value">([^<]*)</g,
      ),
    ].map((m) => [m[1], m[2], m[3]]);
    expect(cards).toEqual([
      ['cases', '2', '2'],
      ['errors', '1', '1'],
      ['hit_at_5', '1', '1.000'],
      ['mrr_at_10', '1', '1.000'],
      ['content_mrr_at_10', '', '–'],
      ['citation_validity', '0.5', '50.0 %'],
      ['correct_abstention', '1', '100.0 %'],
      ['offtopic_hallucinations', '0', '0'],
      ['faithfulness', '0.5', '0.500'],
    ]);
    expect(html).toContain('<b>OFFLINE STAND-IN components</b>');
    expect(html).toContain('<li><b>generator</b>: offline &lt;script&gt;');
    expect(html).not.toContain('<b>reranker</b>');
  });

  it('shows the judge verdicts: claims labelled, stance, and an error case’s stage', () => {
    expect(html).toContain('<li class="claim contradicted"><span class="label">contradicted</span> Made up</li>');
    expect(html).toContain('{&quot;stance&quot;:&quot;answered&quot;,&quot;asserts_unsupported_facts&quot;:false}');
    expect(html).toContain('<p class="error">Error at generation: boom</p>');
  });

  it('a retrieval file: – for generation figures, no faithfulness card, zones from the rerank top-1', () => {
    const r = record({
      zone: undefined,
      top1_score: undefined,
      sources: undefined,
      answer: undefined,
      citations: undefined,
      scores: [],
    });
    r.retrieval.rerank!.items[0]!.score = -1;
    const page = reportHtml(runOf([r], 'retrieval', false));
    expect(page).toContain(
      'data-metric="citation_validity" data-value=""><div class="label">Real links</div><div class="value">–</div><div class="sub">not measured</div>',
    );
    expect(page).not.toContain('data-metric="faithfulness"');
    expect(page).toContain('<span class="zone weak">weak</span>');
    expect(page).toContain('Zones computed from the rerank top-1 score');
  });
});

describe('ragaudit report (CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ragaudit-report-'));
  const io = (sink: { out: string; err: string }) => ({
    out: (t: string) => void (sink.out += t),
    err: (t: string) => void (sink.err += t),
    isTTY: false,
    cwd: dir,
    env: {},
  });

  it('writes RUN.html beside RUN.json by default, or --out', async () => {
    writeFileSync(join(dir, 'run.json'), JSON.stringify(runOf([record()])));
    const sink = { out: '', err: '' };
    expect(await main(['report', 'run.json'], io(sink))).toBe(0);
    expect(readFileSync(join(dir, 'run.html'), 'utf8')).toMatch(/^<!DOCTYPE html>/);
    expect(await main(['report', 'run.json', '--out', 'elsewhere.html'], io(sink))).toBe(0);
    expect(existsSync(join(dir, 'elsewhere.html'))).toBe(true);
  });

  it('exits 2 on a missing or invalid file', async () => {
    const sink = { out: '', err: '' };
    expect(await main(['report', 'missing.json'], io(sink))).toBe(2);
    writeFileSync(join(dir, 'bad.json'), '{"schema_version": 1}');
    expect(await main(['report', 'bad.json'], io(sink))).toBe(2);
    expect(sink.err).toContain('bad.json: not a valid ragaudit results file');
  });
});

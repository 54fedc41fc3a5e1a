/**
 * The handlers of src/app are called without argv or a console: inputs in, results and the files
 * written out, events through the hooks. The CLI renders those events; a library caller may
 * record or drop them.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AppEvent, AppHooks } from '../src/app/hooks.js';
import { runRetrievalCommand } from '../src/app/retrieval.js';
import { evaluateTrecFiles } from '../src/app/trec.js';
import { cliHooks } from '../src/cli/common.js';
import { loadConfig } from '../src/config/load.js';
import { linkDemoCache } from './helpers/work-dir.js';

const dir = mkdtempSync(join(tmpdir(), 'ragaudit-app-'));
linkDemoCache(dir);

function recorder(): { hooks: AppHooks; events: AppEvent[]; progress: string[] } {
  const events: AppEvent[] = [];
  const progress: string[] = [];
  return {
    events,
    progress,
    hooks: {
      event: (e) => void events.push(e),
      progress: (label) => {
        progress.push(label);
        return { update: () => undefined, stop: () => undefined };
      },
    },
  };
}

describe('app handlers', () => {
  it('retrieval: returns the results and the files it wrote; says what it does only through the hooks', async () => {
    const cases = join(dir, 'two.yml');
    writeFileSync(
      cases,
      `- id: polished-binder-meaning
  question: "What does 'polished binder' mean on a Loake shoe box?"
  expected_topic_ids: [100]
- id: weather
  question: "Will it rain in Lisbon tomorrow?"
  kind: off_topic
`,
    );
    const out = join(dir, 'results');
    const loaded = loadConfig(undefined, {}, [{ path: ['output_dir'], flag: '--out', value: out }]);
    const r = recorder();
    const outcome = await runRetrievalCommand(
      { loaded, cases: [cases], cwd: dir, env: {}, report: true, trecOut: join(dir, 'trec') },
      r.hooks,
    );
    expect(outcome.result.cases.map((c) => c.id)).toEqual(['polished-binder-meaning', 'weather']);
    for (const f of [outcome.files.json, outcome.files.md, outcome.report!, ...outcome.trec!])
      expect(existsSync(f)).toBe(true);
    expect(outcome.files.json.startsWith(out)).toBe(true);
    expect(r.progress).toEqual(['retrieval']);
    // Every component is named (offline stand-ins as such), as the CLI prints them on stderr.
    const components = r.events.filter((e) => e.kind === 'component');
    expect(components.length).toBeGreaterThan(0);
    expect(components.some((e) => e.kind === 'component' && /OFFLINE STAND-IN/.test(e.label))).toBe(true);
  });

  it('trec: evaluates two files and returns the report text', async () => {
    writeFileSync(join(dir, 'q.qrels'), 'q1 0 d1 1\nq1 0 d2 0\n');
    writeFileSync(join(dir, 'r.run'), 'q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\n');
    const outcome = await evaluateTrecFiles({
      cwd: dir,
      qrels: 'q.qrels',
      run: 'r.run',
      measures: ['recip_rank'],
      complete: false,
      perQuery: false,
    });
    const text = [...outcome.report].join('');
    // One query, both results in its qrels.
    expect(outcome.coverage).toEqual({ queries: 1, unjudgedQueries: 0, judgedRetrieved: 2 });
    expect(text).toMatch(/^recip_rank\s+all\s+0\.5000$/m);
  });

  it('the CLI renders each event as the commands printed it', () => {
    const err: string[] = [];
    const out: string[] = [];
    const hooks = cliHooks({
      out: (t) => void out.push(t),
      err: (t) => void err.push(t),
      isTTY: false,
      cwd: dir,
      env: {},
    });
    hooks.event({ kind: 'component', role: 'reranker', label: 'lexical (OFFLINE STAND-IN, not a reranker)' });
    hooks.event({ kind: 'warning', text: 'careful' });
    hooks.event({ kind: 'ledger', command: 'run', file: 'x.ledger.jsonl' });
    hooks.event({ kind: 'ledger', command: 'probe', file: 'p.ledger.jsonl' });
    hooks.event({ kind: 'results-written', file: 'x.json' });
    hooks.event({ kind: 'config', index: 1, total: 2, label: 'A', source: 'configs/A.yml' });
    hooks.event({ kind: 'retrieval-written', file: 'r.json', report: 'r.html' });
    hooks.event({ kind: 'judge', label: 'heuristic' });
    expect(err.join('')).toBe(
      [
        'reranker: lexical (OFFLINE STAND-IN, not a reranker)',
        'warning: careful',
        'ledger: x.ledger.jsonl (resume with --resume x.ledger.jsonl)',
        'ledger: p.ledger.jsonl',
        '[1/2] A — configs/A.yml',
        'retrieval results: r.json',
        'judge: heuristic',
        '',
      ].join('\n'),
    );
    expect(out.join('')).toBe('report:  r.html\n');
  });
});

/**
 * The folder layering of src/, enforced: every folder imports only folders earlier in LAYERS
 * (so there is no folder cycle and no import from a later stage into an earlier one), and
 * nothing outside src/cli imports src/cli. The scan reads the relative specifiers of
 * `import … from '…'`, `export … from '…'`, `import '…'` and `import('…')`; package imports
 * (zod, pg, node:…) are not folders of src/ and are not checked here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

/** The loose files at the top of src/ other than index.ts (errors, text, paths, yaml-file). */
const SHARED = '(shared)';
/** src/index.ts, the library's public entry. */
const INDEX = '(index)';

/** Lowest first; a folder may import itself and any folder before it, never one after it. */
const LAYERS: readonly string[] = [
  'model', // the results model, the per-case record skeleton and the zone rule: imports only zod, so every stage can speak it
  SHARED, // error classes, text normalisation, package paths, YAML reading: no stage of their own
  'io', // the one artifact writer: knows files and secrets, not what they hold
  'llm', // chat clients and the HTTP/retry/preflight layer that every remote provider reuses
  'embedding', // embedders (remote over llm's HTTP layer, offline hash): needed to load a corpus and to search it
  'rerank', // cross-encoder clients over llm's HTTP layer; knows nothing of the corpus
  'providers', // one registry per kind (chat, reranker, embedder): names, help, offline or not, factories
  'config', // the config schema and loading: provider names from the registries, zone thresholds from the model
  'target', // clients of a deployed bot (HTTP endpoint, Discourse bot user, recorded answers) over llm's HTTP layer
  'cases', // question sets, probes, input-gate rules: input data, read before anything runs
  'db', // the SQL clients (node-postgres, the PGlite worker), their errors and the snapshot WAL
  'corpus', // the Discourse profile: its statements, ANN settings, site settings, detection, embedding backfill
  'demo', // forum YAML files loaded into the embedded database: the demo and its snapshot
  'retrieval', // the retrieval graph over the corpus with embedder and reranker
  'evidence', // the evidence block and prompts built from retrieved posts
  'scoring', // deterministic measurement of records: metrics, citations, stance, calibration, TREC
  'judge', // verdicts on an answer, the label file, and the judge measured against people (agreement, PPI)
  'summary', // run-level figures from records: retrieval, generation, judge, probes (pure)
  'store', // results file, ledger, case store, record check, TREC export: what a run keeps on disk
  'wiring', // the composition root: run context, providers, generator, judge, condenser and batch factories
  'runs', // orchestration only: runs cases through the stages it is handed, merges, re-judges
  'reports', // renders results (digests, HTML, compare, gate, JUnit); reads run summaries
  'app', // one handler per command: validated inputs in, results and written files out; no argv, no console
  'labelling', // a side feature on app's helpers: pool, the label server and page, goldens, agreement
  'mining', // a side feature: proposing cases from the forum (sampling, templates, rephrasing, writers)
  'doctor', // a side feature: what a database and a config would do, checked read-only
  'cli', // argv, console and exit codes: the outermost shell, imported by nothing
  INDEX, // the public library entry re-exports every stage except the CLI
];

interface ImportEdge {
  file: string;
  specifier: string;
  from: string;
  to: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The layer a file under src/ belongs to. */
function layerOf(file: string): string {
  const parts = relative(SRC, file).split(sep);
  if (parts.length > 1) return parts[0]!;
  return parts[0] === 'index.ts' ? INDEX : SHARED;
}

/** Relative import specifiers of a source text (comments removed first, so prose cannot count). */
function relativeSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;
  return [...code.matchAll(re)].map((m) => m[1]!);
}

function importEdges(): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = layerOf(file);
    for (const specifier of relativeSpecifiers(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), specifier);
      if (relative(SRC, target).startsWith('..')) continue;
      const to = layerOf(target);
      if (to !== from) edges.push({ file: relative(SRC, file).split(sep).join('/'), specifier, from, to });
    }
  }
  return edges;
}

/** Every edge that goes sideways or up in `layers` (or to a folder not in it), in words. */
function layerViolations(edges: readonly ImportEdge[], layers: readonly string[]): string[] {
  const rank = new Map(layers.map((l, i) => [l, i]));
  const out: string[] = [];
  for (const e of edges) {
    const a = rank.get(e.from);
    const b = rank.get(e.to);
    if (a === undefined || b === undefined) {
      out.push(
        `src/${e.file} imports '${e.specifier}': folder ${a === undefined ? e.from : e.to} is not in LAYERS (add it where it belongs)`,
      );
    } else if (b > a) {
      out.push(`src/${e.file} imports '${e.specifier}': ${e.from} may not import ${e.to}, a later layer`);
    }
  }
  return out;
}

/** A folder cycle as `a → b → … → a`, or null. */
function findCycle(edges: readonly ImportEdge[]): string | null {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (n: string): string | null => {
    if (state.get(n) === 'open') return [...path.slice(path.indexOf(n)), n].join(' → ');
    if (state.get(n) === 'done') return null;
    state.set(n, 'open');
    path.push(n);
    for (const m of next.get(n) ?? []) {
      const found = visit(m);
      if (found) return found;
    }
    path.pop();
    state.set(n, 'done');
    return null;
  };
  for (const n of next.keys()) {
    const found = visit(n);
    if (found) return found;
  }
  return null;
}

describe('folder layering of src/', () => {
  const edges = importEdges();

  it('the scan sees the imports (a scanner that finds nothing would pass everything)', () => {
    expect(edges.some((e) => e.from === 'runs' && e.to === 'model')).toBe(true);
    expect(edges.some((e) => e.from === INDEX)).toBe(true);
    expect(
      relativeSpecifiers(
        `import { a } from './a.js';\nexport * from "../b.js";\nimport './c.js';\nconst d = await import('../d/e.js');\n// from '../comment.js'\nimport { z } from 'zod';`,
      ),
    ).toEqual(['./a.js', '../b.js', './c.js', '../d/e.js']);
  });

  it('every folder of src/ has a place in LAYERS', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.filter((f) => !LAYERS.includes(f))).toEqual([]);
  });

  it('has no folder cycle', () => {
    expect(findCycle(edges)).toBeNull();
  });

  it('nothing outside src/cli imports src/cli', () => {
    const offending = edges
      .filter((e) => e.to === 'cli' && e.from !== 'cli')
      .map((e) => `src/${e.file} imports '${e.specifier}'`);
    expect(offending).toEqual([]);
  });

  it('every import goes down the layer order', () => {
    expect(layerViolations(edges, LAYERS)).toEqual([]);
  });

  it('a back-edge is reported with its file and import', () => {
    const backEdge: ImportEdge = { file: 'model/results.ts', specifier: '../runs/x.js', from: 'model', to: 'runs' };
    expect(layerViolations([backEdge], LAYERS)).toEqual([
      "src/model/results.ts imports '../runs/x.js': model may not import runs, a later layer",
    ]);
    expect(
      findCycle([backEdge, { file: 'runs/a.ts', specifier: '../model/results.js', from: 'runs', to: 'model' }]),
    ).toBe('model → runs → model');
  });
});

describe('the map in docs/design.md', () => {
  const page = readFileSync(resolve(SRC, '..', 'docs', 'design.md'), 'utf8');

  it('names every folder of src/ in its layout table', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.length).toBeGreaterThan(10);
    const missing = folders.filter((f) => !page.includes(`| \`src/${f}/\` |`));
    expect(missing).toEqual([]);
  });

  it('states the layer order exactly as this test enforces it', () => {
    const block = /## Layout[\s\S]*?```\n([\s\S]*?)```/.exec(page)?.[1] ?? '';
    const order = block
      .split(/→|\s+/)
      .map((w) => w.trim())
      .filter(Boolean);
    const expected = LAYERS.map((l) => (l === SHARED ? 'shared' : l === INDEX ? 'index' : l));
    expect(order).toEqual(expected);
  });
});

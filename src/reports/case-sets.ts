import type { ConversationsSummary, GenerationSummary, RetrievalSummary, RunSummary } from '../model/summary.js';
import { metric, type Metric } from '../scoring/registry.js';
import { SET_TABLE_METRICS, SET_TABLE_WHEN_MEASURED } from '../scoring/run-row.js';
import { generationRows } from './generation-rows.js';
import { fmt, markdownTable, textTable } from './format.js';
import { inertText, markdownText } from './inert.js';

/**
 * The run's figures split by case set (src/summary/retrieval-summary.ts caseSetGroups), shared by the digest,
 * the console and the HTML report: per node the key retrieval figures of the two sets of a
 * dimension side by side (curated | mined, single | conversation, unambiguous | ambiguous), the
 * generation figures of each set, and the conversations block with the history misses named.
 * Everything here returns plain cells and lines; each output makes them inert its own way.
 */

/** The two sets of each dimension, in display order. */
const PAIRS: readonly (readonly [string, string])[] = [
  ['source:curated', 'source:mined'],
  ['turns:single', 'turns:conversation'],
  ['mined:unambiguous', 'mined:ambiguous'],
];

const TITLES: Readonly<Record<string, string>> = {
  source: 'curated | mined cases',
  turns: 'single-turn | conversation cases',
  mined: 'mined cases: unambiguous | ambiguous goldens',
};

/** A set's short name: `source:mined` → `mined`. */
export const setLabel = (set: string): string => set.slice(set.indexOf(':') + 1);

/** One dimension that splits the run: its title and its two sets. */
export interface SetPair {
  title: string;
  sets: readonly [string, string];
}

/** The dimensions whose two sets are both present among `keys` (breakdown groups or generation sets). */
export function setPairs(keys: Iterable<string>): SetPair[] {
  const have = new Set(keys);
  return PAIRS.filter(([a, b]) => have.has(a) && have.has(b)).map((sets) => ({
    title: TITLES[sets[0].slice(0, sets[0].indexOf(':'))] ?? sets.join(' | '),
    sets,
  }));
}

/** The retrieval figures shown per set: SET_TABLE_METRICS, those WHEN_MEASURED only when some case measures them. */
const shownSetMetrics = (measured: (key: string) => boolean): readonly Metric[] =>
  SET_TABLE_METRICS.filter((m) => !SET_TABLE_WHEN_MEASURED.includes(m) || measured(m.key));

/** A table: header, rows and a line saying what n each set has. */
export interface SetTable {
  title: string;
  header: string[];
  rows: string[][];
  note: string;
}

/**
 * Per node, each key retrieval figure of the two sets side by side. `compact` (the console): the
 * n of each set goes to the note instead of the header.
 */
export function setRetrievalTables(summary: RetrievalSummary, opts: { compact?: boolean } = {}): SetTable[] {
  const nodes = Object.keys(summary.nodes);
  return setPairs(Object.keys(summary.breakdown)).map(({ title, sets }) => {
    const groups = sets.map((s) => summary.breakdown[s] ?? {});
    const nOf = (g: (typeof groups)[number], key: string) => Math.max(0, ...nodes.map((n) => g[n]?.[key]?.n ?? 0));
    const keys = shownSetMetrics((k) => groups.some((g) => nOf(g, k) > 0)).map((m) => m.key);
    const header = [
      'node',
      ...keys.flatMap((k) =>
        sets.map((s, i) => `${metric(k).label} ${setLabel(s)}${opts.compact ? '' : ` n=${nOf(groups[i]!, k)}`}`),
      ),
    ];
    const rows = nodes.map((node) => [
      node,
      ...keys.flatMap((k) => groups.map((g) => fmt(g[node]?.[k]?.mean, metric(k).digits ?? 3))),
    ]);
    const note = `cases measured (n): ${keys
      .map((k) => `${metric(k).label} ${sets.map((s, i) => `${setLabel(s)} ${nOf(groups[i]!, k)}`).join(' / ')}`)
      .join(' · ')}`;
    return { title, header, rows, note };
  });
}

/** The rows of the generation summary compared between sets (by label, as the digest names them). */
const SET_GENERATION_ROWS = new Set([
  'answered cases',
  'zones',
  'real links (valid [[n]] markers)',
  'answers with an invalid citation',
  'golden citations (in-domain)',
  'stance (pattern)',
  'wrong abstentions (in-domain)',
  'off-topic hallucinations (answered + cited)',
]);

/** The generation figures compared between sets: the digest's rows (src/reports/generation-rows.ts), those that compare. */
function setGenerationRows(g: GenerationSummary): [string, string][] {
  return generationRows(g).filter(([label]) => SET_GENERATION_ROWS.has(label) || label.startsWith('post hit@5 at'));
}

/** The generation figures of the two sets of each dimension side by side: figure | set A | set B. */
export function setGenerationTables(sets: Record<string, GenerationSummary>): SetTable[] {
  return setPairs(Object.keys(sets)).map(({ title, sets: pair }) => {
    const [a, b] = pair.map((s) => setGenerationRows(sets[s]!));
    // Both sets have the same rows except the evidence one, present in both or neither.
    const rows = a!.map(([label, value], i) => [label, value, b![i]?.[1] ?? '–']);
    return { title, header: ['figure', ...pair.map(setLabel)], rows, note: '' };
  });
}

/** The conversations block as sentences: counts, query modes, the history misses named. */
export function conversationLines(c: ConversationsSummary): string[] {
  const modes = Object.entries(c.query_modes).map(([m, n]) => `${m} ${n}`);
  const recorded = Object.values(c.query_modes).reduce((s, n) => s + n, 0);
  if (recorded < c.cases) modes.push(`not recorded ${c.cases - recorded}`);
  const h = c.history_hit_at_5;
  return [
    `${c.cases} conversation case${c.cases === 1 ? '' : 's'}, ${c.needs_history} needing their history; retrieval query: ${modes.join(', ')}.`,
    `Hit@5 at ${c.node} of the conversations needing their history: ${fmt(h.mean)} (n=${h.n}); ` +
      (c.history_misses.length
        ? `missed (Hit@5 = 0), ${c.history_misses.length}: ${c.history_misses.map((m) => `${m.id} (${m.mode ?? 'query not recorded'})`).join(', ')}.`
        : 'none missed.'),
  ];
}

/** Earlier turns' retrieval figures per node (null when no turn was retrieved on its own). */
export function earlierTurnsTable(c: ConversationsSummary): SetTable | null {
  const t = c.earlier_turns;
  if (!t) return null;
  const keys = shownSetMetrics((k) => Object.values(t.nodes).some((f) => (f[k]?.n ?? 0) > 0)).map((m) => m.key);
  return {
    title: `earlier turns retrieved with their own goldens (${t.turns} turns)`,
    header: ['node', ...keys.map((k) => metric(k).label)],
    rows: Object.entries(t.nodes).map(([node, f]) => [
      node,
      ...keys.map((k) => `${fmt(f[k]?.mean, metric(k).digits ?? 3)} (n=${f[k]?.n ?? 0})`),
    ]),
    note: '',
  };
}

/** Whether a summary holds anything split by set (retrieval breakdown sets, generation sets, conversations). */
export function hasCaseSets(summary: RunSummary): boolean {
  return (
    setPairs(Object.keys(summary.retrieval.breakdown)).length > 0 ||
    summary.generation_sets !== undefined ||
    summary.conversations !== undefined
  );
}

/** The retrieval part as markdown lines: per dimension a table and its n, then the conversations block. */
export function caseSetsRetrievalMarkdown(summary: RunSummary): string[] {
  const out: string[] = [];
  const tables = setRetrievalTables(summary.retrieval);
  if (tables.length) {
    out.push('', '## Retrieval by case set');
    for (const t of tables) out.push('', `### ${t.title}`, '', markdownTable(t.header, t.rows));
  }
  const c = summary.conversations;
  if (c) {
    out.push('', '## Conversations', '', ...conversationLines(c).map((l) => `- ${markdownText(l)}`));
    const t = earlierTurnsTable(c);
    if (t) out.push('', `Retrieval of the ${t.title}:`, '', markdownTable(t.header, t.rows));
  }
  return out;
}

/** The generation figures by case set as markdown lines (none when the run has no set). */
export function caseSetsGenerationMarkdown(summary: RunSummary): string[] {
  const tables = summary.generation_sets ? setGenerationTables(summary.generation_sets) : [];
  if (!tables.length) return [];
  return [
    '## Generation by case set',
    ...tables.flatMap((t) => ['', `### ${t.title}`, '', markdownTable(t.header, t.rows)]),
    '',
  ];
}

/** The figures by case set for the console ('' when the run has none): retrieval, generation, conversations. */
export function caseSetsText(summary: RunSummary): string {
  const out: string[] = [];
  for (const t of setRetrievalTables(summary.retrieval, { compact: true }))
    out.push(`retrieval, ${t.title}`, textTable(t.header, t.rows), t.note, '');
  for (const t of summary.generation_sets ? setGenerationTables(summary.generation_sets) : [])
    out.push(`generation, ${t.title}`, textTable(t.header, t.rows), '');
  const c = summary.conversations;
  if (c) {
    out.push(...conversationLines(c).map(inertText));
    const t = earlierTurnsTable(c);
    if (t) out.push(`retrieval of the ${t.title}:`, textTable(t.header, t.rows));
    out.push('');
  }
  return out.length ? `${out.join('\n')}\n` : '';
}

/** A dry run's plan as the console shows it (src/wiring/plan-pricing.ts): one row per component, then what the figures rest on. */
import type { PlanComponent, RunPlan } from '../wiring/plan-pricing.js';
import { currentConsoleWidth, textTable, wrapText } from './format.js';

const HEADER = [
  'component',
  'model',
  'requests',
  'cached',
  'to send',
  'batch',
  'input tokens',
  'output tokens',
  'cost',
];

const usd = (v: number) => `$${v.toFixed(4)}`;

function row(c: PlanComponent): string[] {
  if (c.offline) return [c.role, c.model, '0', '–', '0', '–', '–', '–', 'offline: nothing sent'];
  return [
    c.role,
    c.model,
    String(c.requests),
    String(c.cached),
    String(c.requests - c.cached),
    c.batch ? 'yes' : 'no',
    String(c.input_tokens),
    String(c.output_tokens),
    c.cost_usd === null ? 'no price configured' : usd(c.cost_usd),
  ];
}

function totalRow(p: RunPlan): string[] {
  const sum = (f: (c: PlanComponent) => number) => String(p.components.reduce((a, c) => a + f(c), 0));
  return [
    'total',
    '–',
    sum((c) => (c.offline ? 0 : c.requests)),
    sum((c) => (c.offline ? 0 : c.cached)),
    sum((c) => (c.offline ? 0 : c.requests - c.cached)),
    '–',
    sum((c) => c.input_tokens),
    sum((c) => c.output_tokens),
    p.cost_usd === null ? 'no price configured' : `${usd(p.cost_usd)}${p.unpriced.length ? ' *' : ''}`,
  ];
}

const RETRIEVAL: Record<RunPlan['retrieval'], string> = {
  local:
    'retrieval ran on the database with local components only; the prompts counted are the ones the run would send',
  'stand-ins':
    'retrieval ran on the database with offline stand-ins in place of the remote embedder/reranker (their requests ' +
    "counted, none sent): sources, zones and prompts are the stand-ins', so token counts are approximate and cache " +
    'look-ups of those prompts find nothing',
  none: 'the stored answers and sources are judged: the prompts counted are the ones the judge would be sent',
};

/** The plan's console text: what was counted, the table, and what the figures rest on; fits `width` columns. */
export function planText(p: RunPlan, width = currentConsoleWidth()): string {
  const counts =
    p.command === 'judge'
      ? `cases ${p.cases} · answers to judge again ${p.judged}`
      : `cases ${p.cases} · stopped by the input gate ${p.gated} · ended before generation ${p.stopped} · ` +
        `answered ${p.answered} · judged ${p.judged}`;
  const notes = [
    ...(p.unpriced.length && p.cost_usd !== null
      ? [`* without ${p.unpriced.join(', ')}: no price configured (prices: in its section of the config)`]
      : []),
    RETRIEVAL[p.retrieval],
    ...p.stop_reasons.map((r) => `ended before generation: ${r}`),
    ...(p.placeholder_answers
      ? [
          `${p.placeholder_answers} answers are not in the cache: the judge's prompts for them hold a placeholder ` +
            `answer of the generator's max_tokens × 4 characters (an upper bound)`,
        ]
      : []),
    'input tokens: characters / 4 of each request built (an estimate: no tokenizer is used); ' +
      "output tokens: each request's max_tokens (an upper bound)",
    'cost: the prices: of each component (USD per million tokens, per model); batch requests at the listed price ' +
      'less batch.discount',
    'cached: answered by the response cache, or by an identical request the run sends once',
    'a real run also sends one check request to each remote service before the first case',
  ];
  return [
    `dry run of ${p.command}: nothing was sent to a generator, judge, embedder or reranker`,
    counts,
    '',
    textTable(HEADER, [...p.components.map(row), totalRow(p)], width),
    '',
    ...notes.flatMap((n) => wrapText(n, width)),
    '',
  ].join('\n');
}

import type { CaseRecord } from '../model/results.js';
import { findScore } from '../model/scores.js';
import { caseStance, CASE_METRICS } from './compare-metrics.js';
import type { CaseChange, RunVsBaseline } from './compare.js';
import { showCaseValue } from './compare-format.js';
import { fmt } from './format.js';
import { answerHtml } from './html-cases.js';
import { esc, safeHref } from './html-escape.js';
import { reasonsBody, verdictCell } from './html-verdicts.js';

/**
 * One question in two runs, side by side (the compare page and `view`): each side's verdict and
 * reasons, its figures, its answer with the [[n]] markers marked as scored, and the sources the
 * model saw. A side may be missing (a case only in one run, or a gate of one run). Every text from
 * a record is escaped.
 */

/** Where a question stands between the baseline and the run, in the order the page lists them. */
export type PairRank = 'regressed' | 'failing' | 'improved' | 'changed' | 'same';
export const PAIR_RANKS: readonly PairRank[] = ['regressed', 'failing', 'improved', 'changed', 'same'];

export interface CasePair {
  id: string;
  rank: PairRank;
  base: CaseRecord | null;
  run: CaseRecord | null;
  changes: CaseChange[];
}

/** A side that failed its checks or ended in error. */
export const failing = (r: CaseRecord | null): boolean =>
  r !== null && (r.status === 'error' || r.verdict?.passed === false);

/**
 * The questions of a comparison in failures-first order: regressions, then cases failing in
 * either run (newly failing first, then failing in both, then fixed), improvements, other changes,
 * and (with `all`) the unchanged ones; case order within each group.
 */
export function casePairs(
  v: RunVsBaseline,
  base: readonly CaseRecord[],
  run: readonly CaseRecord[],
  all: boolean,
): CasePair[] {
  const byId = new Map(run.map((r) => [r.id, r]));
  const regressed = new Set(v.regressed);
  const improved = new Set(v.improved);
  const pairs = base.flatMap((b, index) => {
    const r = byId.get(b.id);
    if (!r) return [];
    const changes = v.changes.filter((c) => c.id === b.id);
    const rank: PairRank = regressed.has(b.id)
      ? 'regressed'
      : failing(r) || failing(b)
        ? 'failing'
        : improved.has(b.id)
          ? 'improved'
          : changes.length
            ? 'changed'
            : 'same';
    // Within the failing group: newly failing, failing in both, fixed.
    const sub = rank === 'failing' ? (failing(b) ? (failing(r) ? 1 : 2) : 0) : 0;
    return [{ pair: { id: b.id, rank, base: b, run: r, changes }, index, sub }];
  });
  return pairs
    .filter((p) => all || p.pair.rank !== 'same')
    .sort(
      (x, y) => PAIR_RANKS.indexOf(x.pair.rank) - PAIR_RANKS.indexOf(y.pair.rank) || x.sub - y.sub || x.index - y.index,
    )
    .map((p) => p.pair);
}

/** The failing cases of one run alone (a gate without baseline), then with `all` the others. */
export function singlePairs(run: readonly CaseRecord[], all: boolean): CasePair[] {
  const of = (r: CaseRecord): CasePair => ({
    id: r.id,
    rank: failing(r) ? 'failing' : 'same',
    base: null,
    run: r,
    changes: [],
  });
  return [...run.filter(failing), ...(all ? run.filter((r) => !failing(r)) : [])].map(of);
}

const metricLabel = (key: string) => CASE_METRICS.find((m) => m.key === key)?.label ?? key;

/** `Hit@5 1 → 0; stance answered → abstained`. */
export const changesText = (changes: readonly CaseChange[]): string =>
  changes.map((c) => `${metricLabel(c.metric)} ${showCaseValue(c.old)} → ${showCaseValue(c.new)}`).join('; ');

function factsHtml(r: CaseRecord, node: string): string {
  const hit = r.retrieval[node]?.metrics.hit_at_5;
  const cites = r.citations ? `${r.citations.filter((c) => c.valid).length}/${r.citations.length}` : '–';
  const invalid = r.citations?.some((c) => !c.valid) ?? false;
  const faith = findScore(r.scores, 'faithfulness')?.value ?? null;
  const facts = [
    `zone <b class="zone ${esc(r.zone ?? '')}">${esc(r.zone ?? '–')}</b>`,
    `top-1 ${esc(fmt(r.top1_score ?? null, 2))}`,
    `hit@5 ${esc(fmt(hit ?? null, 0))}`,
    `stance <b>${esc(caseStance(r) ?? '–')}</b>`,
    `valid cites <b class="${invalid ? 'bad' : ''}">${esc(cites)}</b>`,
    `faithfulness ${esc(fmt(faith, 2))}`,
  ];
  return `<p class="facts">${facts.join(' · ')}</p>`;
}

function sourcesHtml(r: CaseRecord, index: number): string {
  const sources = r.sources;
  if (!sources) return '';
  if (!sources.length) return '<h4>Sources</h4><p class="meta">No source was shown to the model.</p>';
  const items = sources.map((s) => {
    const href = safeHref(s.url);
    const title = href ? `<a href="${href}" rel="noreferrer noopener">${esc(s.title)}</a>` : esc(s.title);
    const golden = r.expected_topic_ids.includes(s.topic_id) || r.expected_post_ids.includes(s.post_id);
    return `<li id="c${index}-s${s.n}"${golden ? ' class="golden"' : ''}><b>[[${s.n}]]</b> ${title} <span class="ids">topic ${s.topic_id} · post ${s.post_id} · score ${esc(fmt(s.score, 2))}${golden ? ' · golden' : ''}</span><div class="excerpt">${esc(s.excerpt)}</div></li>`;
  });
  return `<h4>Sources (${sources.length})</h4><ol class="srcs">${items.join('')}</ol>`;
}

function sideHtml(r: CaseRecord | null, label: string, node: string, index: number, missing: string): string {
  if (!r)
    return `<div class="side missing"><div class="side-head"><b>${esc(label)}</b></div><p class="meta">${esc(missing)}</p></div>`;
  return `<div class="side"><div class="side-head"><b>${esc(label)}</b> ${verdictCell(r)}</div>${factsHtml(r, node)}${reasonsBody(r)}${
    r.error ? `<p class="error">Error at ${esc(r.error.stage)}: ${esc(r.error.message)}</p>` : ''
  }${r.answer !== undefined ? `<h4>Answer</h4><div class="answer">${answerHtml(r, index)}</div>` : ''}${sourcesHtml(r, index)}</div>`;
}

const RANK_TEXT: Record<PairRank, string> = {
  regressed: 'regressed',
  failing: 'failing',
  improved: 'improved',
  changed: 'changed',
  same: 'same',
};

/** One question's <details>: a summary line (what changed, both verdicts) and the two sides. */
export function casePairHtml(
  p: CasePair,
  i: number,
  /** `base` null: one run alone (a gate without baseline), one column. */
  sides: { base: string | null; run: string; baseNode: string; runNode: string },
  open: boolean,
): string {
  const q = (p.run ?? p.base)?.question ?? '';
  const single = sides.base === null;
  const verdicts = single
    ? p.run
      ? verdictCell(p.run)
      : ''
    : `${p.base ? verdictCell(p.base) : '–'} → ${p.run ? verdictCell(p.run) : '–'}`;
  const changed = p.changes.length ? `<span class="changes">${esc(changesText(p.changes))}</span>` : '';
  const body = single
    ? sideHtml(p.run, sides.run, sides.runNode, i * 2 + 1, '')
    : `${sideHtml(p.base, `${sides.base} (baseline)`, sides.baseNode, i * 2, `not in ${sides.base}`)}${sideHtml(p.run, sides.run, sides.runNode, i * 2 + 1, `not in ${sides.run}`)}`;
  return `<details class="pair ${p.rank}" id="p${i}" data-case-id="${esc(p.id)}"${open ? ' open' : ''}><summary><span class="tag ${p.rank}">${RANK_TEXT[p.rank]}</span><span class="id">${esc(p.id)}</span><span class="q" title="${esc(q)}">${esc(q)}</span><span class="vv">${verdicts}</span>${changed}</summary><p class="question">${esc(q)}</p><div class="sides${single ? ' one' : ''}">${body}</div></details>`;
}

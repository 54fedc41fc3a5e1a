import type { CaseRecord } from '../model/results.js';
import { findScore, isScore, type ScoreOf, type ScoreRecord } from '../model/scores.js';
import { citationSpans, type CitationId } from '../scoring/citations.js';
import { caseCorrectAbstention } from '../scoring/registry.js';
import { caseStance } from './compare-metrics.js';
import { fmt } from './format.js';
import { esc, safeHref } from './html-escape.js';
import { historyHtml, originHtml } from './html-sets.js';
import { reasonsBody, reasonsLine, verdictCell, verdictState } from './html-verdicts.js';

/**
 * The per-case part of the HTML report: one <details> per case whose summary line holds the
 * figures, and which opens to the question, the sources (scores, zone), the answer with its
 * [[n]] markers marked valid or invalid, and the scorers' and judge's verdicts. Every text from
 * a record is escaped with `esc`.
 */

/** What each case line shows besides the record: the node read and the zone/top-1 as computed. */
export interface CaseView {
  record: CaseRecord;
  index: number;
  node: string;
  zone: string | null;
  top1: number | null;
}

const num = (v: number | null | undefined, d = 2) => fmt(v ?? null, d);

/** Column headers of the case lines, in the order `caseLine` writes its cells. */
export const CASE_COLUMNS: readonly { label: string; sort: string }[] = [
  { label: 'verdict', sort: 'verdict' },
  { label: 'case', sort: 'id' },
  { label: 'question', sort: 'question' },
  { label: 'kind', sort: 'kind' },
  { label: 'zone', sort: 'zone' },
  { label: 'top-1', sort: 'top1' },
  { label: 'hit@5', sort: 'hit' },
  { label: 'stance', sort: 'stance' },
  { label: 'valid cites', sort: 'cites' },
  { label: 'faithfulness', sort: 'faith' },
];

/**
 * The answer with each cited id styled by its citation check (escaped text around them). Markers
 * are read with the scorer's grammar (src/scoring/citations.ts), and the checks are in the same
 * order, one per cited id, so `[[ 1 ]]` and `[[1, 2]]` are highlighted exactly as they were scored.
 */
export function answerHtml(record: CaseRecord, index: number): string {
  const answer = record.answer ?? '';
  const checks = record.citations ?? [];
  const parts: string[] = [];
  let last = 0;
  let k = 0;
  const cite = (label: string, id: CitationId) => {
    // Checks follow the ids in order; a record from another scorer falls back to the same number.
    const check = checks[k]?.n === id.n ? checks[k] : checks.find((c) => c.n === id.n);
    k++;
    if (!check) return `<span class="cite unchecked" title="not checked">${esc(label)}</span>`;
    if (check.valid)
      return `<a class="cite valid" href="#c${index}-s${id.n}" title="valid: source ${id.n}${check.golden ? ' (golden)' : ''}">${esc(label)}</a>`;
    return `<span class="cite invalid" title="${esc(`invalid${check.reason ? `: ${check.reason}` : ''}`)}">${esc(label)}</span>`;
  };
  for (const span of citationSpans(answer)) {
    parts.push(esc(answer.slice(last, span.start)));
    if (span.ids.length === 1) parts.push(cite(span.text, span.ids[0]!));
    else parts.push(`<span class="cite-group">[[${span.ids.map((id) => cite(id.written, id)).join(', ')}]]</span>`);
    last = span.end;
  }
  parts.push(esc(answer.slice(last)));
  return parts.join('');
}

function sourcesHtml(v: CaseView): string {
  const sources = v.record.sources;
  if (!sources) return '';
  const head = `<p class="meta">Zone <b>${esc(v.zone ?? '–')}</b> · top-1 score ${esc(num(v.top1))} · ${sources.length} source${sources.length === 1 ? '' : 's'} shown to the model</p>`;
  if (!sources.length) return `<h4>Sources</h4>${head}`;
  const rows = sources.map((s) => {
    const href = safeHref(s.url);
    const title = href ? `<a href="${href}" rel="noreferrer noopener">${esc(s.title)}</a>` : esc(s.title);
    const golden = v.record.expected_topic_ids.includes(s.topic_id) || v.record.expected_post_ids.includes(s.post_id);
    return `<tr id="c${v.index}-s${s.n}"${golden ? ' class="golden"' : ''}><td>[[${s.n}]]</td><td>${title}<div class="ids">topic ${s.topic_id} · post ${s.post_id} (#${s.post_number})${golden ? ' · golden' : ''}</div></td><td class="num">${esc(num(s.score))}</td><td class="excerpt">${esc(s.excerpt)}</td></tr>`;
  });
  return `<h4>Sources</h4>${head}<table class="sources"><thead><tr><th>n</th><th>thread</th><th>score</th><th>excerpt</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function claimsHtml(details: ScoreOf<'faithfulness'>['details']): string {
  const claims = details?.claims ?? [];
  if (!claims.length) return '';
  const rows = claims.map(
    (c) =>
      `<li class="claim ${c.label}"><span class="label">${esc(c.label)}</span> ${esc(c.claim)}${c.source !== null ? ` <span class="ids">source ${esc(c.source)}</span>` : ''}</li>`,
  );
  return `<ul class="claims">${rows.join('')}</ul>`;
}

function scoreRow(s: ScoreRecord): string {
  const details = isScore(s, 'faithfulness')
    ? claimsHtml(s.details)
    : !('details' in s) || s.details === undefined
      ? ''
      : `<code>${esc(JSON.stringify(s.details).slice(0, 600))}</code>`;
  return `<tr class="score-${esc(s.name)}"><td>${esc(s.name)}</td><td class="num">${esc(s.value === null ? '–' : fmt(s.value, 2))}</td><td>${esc(s.reason ?? '')}${details}</td></tr>`;
}

function verdictsHtml(record: CaseRecord): string {
  if (!record.scores.length) return '';
  return `<h4>Verdicts</h4><table class="verdicts"><thead><tr><th>scorer</th><th>value</th><th>reason / details</th></tr></thead><tbody>${record.scores.map(scoreRow).join('')}</tbody></table>`;
}

function retrievalHtml(v: CaseView): string {
  const at = v.record.retrieval[v.node];
  if (!at) return '';
  const golden = new Set(v.record.expected_topic_ids);
  const items = at.items
    .slice(0, 5)
    .map(
      (i, r) =>
        `<li${golden.has(i.topic_id) ? ' class="golden"' : ''}>#${r + 1} topic ${i.topic_id} · post ${i.post_id} · ${esc(num(i.score))}</li>`,
    );
  return `<h4>Retrieval at ${esc(v.node)}</h4><ol class="items">${items.join('')}</ol>`;
}

/** One case: a summary line of figures that opens to everything about the case. */
export function caseHtml(v: CaseView): string {
  const r = v.record;
  const m = r.retrieval[v.node]?.metrics;
  const cites = r.citations ? `${r.citations.filter((c) => c.valid).length}/${r.citations.length}` : '–';
  const invalid = r.citations?.some((c) => !c.valid) ?? false;
  const faith = findScore(r.scores, 'faithfulness')?.value;
  // No green "ok" here: a case that ran without error can still have failed its checks; the
  // verdict cell carries pass/fail and an error shows there as "error".
  const cells = [
    verdictCell(r),
    `<span class="id">${esc(r.id)}</span>`,
    `<span class="q" title="${esc(r.question)}">${esc(r.question)}</span>`,
    esc(r.kind),
    `<span class="zone ${esc(v.zone ?? '')}">${esc(v.zone ?? '–')}</span>`,
    esc(num(v.top1)),
    esc(fmt(m?.hit_at_5 ?? null, 0)),
    esc(caseStance(r) ?? '–'),
    `<span class="${invalid ? 'bad' : ''}">${esc(cites)}</span>`,
    esc(fmt(faith ?? null, 2)),
  ].map((c) => `<span class="cell">${c}</span>`);
  const abst = caseCorrectAbstention(r);
  const body = [
    reasonsBody(r),
    historyHtml(r),
    `<h4>Question</h4><p class="question">${esc(r.question)}</p>`,
    `<p class="meta">difficulty ${esc(r.difficulty)}${r.tags.length ? ` · tags ${esc(r.tags.join(', '))}` : ''} · expected topics ${esc(r.expected_topic_ids.join(', ') || '–')}${r.expected_post_ids.length ? ` · posts ${esc(r.expected_post_ids.join(', '))}` : ''}${r.expected_content.length ? ` · content ${esc(r.expected_content.join(', '))}` : ''}${abst === null ? '' : ` · correct abstention ${abst === 1 ? 'yes' : 'no'}`}</p>`,
    originHtml(r),
    r.error ? `<p class="error">Error at ${esc(r.error.stage)}: ${esc(r.error.message)}</p>` : '',
    r.gate ? `<p class="meta">Stopped by the input gate: ${esc(r.gate.intent)} (${esc(r.gate.pattern)})</p>` : '',
    sourcesHtml(v),
    r.answer !== undefined ? `<h4>Answer</h4><div class="answer">${answerHtml(r, v.index)}</div>` : '',
    verdictsHtml(r),
    retrievalHtml(v),
  ].join('');
  return `<details class="case ${verdictState(r)}" id="c${v.index}" data-index="${v.index}" data-case-id="${esc(r.id)}"><summary>${cells.join('')}${reasonsLine(r)}</summary><div class="body">${body}</div></details>`;
}

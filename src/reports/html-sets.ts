import type { CaseRecord, RunResult } from '../model/results.js';
import {
  conversationLines,
  earlierTurnsTable,
  setGenerationTables,
  setRetrievalTables,
  type SetTable,
} from './case-sets.js';
import { esc } from './html-escape.js';

/**
 * The HTML report's parts about case sets: the retrieval and generation figures of each set side
 * by side, the conversations block, and in a conversation case's view its history and the query
 * retrieval searched for. Each part is '' when the run (or the case) has nothing of the kind, so
 * the report of another run is unchanged. Every text from a record goes through `esc`.
 */

function setTableHtml(t: SetTable): string {
  return `<h3>${esc(t.title)}</h3><table class="sets"><thead><tr>${t.header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${t.rows
    .map((r) => `<tr>${r.map((c, i) => `<td${i ? ' class="num"' : ''}>${esc(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

/** The sections of figures by case set, placed after the retrieval table ('' when the run has no set). */
export function caseSetsHtml(result: RunResult): string {
  const s = result.summary;
  const retrieval = setRetrievalTables(s.retrieval);
  const generation = s.generation_sets ? setGenerationTables(s.generation_sets) : [];
  const out: string[] = [];
  if (retrieval.length)
    out.push(
      `<section class="case-sets"><h2>Retrieval by case set</h2>${retrieval.map(setTableHtml).join('')}<p class="meta">Each figure is a mean over the cases of the set it applies to (n in the header).</p></section>`,
    );
  if (generation.length)
    out.push(
      `<section class="case-sets"><h2>Generation by case set</h2>${generation.map(setTableHtml).join('')}</section>`,
    );
  const c = s.conversations;
  if (c) {
    const turns = earlierTurnsTable(c);
    out.push(
      `<section class="conversations"><h2>Conversations</h2>${conversationLines(c)
        .map((l) => `<p>${esc(l)}</p>`)
        .join('')}${turns ? setTableHtml(turns) : ''}</section>`,
    );
  }
  return out.join('\n');
}

/** A conversation case's history and the query retrieval searched for ('' for a single-turn case). */
export function historyHtml(r: CaseRecord): string {
  const turns = r.turns ?? [];
  if (!turns.length) return '';
  const items = turns.map(
    (t, i) =>
      `<li class="turn ${t.role === 'user' ? 'user' : 'assistant'}" data-turn="${i}"><b>${esc(t.role)}</b>: <span class="turn-text">${esc(t.content)}</span>${
        t.expected_topic_ids?.length
          ? ` <span class="ids">expected topics ${esc(t.expected_topic_ids.join(', '))}</span>`
          : ''
      }</li>`,
  );
  const q = r.retrieval_query;
  const query = q
    ? `<p class="meta retrieval-query">Retrieval query (<b>${esc(q.mode)}</b>${q.by ? `, by ${esc(q.by)}` : ''}${q.prompt_version ? `, prompt ${esc(q.prompt_version)}` : ''}): <span class="query-text">${esc(q.text)}</span></p>`
    : '<p class="meta retrieval-query">Retrieval query not recorded.</p>';
  const needs = r.needs_history === false ? ' (the final question stands alone)' : ' (the final question needs it)';
  return `<h4>History</h4><p class="meta">${turns.length} earlier message${turns.length === 1 ? '' : 's'}${needs}</p><ol class="history">${items.join('')}</ol>${query}`;
}

/** Where a mined case came from, and whether its golden is ambiguous ('' for a curated case). */
export function originHtml(r: CaseRecord): string {
  const m = r.mined;
  if (r.source !== 'mined' || !m) return '';
  const how = `${esc(m.method)}${m.template ? ` ${esc(m.template)}` : ''}${m.prompt_version ? `, prompt ${esc(m.prompt_version)}` : ''}`;
  const ambiguous = m.ambiguous
    ? ` · ambiguous golden: near-identical topics ${esc(m.ambiguous.similar_topic_ids.join(', '))}`
    : '';
  return `<p class="meta origin">Mined from topic ${esc(m.topic_id)} (${esc(m.category)}) by ${how}${ambiguous}</p>`;
}

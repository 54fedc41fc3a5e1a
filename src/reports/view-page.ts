import { esc } from './html-escape.js';
import { fmt, pct } from './format.js';
import { RUNS_CSS, RUNS_JS } from './view-assets.js';

/**
 * `view`'s list of the runs of a results folder: one line per run (date, name, file, kind, config
 * digest, key figures, verdict), files that are not runs or cannot be read listed with the
 * reader's message, the keys on the page, and the `label` command for the runs at the cursor or
 * picked. Built on the server with every text escaped; the script (by nonce) only moves the
 * cursor, ticks boxes and follows the links written here.
 */

interface ViewFile {
  /** The file's id in the folder (links name files by it). */
  id: string;
  /** Resolved path (the server reads it; never shown). */
  file: string;
  /** As shown (relative to where the command ran), and as one shell word. */
  path: string;
  arg: string;
}

export type ViewRun =
  | (ViewFile & {
      ok: true;
      created_at: string;
      name: string;
      kind: string;
      note: string;
      config_digest: string;
      offline: boolean;
      cases: number;
      errors: number;
      node: string | null;
      hit_at_5: number | null;
      mrr_at_10: number | null;
      citation_validity: number | null;
      faithfulness: number | null;
      verdicts: { passed: number; failed: number; pass_rate: number | null } | null;
    })
  | (ViewFile & { ok: false; other: boolean; error: string });

/** `2026-12-04 21:12` (UTC, as the results record it). */
const when = (iso: string) => iso.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, '');

function verdictHtml(r: Extract<ViewRun, { ok: true }>): string {
  const v = r.verdicts;
  if (!v) return '<span class="v none" title="this results file records no per-case verdicts">no verdicts</span>';
  const rate = `<span class="meta">${esc(pct(v.pass_rate))} pass</span>`;
  return v.failed > 0
    ? `<span class="v failed">FAIL ${v.failed}</span> ${rate}`
    : `<span class="v passed">PASS</span> ${rate}`;
}

function runRow(r: Extract<ViewRun, { ok: true }>, q: string): string {
  const href = `/run/${esc(r.id)}?${q}`;
  const cells = [
    `<td><input type="checkbox" name="run" value="${esc(r.id)}" aria-label="pick ${esc(r.name)}"></td>`,
    `<td class="num">${esc(when(r.created_at))}</td>`,
    `<td class="name"><a class="open" href="${href}">${esc(r.name)}</a>${r.offline ? ' <span class="offline" title="made with offline stand-in components">stand-ins</span>' : ''}<div class="path">${esc(r.path)}</div></td>`,
    `<td>${esc(r.kind)}</td>`,
    `<td><code>${esc(r.config_digest)}</code></td>`,
    `<td class="num">${r.cases}</td>`,
    `<td class="num${r.errors ? ' bad' : ''}">${r.errors}</td>`,
    `<td class="num">${esc(fmt(r.hit_at_5))}</td>`,
    `<td class="num">${esc(fmt(r.mrr_at_10))}</td>`,
    `<td class="num">${esc(pct(r.citation_validity))}</td>`,
    `<td class="num">${esc(fmt(r.faithfulness))}</td>`,
    `<td>${verdictHtml(r)}</td>`,
  ];
  return `<tr class="run" data-id="${esc(r.id)}" data-arg="${esc(r.arg)}">${cells.join('')}</tr>`;
}

const KEYS =
  '<kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> move · <kbd>Enter</kbd> open the run’s report · <kbd>x</kbd> or <kbd>Space</kbd> pick a run · <kbd>c</kbd> compare the two picked (the first picked is the baseline), question by question, failures first. On a comparison: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>Enter</kbd> open, <kbd>s</kbd> swap the baseline, <kbd>b</kbd> back here.';

/** The page; `nonce` authorises its one style and one script (the response's CSP names it). */
export function viewRunsPage(opts: {
  nonce: string;
  token: string;
  /** The query parameter that carries the token. */
  param: string;
  dir: string;
  runs: readonly ViewRun[];
}): string {
  const q = `${esc(opts.param)}=${esc(opts.token)}`;
  const runs = opts.runs.filter((r): r is Extract<ViewRun, { ok: true }> => r.ok);
  const bad = opts.runs.filter((r): r is Extract<ViewRun, { ok: false }> => !r.ok);
  const badRows = bad.map(
    (r) =>
      `<tr class="${r.other ? 'other' : 'unreadable'}"><td></td><td colspan="2"><div class="path">${esc(r.path)}</div></td><td colspan="9">${r.other ? 'not a run: ' : 'cannot be read: '}${esc(r.error)}</td></tr>`,
  );
  const head = [
    '',
    'date (UTC)',
    'run',
    'kind',
    'config',
    'cases',
    'errors',
    'Hit@5',
    'MRR@10',
    'real links',
    'faithfulness',
    'verdict',
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>ragaudit view — ${esc(opts.dir)}</title><style nonce="${esc(opts.nonce)}">${RUNS_CSS}</style></head>
<body><h1>ragaudit view — ${esc(opts.dir)}</h1>
<p class="meta">${runs.length} run${runs.length === 1 ? '' : 's'}${bad.length ? ` · ${bad.length} other file${bad.length === 1 ? '' : 's'}` : ''} · figures at each run’s rerank node (else its last) · verdicts as the run recorded them</p>
<p class="keys">${KEYS}</p>
<form id="pick" method="get" action="/compare"><input type="hidden" name="${esc(opts.param)}" value="${esc(opts.token)}">
<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>
${runs.map((r) => runRow(r, q)).join('\n')}
${badRows.join('\n')}
</tbody></table>
${runs.length ? '' : `<p>No results file under ${esc(opts.dir)}.</p>`}
<div id="bar"><button type="submit">Compare the two picked (c)</button><span>Label: <code id="label-cmd"></code></span><span id="status" role="status"></span></div>
</form>
<script nonce="${esc(opts.nonce)}">${RUNS_JS}</script></body></html>
`;
}

/** The list page's Content-Security-Policy: its style and script by nonce, forms to itself only. */
export function viewPageCsp(nonce: string): string {
  return `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
}

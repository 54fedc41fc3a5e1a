/**
 * The labelling page of `ragaudit label`: one self-contained HTML document (inline style and
 * script under a per-response nonce, no outside asset). It carries no corpus text: the script
 * fetches each item as JSON and writes it with textContent, so a post holding `<script>` is shown
 * as text. Keyboard first: one key per choice, Enter saves, arrows move. It starts at once under a
 * remembered or default name, explains itself on first open, and keeps the answer and the choices
 * in view (the evidence beside them scrolls on its own).
 */
import { esc } from '../reports/html-escape.js';

const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1b1b1b}
header{display:flex;gap:1rem;align-items:center;padding:.5rem 1rem;background:#20303c;color:#fff;flex-wrap:wrap}
header a{color:#cfe3ff}
header input{font:inherit;padding:.15rem .4rem;width:9rem}
main{max-width:980px;margin:0 auto;padding:1rem}
main.layout{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:0 1.2rem;max-width:1400px;padding:.3rem 1rem}
#side{position:sticky;top:.3rem;max-height:calc(100vh - 3.8rem);overflow:auto}
@media (max-width:900px){main.layout{grid-template-columns:minmax(0,1fr)}#side{position:static;max-height:none}}
.tabs button{font:inherit;padding:.25rem .7rem;border:1px solid #8aa;background:#2c4252;color:#fff;border-radius:4px}
.tabs button[aria-pressed=true]{background:#fff;color:#20303c}
#progress{font-variant-numeric:tabular-nums}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.6rem .9rem;margin:.5rem 0}
.card h3{margin:.1rem 0 .4rem;font-size:1rem}
.q{font-size:1.1rem;font-weight:600}
.src{border-left:3px solid #9ab;padding:.3rem .7rem;margin:.5rem 0;white-space:pre-wrap}
.src:target{background:#fff7d6}
.src h4{margin:0 0 .2rem;font-size:.95rem}
.answer{white-space:pre-wrap;max-height:38vh;overflow:auto}
.choices{display:grid;grid-template-columns:minmax(8rem,13rem) 1fr;gap:.4rem 1rem;align-items:center}
.opt{display:inline-block;border:1px solid #bbb;border-radius:4px;padding:.1rem .5rem;margin:.1rem .3rem .1rem 0;background:#fafafa}
.opt.on{background:#20303c;color:#fff;border-color:#20303c}
kbd{font:12px ui-monospace,monospace;border:1px solid #aaa;border-bottom-width:2px;border-radius:3px;padding:0 .25rem;background:#fff;color:#222}
textarea{width:100%;font:inherit;min-height:2.2rem;margin-top:.5rem;box-sizing:border-box}
.judge{background:#eef6ee;border-color:#9c9}
.hidden-verdict{color:#777;font-style:italic}
.meta{color:#666;font-size:.85rem}
#status{min-height:1.3rem}
.keys{color:#555;font-size:.85rem}
.intro{background:#fffbe8;border-color:#e3d38a}
.intro p{margin:.3rem 0}
.intro button{font:inherit;padding:.2rem .8rem}
`;

const SCRIPT = `
'use strict';
const token = new URLSearchParams(location.search).get('ticket') || '';
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };
// The name labels go under: the one this browser used last, else the server's default (its login name).
const state = { queue: 'answer', pos: 0, total: 0, item: null, draft: null, labeller: localStorage.getItem('ragaudit-labeller') || document.body.dataset.labeller || '' };
async function api(path, body) {
  const res = await fetch(path, { method: body ? 'POST' : 'GET', headers: { 'x-ragaudit-token': token, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}
function setStatus(t) { $('status').textContent = t; }
function progress(d) { $('progress').textContent = d.done + ' of ' + d.total + ' labelled' + (d.total ? ' · item ' + (state.pos + 1) + ' of ' + d.total : ''); }
async function start() {
  const name = $('labeller').value.trim().toLowerCase();
  if (!/^[a-z0-9][a-z0-9_.-]{0,39}$/.test(name)) { setStatus('Type your name in the Labeller box (lowercase letters, digits, . _ -).'); $('labeller').focus(); return; }
  state.labeller = name; localStorage.setItem('ragaudit-labeller', name); $('intro-name').textContent = name; setStatus('');
  const s = await api('/api/state?labeller=' + encodeURIComponent(name));
  $('tab-pool').hidden = !s.queues.pool;
  await show(s.queues[state.queue] ? s.queues[state.queue].first_open : 0);
  $('labeller').blur();
}
async function show(pos) {
  const d = await api('/api/item?labeller=' + encodeURIComponent(state.labeller) + '&queue=' + state.queue + '&pos=' + pos);
  state.pos = d.pos; state.total = d.total; state.item = d.item;
  state.draft = d.item && d.item.label ? JSON.parse(JSON.stringify(d.item.label)) : { citations: {} };
  if (!state.draft.citations) state.draft.citations = {};
  progress(d); render();
}
function opt(key, text, on) { const s = el('span', '', 'opt' + (on ? ' on' : '')); s.append(el('kbd', key), ' ' + text); return s; }
function render() {
  const box = $('item'); box.replaceChildren(); $('evidence').replaceChildren();
  const it = state.item;
  if (!it) { box.append(el('p', state.total ? 'Nothing here.' : 'This queue is empty.')); return; }
  const head = el('div', '', 'card');
  head.append(el('div', it.case_id + (it.run ? ' · run ' + it.run : ''), 'meta'), el('div', it.question, 'q'));
  if (it.stand_in) head.append(el('div', 'Answer written by ' + it.stand_in + '.', 'meta'));
  box.append(head);
  if (state.queue === 'answer') renderAnswer(box, it); else renderPool(box, it);
}
function renderAnswer(box, it) {
  const srcs = el('div', '', 'card'); srcs.append(el('h3', 'Evidence as the model saw it'));
  for (const s of it.sources) {
    const d = el('div', '', 'src'); d.id = 'src-' + s.n;
    d.append(el('h4', '[[' + s.n + ']] ' + s.title), el('div', s.excerpt));
    srcs.append(d);
  }
  if (!it.sources.length) srcs.append(el('p', '(no source was shown)', 'meta'));
  const ans = el('div', '', 'card'); ans.append(el('h3', 'Answer'));
  const a = el('div', '', 'answer');
  const parts = String(it.answer).split(/(\\[\\[\\d+\\]\\])/);
  for (const p of parts) { const m = /^\\[\\[(\\d+)\\]\\]$/.exec(p); if (m) { const l = el('a', p); l.href = '#src-' + m[1]; a.append(l); } else a.append(document.createTextNode(p)); }
  ans.append(a);
  const form = el('div', '', 'card'); const c = el('div', '', 'choices'); const d = state.draft;
  const f = el('div'); f.append(opt('y', 'yes', d.faithful === 'yes'), opt('n', 'no', d.faithful === 'no'), opt('u', 'unsure', d.faithful === 'unsure'));
  const st = el('div'); st.append(opt('a', 'answered', d.stance === 'answered'), opt('h', 'hedged', d.stance === 'hedged'), opt('x', 'abstained', d.stance === 'abstained'));
  c.append(el('strong', 'Faithful to the evidence?'), f, el('strong', 'Stance'), st);
  for (const n of it.cited) { const r = el('div'); const v = d.citations[String(n)]; r.append(opt(String(n), v ? v : '—', Boolean(v)), el('span', ' (press ' + n + ' to cycle yes → no → unsure)', 'meta')); c.append(el('strong', 'Source [[' + n + ']] supports what cites it?'), r); }
  const note = el('textarea'); note.id = 'note'; note.placeholder = 'Note (t to type, Esc to leave)'; note.value = d.note || '';
  note.addEventListener('input', () => { state.draft.note = note.value; });
  form.append(c, note);
  const j = el('div', '', 'card');
  if (it.judge) { j.className = 'card judge'; j.append(el('h3', 'The judge said'), el('div', 'faithful: ' + (it.judge.faithful || '–') + ' · stance: ' + (it.judge.stance || '–') + (Object.keys(it.judge.citations).length ? ' · sources: ' + Object.entries(it.judge.citations).map(([n, v]) => '[[' + n + ']] ' + v).join(', ') : ''))); }
  else j.append(el('div', "The judge's verdict is hidden until you have labelled this answer.", 'hidden-verdict'));
  // The answer and the choices first (left); the evidence beside them (right), scrolled on its own.
  box.append(ans, form, j); $('evidence').append(srcs);
}
function renderPool(box, it) {
  const d = el('div', '', 'card');
  d.append(el('h3', it.title || '(title not available)'), el('div', 'post ' + it.post_id + ' · found by ' + it.found_by.join(', '), 'meta'), el('div', it.text || '(text not available)', 'src'));
  const c = el('div', '', 'card'); const v = state.draft.relevance;
  c.append(el('strong', 'Does this passage help answer the question? '), opt('r', 'relevant', v === 'relevant'), opt('p', 'partly', v === 'partly'), opt('n', 'not', v === 'not'));
  box.append(d, c);
}
async function save() {
  const it = state.item; if (!it) return;
  const body = { labeller: state.labeller, queue: state.queue, key: it.key };
  if (state.queue === 'answer') { for (const k of ['faithful', 'stance', 'note']) if (state.draft[k]) body[k] = state.draft[k]; body.citations = state.draft.citations; }
  else body.relevance = state.draft.relevance;
  const r = await api('/api/label', body);
  setStatus('saved ' + it.case_id + (r.judge ? ' — the judge said faithful: ' + (r.judge.faithful || '–') + ', stance: ' + (r.judge.stance || '–') : ''));
  await show(Math.min(state.pos + 1, Math.max(0, state.total - 1)));
}
const cycle = { undefined: 'yes', yes: 'no', no: 'unsure', unsure: undefined };
function intro(show) { $('intro').hidden = !show; if (!show) localStorage.setItem('ragaudit-label-intro', 'seen'); }
document.addEventListener('keydown', async (e) => {
  const t = e.target;
  if (t && t.id === 'labeller') { if (e.key === 'Enter') { e.preventDefault(); $('labeller').blur(); } return; }
  if (t && t.id === 'note') { if (e.key === 'Escape') t.blur(); else if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); t.blur(); await save().catch((x) => setStatus(x.message)); } return; }
  if (e.key === 'Escape' && !$('intro').hidden) return intro(false);
  if (e.key === '?') return intro($('intro').hidden);
  if (!state.labeller || e.ctrlKey || e.metaKey || e.altKey) return;
  const k = e.key; const d = state.draft;
  try {
    if (k === 'ArrowRight' || k === 'j') return await show(Math.min(state.pos + 1, Math.max(0, state.total - 1)));
    if (k === 'ArrowLeft' || k === 'k') return await show(Math.max(0, state.pos - 1));
    if (k === 'q') { state.queue = state.queue === 'answer' && !$('tab-pool').hidden ? 'pool' : 'answer'; tabs(); return await start(); }
    if (!state.item) return;
    if (state.queue === 'answer') {
      if (k === 'y' || k === 'n' || k === 'u') d.faithful = { y: 'yes', n: 'no', u: 'unsure' }[k];
      else if (k === 'a' || k === 'h' || k === 'x') d.stance = { a: 'answered', h: 'hedged', x: 'abstained' }[k];
      else if (/^[1-9]$/.test(k) && state.item.cited.includes(Number(k))) { const v = cycle[d.citations[k]]; if (v) d.citations[k] = v; else delete d.citations[k]; }
      else if (k === 't') { e.preventDefault(); $('note').focus(); return; }
      else if (k === 'Enter') return await save();
      else return;
      render();
    } else if (k === 'r' || k === 'p' || k === 'n') { d.relevance = { r: 'relevant', p: 'partly', n: 'not' }[k]; render(); await save(); }
  } catch (x) { setStatus(x.message); }
});
function tabs() { $('tab-answer').setAttribute('aria-pressed', String(state.queue === 'answer')); $('tab-pool').setAttribute('aria-pressed', String(state.queue === 'pool')); }
for (const q of ['answer', 'pool']) $('tab-' + q).addEventListener('click', () => { state.queue = q; tabs(); start().catch((x) => setStatus(x.message)); });
// A name typed in the box takes effect when the box is left (Enter, Tab or a click elsewhere).
$('labeller').addEventListener('change', () => start().catch((x) => setStatus(x.message)));
$('intro-close').addEventListener('click', () => intro(false));
$('labeller').value = state.labeller;
$('intro-name').textContent = state.labeller || '(no name yet: type yours in the Labeller box)';
$('agreement').href = '/agreement?ticket=' + encodeURIComponent(token);
tabs();
intro(localStorage.getItem('ragaudit-label-intro') !== 'seen');
if (state.labeller) start().catch((x) => setStatus(x.message)); else $('labeller').focus();
`;

const KEYS =
  'Answers: <kbd>y</kbd>/<kbd>n</kbd>/<kbd>u</kbd> faithful · <kbd>a</kbd>/<kbd>h</kbd>/<kbd>x</kbd> answered/hedged/abstained · <kbd>1</kbd>–<kbd>9</kbd> cited source · <kbd>t</kbd> note · <kbd>Enter</kbd> save and next. Pool: <kbd>r</kbd>/<kbd>p</kbd>/<kbd>n</kbd> relevant/partly/not (saves). <kbd>←</kbd>/<kbd>→</kbd> previous/next · <kbd>q</kbd> switch queue.';

/** What the page says on first open (dismissed once read; `?` shows it again). */
const INTRO = `<div id="intro" class="card intro" hidden><h3>What you are labelling</h3>
<p>Each item is an answer the chatbot gave to a question, shown with the evidence it was given
(the numbered sources; its <kbd>[[n]]</kbd> citations link to them). Say whether the answer is
<strong>faithful</strong> to that evidence (every claim supported), its <strong>stance</strong>
(answered, hedged or abstained) and whether each cited source supports what cites it. The judge's
verdict stays hidden until you have labelled the answer. The Retrieval pool (<kbd>q</kbd>) asks
whether a retrieved passage helps answer the question.</p>
<p>You label as <strong id="intro-name"></strong>: someone else types their name in the Labeller
box. Each label is saved at once on this machine; closing the page loses nothing.</p>
<p class="keys">${KEYS}</p>
<p><button id="intro-close" type="button">Start labelling</button> <span class="meta"><kbd>Esc</kbd> closes this · <kbd>?</kbd> shows it again</span></p></div>`;

/**
 * The page; `nonce` authorises its one style and one script (the response's CSP names it).
 * `labeller`: the name it labels under until given another ('' asks for one).
 */
export function labelPage(opts: { nonce: string; title: string; labeller?: string }): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(opts.title)}</title><style nonce="${esc(opts.nonce)}">${STYLE}</style></head>
<body data-labeller="${esc(opts.labeller ?? '')}"><header><strong>ragaudit label</strong>
<label>Labeller <input id="labeller" autocomplete="off" spellcheck="false"></label>
<span class="tabs"><button id="tab-answer" type="button">Answers</button> <button id="tab-pool" type="button">Retrieval pool</button></span>
<span id="progress"></span><a id="agreement" href="#">Agreement</a></header>
<main class="layout"><section id="work"><div id="status" role="status"></div><div id="item"></div><p class="keys">${KEYS}</p></section>
<aside id="side">${INTRO}<div id="evidence"></div></aside></main>
<script nonce="${esc(opts.nonce)}">${SCRIPT}</script></body></html>
`;
}

/** The Content-Security-Policy of the page: nothing from outside, the one style and script by nonce. */
export function labelPageCsp(nonce: string): string {
  return `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; connect-src 'self'; img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`;
}

/** The agreement page: the escaped agreement section of each labelled run. */
export function agreementPage(opts: { nonce: string; sections: { title: string; html: string }[] }): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ragaudit label — agreement</title>
<style nonce="${esc(opts.nonce)}">${STYLE} table{border-collapse:collapse;background:#fff} td,th{border:1px solid #ccc;padding:.25rem .5rem;font-size:.9rem;text-align:left;vertical-align:top}</style></head>
<body><header><strong>ragaudit label — agreement</strong></header><main>${opts.sections
    .map((s) => `<h2>${esc(s.title)}</h2>${s.html}`)
    .join('')}</main></body></html>
`;
}

/**
 * Style sheets and scripts of the compare page and of `view`'s list of runs (system fonts,
 * nothing fetched). The scripts only move a cursor, open and close, tick boxes, set textContent
 * and follow links the server wrote: no HTML is built from data.
 */

/** Added to the report's sheet (src/reports/html-assets.ts) on the compare page. */
export const COMPARE_CSS = `
.decision { border: 2px solid var(--line); border-radius: 8px; padding: 10px 14px; margin: 12px 0; }
.decision.passed { border-color: var(--ok); background: #e6f4ea; } .decision.failed { border-color: var(--bad); background: #fdecea; }
.decision .big { font-size: 22px; font-weight: 700; margin-right: 10px; }
.decision.none .big { font-size: 16px; } .decision.passed .big { color: var(--ok); } .decision.failed .big { color: var(--bad); }
.decision ul { margin: 6px 0 0; padding-left: 20px; } .decision li { color: var(--bad); }
table.rules tr.failed td { background: #fff5f5; } table.rules tr.failed td:first-child { border-left: 4px solid var(--bad); }
table.rules td.res { font-weight: 700; } table.rules code { white-space: nowrap; word-break: normal; } table.rules tr.failed td.res { color: var(--bad); } table.rules tr.passed td.res { color: var(--ok); }
table.diff td { word-break: break-word; } table.diff td.path { font-family: ui-monospace, monospace; font-size: 12px; }
nav.view { display: flex; gap: 14px; align-items: baseline; flex-wrap: wrap; font-size: 13px; padding: 6px 0; border-bottom: 1px solid var(--line); }
nav.view code { font-size: 11px; }
.keys { color: var(--muted); font-size: 12px; }
kbd { font: 11px ui-monospace, monospace; border: 1px solid #aaa; border-bottom-width: 2px; border-radius: 3px; padding: 0 4px; background: #fff; color: #222; }
h3.group { font-size: 14px; margin: 18px 0 6px; }
details.pair { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; background: #fff; scroll-margin-top: 8px; }
details.pair > summary { display: grid; grid-template-columns: 84px minmax(120px, 1.2fr) minmax(200px, 3fr) max-content; gap: 8px; align-items: center; padding: 5px 10px; cursor: pointer; list-style: none; }
details.pair > summary::-webkit-details-marker { display: none; }
details.pair > summary .id, details.pair > summary .q { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
details.pair > summary .id { font-weight: 600; }
details.pair > summary .changes { grid-column: 2 / -1; font-size: 12px; color: var(--muted); }
details.pair.regressed > summary .changes { color: var(--bad); }
details.pair.current { outline: 3px solid #4c8dd6; outline-offset: 1px; }
details.pair[open] > summary { background: #eef3f8; border-bottom: 1px solid var(--line); }
details.pair.regressed { border-left: 5px solid var(--bad); } details.pair.failing { border-left: 5px solid var(--warn); }
details.pair.improved { border-left: 5px solid var(--ok); }
.tag { font-size: 11px; font-weight: 700; text-transform: uppercase; letter-spacing: .03em; }
.tag.regressed { color: var(--bad); } .tag.failing { color: var(--warn); } .tag.improved { color: var(--ok); } .tag.changed, .tag.same { color: var(--muted); }
details.pair .question { padding: 6px 12px 0; font-weight: 600; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; padding: 4px 12px 12px; }
.sides.one { grid-template-columns: 1fr; }
.side { min-width: 0; border-top: 3px solid var(--line); padding-top: 4px; }
.side-head { display: flex; gap: 8px; align-items: center; font-size: 14px; }
.side .facts { font-size: 12px; color: var(--muted); margin: 4px 0; } .side .facts b { color: var(--fg); }
.side .answer { max-height: 360px; overflow: auto; }
ol.srcs { padding-left: 0; list-style: none; margin: 4px 0; font-size: 13px; }
ol.srcs li { border-left: 3px solid var(--line); padding: 2px 8px; margin: 4px 0; } ol.srcs li.golden { border-left-color: var(--ok); }
ol.srcs li:target { background: #fff7d6; }
ol.srcs .excerpt { color: var(--muted); font-size: 12px; display: -webkit-box; -webkit-line-clamp: 3; -webkit-box-orient: vertical; overflow: hidden; }
`;

/** Keyboard moves over the compared questions: j/k or arrows move, Enter or o opens, b goes back, s swaps. */
export const COMPARE_JS = `
(function () {
  'use strict';
  var pairs = Array.prototype.slice.call(document.querySelectorAll('details.pair'));
  var at = -1;
  function go(i) {
    if (!pairs.length) return;
    at = Math.max(0, Math.min(pairs.length - 1, i));
    pairs.forEach(function (p, k) { p.classList.toggle('current', k === at); });
    var s = pairs[at].querySelector('summary');
    s.focus({ preventScroll: true });
    // The question to the top: an open one shows both sides below it.
    pairs[at].scrollIntoView({ block: 'start' });
  }
  function follow(id) { var a = document.getElementById(id); if (a) location.href = a.href; }
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var k = e.key;
    if (k === 'j' || k === 'ArrowDown') go(at + 1);
    else if (k === 'k' || k === 'ArrowUp') go(at - 1);
    else if ((k === 'Enter' || k === 'o') && at >= 0) {
      // Enter on a focused summary opens it natively; anything else toggles here.
      if (k === 'Enter' && document.activeElement === pairs[at].querySelector('summary')) return;
      pairs[at].open = !pairs[at].open;
    } else if (k === 'b') follow('back');
    else if (k === 's') follow('swap');
    else return;
    e.preventDefault();
  });
  pairs.forEach(function (p, k) { p.addEventListener('click', function () { at = k; pairs.forEach(function (q, j) { q.classList.toggle('current', j === at); }); }); });
})();
`;

/** `view`'s list of runs. */
export const RUNS_CSS = `
body{margin:0 auto;max-width:1340px;padding:12px 20px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#1d232a}
h1{font-size:20px;margin:6px 0 2px}.meta{color:#5f6b76;font-size:12px}
.keys{color:#3b4650;font-size:13px;margin:8px 0;padding:6px 10px;background:#f4f6f8;border-radius:6px}
kbd{font:11px ui-monospace,monospace;border:1px solid #aaa;border-bottom-width:2px;border-radius:3px;padding:0 4px;background:#fff;color:#222}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #d9dee3;padding:5px 7px;text-align:left;vertical-align:top}
th{background:#f4f6f8;font-size:12px}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.run{cursor:pointer}tr.run:hover{background:#f8fafb}tr.current{outline:3px solid #4c8dd6;outline-offset:-3px;background:#eef3f8}
tr.picked td{background:#fff8e1}
.name a{font-weight:600;color:#1d4f91;text-decoration:none}.path{color:#5f6b76;font-size:12px;word-break:break-all}
.v{font-weight:700;font-size:12px;padding:1px 6px;border-radius:3px;white-space:nowrap}.v.failed{color:#fff;background:#c62828}
.v.passed{color:#1a7f37;background:#e6f4ea}.v.none{color:#5f6b76}.v.error{color:#fff;background:#9a6700}
tr.unreadable td{color:#c62828;background:#fff5f5}tr.other td{color:#5f6b76;font-size:12px}.bad{color:#c62828;font-weight:600}code{font-size:12px;word-break:break-all}
.offline{font-size:11px;color:#9a6700;font-weight:600}
#bar{position:sticky;bottom:0;background:#fff;border-top:1px solid #d9dee3;padding:8px 0;display:flex;gap:14px;align-items:center;flex-wrap:wrap}
#status{color:#9a6700;font-weight:600}button{font:inherit;padding:3px 10px}
`;

/** j/k or arrows move, x or Space picks, Enter opens, c compares the two picked. */
export const RUNS_JS = `
(function () {
  'use strict';
  var rows = Array.prototype.slice.call(document.querySelectorAll('tr.run'));
  var form = document.getElementById('pick');
  var status = document.getElementById('status');
  var label = document.getElementById('label-cmd');
  var at = rows.length ? 0 : -1;
  var order = [];
  function boxes() { return rows.map(function (r) { return r.querySelector('input[type=checkbox]'); }); }
  function picked() { return order.filter(function (r) { return r.querySelector('input').checked; }); }
  function show() {
    rows.forEach(function (r, k) { r.classList.toggle('current', k === at); r.classList.toggle('picked', r.querySelector('input').checked); });
    var p = picked();
    var of = p.length ? p : at >= 0 ? [rows[at]] : [];
    label.textContent = of.length ? 'ragaudit label ' + of.map(function (r) { return r.getAttribute('data-arg'); }).join(' ') : '';
  }
  function go(i) { if (!rows.length) return; at = Math.max(0, Math.min(rows.length - 1, i)); rows[at].scrollIntoView({ block: 'nearest' }); show(); }
  function toggle(r) {
    var b = r.querySelector('input'); b.checked = !b.checked; changed(r);
  }
  function changed(r) {
    order = order.filter(function (x) { return x !== r; });
    if (r.querySelector('input').checked) order.push(r);
    status.textContent = ''; show();
  }
  function compare() {
    var p = picked();
    if (p.length !== 2) { status.textContent = 'Pick two runs first (x or Space on each), then press c. Picked: ' + p.length + '.'; return; }
    var q = new URLSearchParams();
    var t = form.querySelector('input[type=hidden]');
    q.set(t.name, t.value);
    p.forEach(function (r) { q.append('run', r.getAttribute('data-id')); });
    // The first picked is the baseline.
    q.set('baseline', p[0].getAttribute('data-id'));
    location.href = form.getAttribute('action') + '?' + q.toString();
  }
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var k = e.key;
    // Space on a focused box ticks it natively (its change event follows).
    if (k === ' ' && e.target && e.target.type === 'checkbox') return;
    if (k === 'j' || k === 'ArrowDown') go(at + 1);
    else if (k === 'k' || k === 'ArrowUp') go(at - 1);
    else if ((k === 'x' || k === ' ') && at >= 0) toggle(rows[at]);
    else if (k === 'Enter' && at >= 0) location.href = rows[at].querySelector('a.open').href;
    else if (k === 'c') compare();
    else return;
    e.preventDefault();
  });
  boxes().forEach(function (b, k) {
    b.addEventListener('click', function (e) { e.stopPropagation(); });
    b.addEventListener('change', function () { at = k; changed(rows[k]); });
  });
  rows.forEach(function (r, k) { r.addEventListener('click', function () { at = k; show(); }); });
  form.addEventListener('submit', function (e) { e.preventDefault(); compare(); });
  show();
})();
`;

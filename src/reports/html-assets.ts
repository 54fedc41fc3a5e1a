/** The HTML report's inline style sheet and script (system fonts only: nothing is fetched). */

export const REPORT_CSS = `
:root { --fg: #1d232a; --muted: #5f6b76; --line: #d9dee3; --bg: #ffffff; --soft: #f4f6f8; --ok: #1a7f37; --bad: #c62828; --warn: #9a6700; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1280px; padding: 16px 24px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; } h4 { margin: 14px 0 4px; font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.meta, .sub, .ids { color: var(--muted); font-size: 12px; }
.note { margin: 4px 0; font-style: italic; }
.banner { border: 2px solid var(--warn); background: #fff8e1; padding: 10px 14px; border-radius: 6px; margin: 12px 0; }
.banner ul { margin: 6px 0 0; padding-left: 20px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; margin: 16px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; background: var(--soft); }
.card .label { font-size: 12px; color: var(--muted); } .card .value { font-size: 22px; font-weight: 600; margin: 2px 0; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; width: 100%; margin: 6px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; font-size: 12px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.histogram svg { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
.controls { margin: 6px 0 10px; display: flex; gap: 12px; align-items: center; flex-wrap: wrap; }
.case-head, details.case > summary { display: grid; grid-template-columns: 0.55fr minmax(120px, 1.5fr) minmax(180px, 3fr) 0.8fr 0.6fr 0.5fr 0.45fr 0.7fr 0.6fr 0.65fr; gap: 6px; padding: 5px 8px; align-items: center; }
.case-head button.sort { font: inherit; font-weight: 600; text-align: left; background: none; border: 0; padding: 0; cursor: pointer; color: inherit; }
.case-head button.sort[data-dir="asc"]::after { content: " \\25B4"; } .case-head button.sort[data-dir="desc"]::after { content: " \\25BE"; }
details.case > summary .reasons { grid-column: 1 / -1; color: var(--bad); font-size: 12px; padding-left: 2px; white-space: normal; }
details.case.failed { border-left: 4px solid var(--bad); background: #fff5f5; }
details.case.error { border-left: 4px solid var(--warn); }
.verdict { font-weight: 700; font-size: 12px; padding: 1px 6px; border-radius: 3px; }
.verdict.failed { color: #fff; background: var(--bad); } .verdict.passed { color: var(--ok); background: #e6f4ea; }
.verdict.error { color: #fff; background: var(--warn); } .verdict.none { color: var(--muted); }
.verdict-banner { border: 2px solid var(--line); border-radius: 8px; padding: 10px 14px; margin: 12px 0; }
.verdict-banner.failed { border-color: var(--bad); background: #fdecea; } .verdict-banner.passed { border-color: var(--ok); background: #e6f4ea; }
.verdict-banner .big { font-size: 20px; font-weight: 700; margin-right: 8px; } .verdict-banner.failed .big { color: var(--bad); } .verdict-banner.passed .big { color: var(--ok); }
.verdict-banner .check { display: inline-block; margin-right: 10px; }
ul.failures li { color: var(--bad); }
section.probe-attack.failed h3 { color: var(--bad); } table.probes { width: 100%; } table.probes td.q { max-width: 420px; }
table.probes tr.failed { background: #fff5f5; } table.probes tr.failed td:first-child { border-left: 4px solid var(--bad); }
table.probes td.check.failed { color: var(--bad); font-weight: 700; } table.probes td.check.ok { color: var(--ok); }
table.probes td.reasons { color: var(--bad); font-size: 12px; }
.card.meets { border-color: var(--ok); background: #e6f4ea; } .card.misses { border: 2px solid var(--bad); background: #fdecea; } .card.misses .value { color: var(--bad); }
.card.unmeasured { border-color: var(--warn); }
.card .limit { font-size: 12px; font-weight: 600; } .card.misses .limit { color: var(--bad); }
.meter { height: 4px; background: var(--line); border-radius: 2px; margin: 2px 0 4px; } .meter span { display: block; height: 4px; background: var(--muted); border-radius: 2px; }
.case-head { font-weight: 600; font-size: 12px; background: var(--soft); border-bottom: 1px solid var(--line); }
details.case { border-bottom: 1px solid var(--line); }
details.case > summary { cursor: pointer; list-style: none; }
details.case > summary::-webkit-details-marker { display: none; }
details.case > summary .id::before { content: "\\25B8  "; color: var(--muted); }
details.case[open] > summary .id::before { content: "\\25BE  "; }
details.case[open] > summary { background: #eef3f8; }
details.case > summary:hover { background: var(--soft); }
.cell { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-variant-numeric: tabular-nums; }
.body { padding: 4px 14px 14px 26px; }
.question { font-size: 15px; margin: 0; }
.answer { white-space: pre-wrap; background: var(--soft); border-left: 3px solid var(--line); padding: 8px 12px; border-radius: 4px; }
.cite { font-weight: 600; padding: 0 2px; border-radius: 3px; text-decoration: none; }
.cite.valid { color: var(--ok); background: #e6f4ea; }
.cite.invalid { color: #fff; background: var(--bad); text-decoration: line-through; }
.cite.unchecked { color: var(--warn); background: #fff8e1; }
.bad { color: var(--bad); font-weight: 600; }
.zone.empty { color: var(--bad); } .zone.weak { color: var(--warn); } .zone.normal { color: var(--ok); }
tr.golden td:first-child, ol.items li.golden { font-weight: 600; color: var(--ok); }
.excerpt { max-width: 640px; }
.error { color: var(--bad); }
.claims { margin: 4px 0; padding-left: 18px; }
.claim .label { font-size: 11px; font-weight: 600; padding: 0 4px; border-radius: 3px; background: var(--soft); }
.claim.supported .label { color: var(--ok); } .claim.unsupported .label { color: var(--warn); } .claim.contradicted .label { color: #fff; background: var(--bad); }
code { font-size: 12px; word-break: break-all; }
`;

/**
 * Filter, sort and open/close controls. It reads the embedded JSON data and only sets properties
 * (hidden, open, textContent): no HTML is ever built from data.
 */
export const REPORT_JS = `
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('ragaudit-data').textContent);
  var filter = document.getElementById('filter');
  var shown = document.getElementById('shown');
  var list = document.getElementById('cases');
  var items = Array.prototype.slice.call(document.querySelectorAll('details.case'));
  var selects = { kind: 'kind', verdict: 'verdict-filter', zone: 'zone-filter', stance: 'stance-filter', check: 'check-filter' };
  function val(id) { var el = document.getElementById(id); return el ? el.value : ''; }
  function apply() {
    var q = filter.value.trim().toLowerCase();
    var want = {};
    Object.keys(selects).forEach(function (k) { want[k] = val(selects[k]); });
    var n = 0;
    items.forEach(function (el) {
      var c = data.cases[Number(el.getAttribute('data-index'))];
      var text = [c.id, c.kind, c.status, c.zone || '', c.question, c.verdict, c.checks.join(' '), c.reasons].join(' ').toLowerCase();
      var visible = (!want.kind || c.kind === want.kind) && (!want.verdict || c.verdict === want.verdict) &&
        (!want.zone || (c.zone || 'none') === want.zone) && (!want.stance || (c.stance || 'none') === want.stance) &&
        (!want.check || c.checks.indexOf(want.check) >= 0) && (!q || text.indexOf(q) >= 0);
      el.hidden = !visible;
      if (visible) n++;
    });
    shown.textContent = n + ' of ' + items.length + ' cases shown';
  }
  var RANK = { failed: 0, error: 1, none: 2, passed: 3 };
  function key(c, k) { return k === 'verdict' ? RANK[c.verdict] : c[k]; }
  function sortBy(button) {
    var k = button.getAttribute('data-sort');
    var dir = button.getAttribute('data-dir') === 'asc' ? 'desc' : 'asc';
    document.querySelectorAll('button.sort').forEach(function (b) { b.removeAttribute('data-dir'); });
    button.setAttribute('data-dir', dir);
    var sign = dir === 'asc' ? 1 : -1;
    items.sort(function (a, b) {
      var ia = Number(a.getAttribute('data-index')), ib = Number(b.getAttribute('data-index'));
      var x = key(data.cases[ia], k), y = key(data.cases[ib], k);
      // Missing values sort last in either direction.
      if (x === null || x === undefined) return y === null || y === undefined ? ia - ib : 1;
      if (y === null || y === undefined) return -1;
      var d = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
      return d ? sign * d : ia - ib;
    });
    items.forEach(function (el) { list.appendChild(el); });
  }
  function setAll(open) {
    items.forEach(function (el) { if (!el.hidden) el.open = open; });
  }
  function openHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    var d = el && el.closest('details');
    if (d) d.open = true;
  }
  filter.addEventListener('input', apply);
  Object.keys(selects).forEach(function (k) {
    var el = document.getElementById(selects[k]);
    if (el) el.addEventListener('change', apply);
  });
  document.querySelectorAll('button.sort').forEach(function (b) {
    b.addEventListener('click', function () { sortBy(b); });
  });
  document.getElementById('open-all').addEventListener('click', function () { setAll(true); });
  document.getElementById('close-all').addEventListener('click', function () { setAll(false); });
  window.addEventListener('hashchange', openHash);
  openHash();
  apply();
})();
`;

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
.case-head, details.case > summary { display: grid; grid-template-columns: minmax(180px, 2.4fr) 0.9fr 0.6fr 0.7fr 0.6fr 0.5fr 0.6fr 0.8fr 0.7fr 0.7fr; gap: 6px; padding: 5px 8px; align-items: center; }
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
.status.bad, .bad { color: var(--bad); font-weight: 600; } .status.ok { color: var(--ok); }
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
 * Filter and open/close controls. It reads the embedded JSON data and only sets properties
 * (hidden, open, textContent): no HTML is ever built from data.
 */
export const REPORT_JS = `
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('ragaudit-data').textContent);
  var filter = document.getElementById('filter');
  var kind = document.getElementById('kind');
  var shown = document.getElementById('shown');
  var items = Array.prototype.slice.call(document.querySelectorAll('details.case'));
  function apply() {
    var q = filter.value.trim().toLowerCase();
    var k = kind.value;
    var n = 0;
    items.forEach(function (el) {
      var c = data.cases[Number(el.getAttribute('data-index'))];
      var text = [c.id, c.kind, c.status, c.zone || '', c.question].join(' ').toLowerCase();
      var visible = (!k || c.kind === k) && (!q || text.indexOf(q) >= 0);
      el.hidden = !visible;
      if (visible) n++;
    });
    shown.textContent = n + ' of ' + items.length + ' cases shown';
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
  kind.addEventListener('change', apply);
  document.getElementById('open-all').addEventListener('click', function () { setAll(true); });
  document.getElementById('close-all').addEventListener('click', function () { setAll(false); });
  window.addEventListener('hashchange', openHash);
  openHash();
  apply();
})();
`;

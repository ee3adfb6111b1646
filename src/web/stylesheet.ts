// The one stylesheet of the web UI, served at STYLESHEET_PATH (a file of its
// own, since the CSP allows styles from 'self' only: no inline styles).
export const STYLESHEET_PATH = '/assets/web.css';

export const STYLESHEET = `
:root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #d9dee7; --accent: #2656d9; --danger: #b42318; --ok: #067647; --bg: #f5f7fb; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
header { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 8px 20px; padding: 10px 24px; background: #fff; border-bottom: 1px solid var(--line); }
.brand { font-size: 18px; }
nav.session { display: flex; gap: 14px; align-items: center; color: var(--muted); font-size: 14px; }
nav.session .who { max-width: 170px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
nav.sections { display: flex; flex-wrap: wrap; gap: 2px; margin-right: auto; }
nav.sections a { color: var(--ink); text-decoration: none; padding: 6px 9px; border-radius: 6px; font-size: 15px; white-space: nowrap; }
nav.sections a:hover { background: var(--bg); }
nav.sections a[aria-current=page] { background: #e8eefc; color: var(--accent); font-weight: 600; }
form.switcher { display: flex; gap: 6px; align-items: center; margin: 0; }
form.switcher select { width: auto; max-width: 170px; padding: 5px 8px; font-size: 14px; }
form.switcher button { padding: 5px 10px; font-size: 14px; }
main { max-width: 560px; margin: 40px auto; padding: 0 16px; }
main.wide { max-width: 1080px; margin-top: 28px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 28px; }
.card + .card { margin-top: 20px; }
.page-head { display: flex; align-items: center; justify-content: space-between; gap: 16px; margin-bottom: 16px; }
.page-head h1 { margin: 0; }
h1 { font-size: 22px; margin: 0 0 16px; }
h2 { font-size: 18px; margin: 0 0 12px; }
p.lead { color: var(--muted); margin-top: 0; }
label { display: block; font-weight: 600; margin: 16px 0 6px; }
label.check { display: flex; gap: 8px; align-items: center; font-weight: 400; }
input[type=email], input[type=password], input[type=text], input[type=number], select, textarea { width: 100%; padding: 10px 12px; border: 1px solid var(--line); border-radius: 6px; font: inherit; background: #fff; }
input[aria-invalid=true], select[aria-invalid=true] { border-color: var(--danger); }
.field-error { color: var(--danger); font-size: 14px; margin: 4px 0 0; }
.hint { color: var(--muted); font-size: 14px; margin: 4px 0 0; }
.row { display: grid; grid-template-columns: 1fr 1fr; gap: 0 16px; }
fieldset { border: none; padding: 0; margin: 0; }
button, a.button { display: inline-block; font: inherit; padding: 10px 18px; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; line-height: 1.5; }
button.secondary, a.button.secondary { background: #fff; color: var(--ink); border-color: var(--line); }
button.danger { background: #fff; color: var(--danger); border-color: var(--danger); }
button.small, a.button.small { padding: 4px 10px; font-size: 14px; }
button.link { background: none; border: none; color: var(--accent); padding: 0; }
form.inline { display: inline; margin: 0; }
.actions { display: flex; gap: 12px; margin-top: 24px; align-items: center; }
td.row-actions { text-align: right; white-space: nowrap; width: 1%; }
td.row-actions > * + * { margin-left: 6px; }
.error { background: #fef3f2; border: 1px solid #fecdca; color: var(--danger); padding: 10px 12px; border-radius: 6px; }
.warning { background: #fffaeb; border: 1px solid #fedf89; color: #b54708; padding: 10px 12px; border-radius: 6px; }
.warning.banner { margin-bottom: 16px; }
p.circuit { margin: 0 0 12px; }
.notice { background: #ecfdf3; border: 1px solid #abefc6; color: var(--ok); padding: 10px 12px; border-radius: 6px; }
.badge { display: inline-block; white-space: nowrap; font-size: 12px; font-weight: 600; padding: 1px 8px; border-radius: 999px; background: #e8eefc; color: var(--accent); vertical-align: middle; margin-left: 6px; }
.badge.ok { background: #ecfdf3; color: var(--ok); }
.badge.warn { background: #fffaeb; color: #b54708; }
.badge.bad { background: #fef3f2; color: var(--danger); }
ul.scopes { padding-left: 20px; }
ul.scopes li { margin: 6px 0; }
ul.scopes code, td code { font-size: 13px; color: var(--muted); }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 10px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
td.nowrap { white-space: nowrap; }
.wrap { overflow-wrap: anywhere; }
/* A trace id is 32 characters with no break: in a cell that keeps its time on one line, it may break (390 px). */
td.nowrap .trace { white-space: normal; overflow-wrap: anywhere; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; font-size: 13px; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 160px; overflow: auto; margin: 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 6px 20px; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.muted { color: var(--muted); font-size: 14px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
a.brand { color: var(--ink); text-decoration: none; }
p.summary { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
details summary { cursor: pointer; color: var(--muted); font-size: 14px; overflow-wrap: anywhere; }
details pre { margin-top: 6px; }
figure.chart { margin: 0 0 8px; }
svg.chart { display: block; width: 100%; height: auto; max-width: 720px; }
svg.chart.share { height: 28px; max-width: none; border-radius: 4px; }
svg.chart .grid { stroke: var(--line); stroke-width: 1; }
svg.chart .axis { font-size: 12px; fill: var(--muted); }
svg.chart .empty { fill: var(--line); }
svg.chart .mark line { stroke: var(--danger); stroke-width: 2; stroke-dasharray: 5 3; }
svg.chart .mark text { font-size: 12px; font-weight: 600; fill: var(--danger); }
svg .s-ok { fill: var(--ok); } svg .s-warn { fill: #c4590a; } svg .s-bad { fill: var(--danger); } svg .s-accent { fill: var(--accent); }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 3px; margin-right: 6px; vertical-align: -1px; }
.swatch.s-ok { background: var(--ok); } .swatch.s-warn { background: #c4590a; } .swatch.s-bad { background: var(--danger); } .swatch.s-accent { background: var(--accent); }
ul.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 4px 18px; padding: 0; margin: 8px 0; font-size: 14px; color: var(--muted); }
ul.legend.counts { color: var(--ink); }
details.chart-data table { margin-top: 6px; }
th.plain { text-transform: none; letter-spacing: 0; font-size: 14px; color: var(--ink); font-weight: 400; }
.grid-2 { display: grid; grid-template-columns: 1fr 1fr; gap: 20px; }
.grid-2 > .card + .card { margin-top: 0; }
.stats { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 0 0 12px; }
.stats div { min-width: 90px; }
.stats dt { color: var(--muted); font-size: 14px; }
.stats dd { margin: 0; font-size: 22px; font-weight: 600; }
form.filters { display: flex; flex-wrap: wrap; gap: 0 14px; align-items: flex-end; margin-bottom: 16px; }
form.filters .field { min-width: 150px; flex: 1 1 150px; }
form.filters label { margin-top: 8px; }
form.filters .actions { margin-top: 12px; flex-wrap: wrap; }
form.recover { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: flex-end; }
form.recover .field { flex: 0 1 260px; }
.last-error { margin: 0 0 8px; }
input[type=datetime-local], input[type=date] { width: 100%; padding: 9px 10px; border: 1px solid var(--line); border-radius: 6px; font: inherit; background: #fff; }
ul.plain-list { list-style: none; padding: 0; margin: 0; }
ul.plain-list li { padding: 8px 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
ul.plain-list li:last-child { border-bottom: none; }
.grid-2 { margin-top: 20px; }
h3 { font-size: 16px; margin: 8px 0; }
.grid-2.charts { margin-top: 8px; }
.last-error p { margin: 0 0 4px; }
.pager { display: flex; justify-content: space-between; margin-top: 16px; }
.delivery-summary { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: flex-start; gap: 6px 16px; font-weight: 400; }
tbody.delivery tr.delivery-head th { text-transform: none; letter-spacing: 0; font-size: 15px; color: var(--ink); background: var(--bg); padding-top: 14px; }
p.cannot { margin: 0; max-width: 30em; }
/* Narrow screens: a table of class "stack" becomes a card per row, each cell
   under its column's name (data-label), so nothing lies off to the side. */
@media (max-width: 640px) {
  table.stack, table.stack tbody, table.stack tr, table.stack td, table.stack th[scope=rowgroup] { display: block; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.stack tr { padding: 8px 0; border-bottom: 1px solid var(--line); }
  table.stack td, table.stack th[scope=rowgroup] { border: none; padding: 3px 0; text-align: left; }
  table.stack td[data-label] { position: relative; padding-left: 7.5em; }
  table.stack td[data-label]::before { content: attr(data-label); position: absolute; left: 0; top: 5px; width: 7em; color: var(--muted); font-size: 13px; }
  table.stack td.row-actions { display: flex; flex-wrap: wrap; gap: 6px; width: auto; padding-top: 8px; }
  table.stack td.row-actions > * + * { margin-left: 0; }
  table.stack td:empty { display: none; }
  table.stack tbody:last-child tr:last-child { border-bottom: none; }
  table.stack.numbers tr { display: flex; flex-wrap: wrap; gap: 0 16px; padding: 4px 0; }
  table.stack.numbers th[scope=row] { display: block; flex-basis: 100%; border: none; padding: 0; }
  table.stack.numbers td[data-label] { padding: 0; text-align: left; }
  table.stack.numbers td[data-label]::before { position: static; display: inline; width: auto; margin-right: 6px; }
  tbody.delivery tr.delivery-head th { padding: 10px 8px; }
}
@media (max-width: 640px) { .row, .grid-2 { grid-template-columns: 1fr; } svg.chart .axis, svg.chart .mark text { font-size: 17px; } .card { padding: 18px 14px; } .page-head { flex-wrap: wrap; } header { padding: 10px 12px; } main.wide { padding: 0 8px; } td.row-actions { white-space: normal; } }
`;

import { html } from '../html.js';
import { layout } from '../layout.js';
import { dash, excerpt, formatDuration, formatTime } from './format.js';
export function callStatusBadge(call) {
    return call.status === 'completed' ? html `<span class="badge ok">Completed</span>` : html `<span class="badge warn">In progress</span>`;
}
/** The organization's calls, newest first, one page at a time. */
export function callsPage(input) {
    const rows = input.calls.map((call) => html `<tr>
      <td class="nowrap"><a href="/ui/calls/${call.id}">${formatTime(call.created_at)}</a></td>
      <td>${callStatusBadge(call)}</td>
      <td class="wrap">${call.agent_id ? input.agents.get(call.agent_id) ?? 'Unknown agent' : dash}</td>
      <td class="num">${call.duration_seconds === null ? dash : formatDuration(call.duration_seconds)}</td>
      <td class="wrap">${call.summary === null ? dash : excerpt(call.summary, 140)}</td>
    </tr>`);
    return layout({
        title: 'Calls',
        nav: input.nav,
        wide: true,
        body: html `<div class="page-head"><h1>Calls</h1></div>
<div class="card">
  ${input.calls.length === 0
            ? html `<p class="muted">${input.paged ? 'No older calls.' : 'No calls yet. Calls appear here as the telephony side records them.'}</p>`
            : html `<table><thead><tr><th>Started</th><th>Status</th><th>Agent</th><th class="num">Duration</th><th>Summary</th></tr></thead><tbody>${rows}</tbody></table>`}
  <div class="pager">
    ${input.paged ? html `<a href="/ui/calls">Newest calls</a>` : html `<span></span>`}
    ${input.nextCursor ? html `<a href="/ui/calls?cursor=${input.nextCursor}">Older calls</a>` : ''}
  </div>
</div>`,
    });
}
//# sourceMappingURL=calls.page.js.map
import type { CallView } from '../../calls/calls.service.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { callStatusBadge } from './calls.page.ts';
import { dash, formatDuration, formatTime } from './format.ts';

export function callPage(input: { nav: Navigation; call: CallView; agentName: string | undefined }) {
  const { call } = input;
  return layout({
    title: `Call ${formatTime(call.created_at)}`,
    nav: input.nav,
    wide: true,
    body: html`<div class="page-head">
  <h1>Call of ${formatTime(call.created_at)} ${callStatusBadge(call)}</h1>
  <a href="/ui/calls">All calls</a>
</div>
<div class="card">
  <dl class="facts">
    <dt>Agent</dt><dd>${call.agent_id ? (input.agentName ?? 'Unknown agent') : dash}</dd>
    <dt>Started</dt><dd>${formatTime(call.created_at)}</dd>
    <dt>Completed</dt><dd>${call.completed_at ? formatTime(call.completed_at) : dash}</dd>
    <dt>Duration</dt><dd>${call.duration_seconds === null ? dash : `${formatDuration(call.duration_seconds)} (${call.duration_seconds} s)`}</dd>
    <dt>Call id</dt><dd><code>${call.id}</code></dd>
  </dl>
</div>
<div class="card">
  <h2>Summary</h2>
  ${call.summary === null ? html`<p class="muted">No summary yet: the call is still in progress.</p>` : html`<p class="summary">${call.summary}</p>`}
</div>`,
  });
}

import type { CallView } from '../../calls/call.ts';
import { filterQuery, type FilterValues } from '../call-filters.ts';
import type { FieldErrors } from '../forms.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { selectField } from './fields.ts';
import { dash, excerpt, formatDuration, formatTime } from './format.ts';

export function callStatusBadge(call: CallView) {
  return call.status === 'completed' ? html`<span class="badge ok">Completed</span>` : html`<span class="badge warn">In progress</span>`;
}

export interface CallsPageInput {
  nav: Navigation;
  calls: CallView[];
  agents: Map<string, string>;
  nextCursor: string | null;
  paged: boolean;
  filters: FilterValues;
  errors: FieldErrors;
}

function dateField(name: 'from' | 'to', label: string, values: FilterValues, errors: FieldErrors) {
  const error = errors[name];
  return html`<div class="field">
    <label for="${name}">${label}</label>
    <input id="${name}" name="${name}" type="date" value="${values[name]}"${error ? html` aria-invalid="true" aria-describedby="${name}-error"` : ''}>
    ${error ? html`<p class="field-error" id="${name}-error">${error}</p>` : ''}
  </div>`;
}

function filterForm(input: CallsPageInput) {
  const { filters: values, errors } = input;
  const agents = [{ value: '', label: 'Any agent' }, ...[...input.agents].map(([value, label]) => ({ value, label }))];
  return html`<form method="get" action="/ui/calls" class="filters" aria-label="Filter calls">
  ${dateField('from', 'From (UTC)', values, errors)}
  ${dateField('to', 'To (UTC, included)', values, errors)}
  ${selectField({
    name: 'status',
    label: 'Status',
    values,
    errors,
    options: [
      { value: '', label: 'Any status' },
      { value: 'completed', label: 'Completed' },
      { value: 'in_progress', label: 'In progress' },
    ],
  })}
  ${selectField({ name: 'agent', label: 'Agent', values, errors, options: agents })}
  <div class="actions">
    <button type="submit">Filter</button>
    <a href="/ui/calls">Clear</a>
  </div>
</form>`;
}

/** The organization's calls, newest first, filtered, one page at a time; the filtered list as CSV. */
export function callsPage(input: CallsPageInput) {
  const filtered = Object.values(input.filters).some(Boolean);
  const invalid = Object.keys(input.errors).length > 0;
  const rows = input.calls.map(
    (call) => html`<tr>
      <td class="nowrap"><a href="/ui/calls/${call.id}">${formatTime(call.created_at)}</a></td>
      <td data-label="Status">${callStatusBadge(call)}</td>
      <td class="wrap" data-label="Agent">${call.agent_id ? (input.agents.get(call.agent_id) ?? 'Unknown agent') : dash}</td>
      <td class="num" data-label="Duration">${call.duration_seconds === null ? dash : formatDuration(call.duration_seconds)}</td>
      <td class="wrap" data-label="Summary">${call.summary === null ? dash : excerpt(call.summary, 140)}</td>
    </tr>`,
  );
  const empty = invalid
    ? 'Correct the filters above to see calls.'
    : input.paged
      ? 'No older calls.'
      : filtered
        ? 'No calls match these filters.'
        : 'No calls yet. Calls appear here as the telephony side records them.';
  return layout({
    title: 'Calls',
    nav: input.nav,
    wide: true,
    body: html`<div class="page-head"><h1>Calls</h1>${invalid ? '' : html`<a class="button secondary" href="/ui/calls.csv${filterQuery(input.filters)}" download>Export CSV</a>`}</div>
<div class="card">
  ${filterForm(input)}
  ${
    input.calls.length === 0
      ? html`<p class="muted">${empty}</p>`
      : html`<table class="stack"><thead><tr><th>Started</th><th>Status</th><th>Agent</th><th class="num">Duration</th><th>Summary</th></tr></thead><tbody>${rows}</tbody></table>`
  }
  <nav class="pager" aria-label="Pages">
    ${input.paged ? html`<a href="/ui/calls${filterQuery(input.filters)}">Newest calls</a>` : html`<span></span>`}
    ${input.nextCursor ? html`<a href="/ui/calls${filterQuery(input.filters, { cursor: input.nextCursor })}">Older calls</a>` : ''}
  </nav>
</div>`,
  });
}

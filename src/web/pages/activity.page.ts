// The Activity page (the organization's audit log, for owners and admins)
// and the list of events a subscription's page shows: who changed what, or
// what the system did on its own, each event linking to its subscription or app.
import type { AuditEventView } from '../../audit/audit-events.service.ts';
import { printableUrl } from '../../url-characters.ts';
import { AUDIT_EVENT_TYPES } from '../../audit/audit-events.queries.ts';
import type { FieldErrors } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { selectField } from './fields.ts';
import { dash, formatTime } from './format.ts';

const TYPE_LABELS: Record<AuditEventView['type'], string> = {
  'grant.created': 'App connected',
  'grant.revoked': 'App access revoked',
  'subscription.created': 'Subscription created',
  'subscription.enabled': 'Subscription re-enabled',
  'subscription.deleted': 'Subscription deleted',
  'subscription.disabled': 'Subscription disabled',
  'subscription.secret_changed': 'Signing secret changed',
  'circuit.opened': 'Deliveries paused: the receiver keeps failing',
  'circuit.closed': 'Deliveries resumed',
  'deliveries.recovered': 'Failed deliveries sent again',
  'delivery.redelivered': 'Delivery sent again',
  'alert.sent': 'Alert e-mailed',
};

const REASON_LABELS: Record<string, string> = {
  disconnected: 'disconnected in the web UI',
  revoked: 'revoked by the app',
  code_replay: 'an authorization code was used twice',
  refresh_reuse: 'a refresh token was used again',
  unsubscribed: 'unsubscribed by the app',
  deleted: 'deleted',
  gone: 'the receiver answered 410 Gone',
  client_deleted: 'the app was removed from Switchboard',
  delivery_failures: 'its deliveries failed for five days',
  grant_revoked: "the app's access ended",
  user_deactivated: 'the user who connected the app was deactivated',
  organization_deactivated: 'the organization was deactivated',
  membership_removed: 'the user who connected the app left the organization',
  invalid_url: 'its URL holds a control character, a space or a non-ASCII character',
  recovered: 'the receiver answered again',
  reset: 're-enabled or subscribed again',
};

export interface ActivityFilterValues {
  type: string;
  since: string;
}

/** Where an event's subject is shown: its subscription's page (while it exists) or the connected apps. */
export interface SubjectLinks {
  /** The subscriptions that still exist (a deleted one's page would be a 404). */
  subscriptions: ReadonlySet<string>;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function subscriptionLink(id: string | undefined, hookUrl: string | undefined, links: SubjectLinks): SafeHtml | string {
  const label = hookUrl === undefined ? 'Subscription' : printableUrl(hookUrl);
  if (id && links.subscriptions.has(id)) return html`<a href="/ui/webhooks/${id}">${label}</a>`;
  return html`${label} <span class="muted">(deleted)</span>`;
}

function subject(event: AuditEventView, links: SubjectLinks): SafeHtml | string {
  const { details } = event;
  if (event.subject.type === 'client') return html`<a href="/connected-apps">${text(details.client_name) ?? event.subject.id}</a>`;
  if (event.subject.type === 'delivery') {
    const subscriptionId = text(details.subscription_id);
    return html`A delivery of ${subscriptionLink(subscriptionId, text(details.hook_url) ?? 'its subscription', links)}`;
  }
  return subscriptionLink(event.subject.id, text(details.hook_url), links);
}

/** The counts and times a reader needs, in words; never more than the event holds. */
function detailText(event: AuditEventView): string {
  const { details } = event;
  const parts: string[] = [];
  if (typeof details.count === 'number') parts.push(`${details.count} ${details.count === 1 ? 'delivery' : 'deliveries'}`);
  if (typeof details.consecutive_failures === 'number') parts.push(`after ${details.consecutive_failures} failed attempts in a row`);
  if (typeof details.opens === 'number' && details.opens > 1) parts.push(`paused ${details.opens} times in this incident`);
  if (typeof details.recipients === 'number') parts.push(`to ${details.recipients} ${details.recipients === 1 ? 'person' : 'people'}`);
  if (typeof details.since === 'string') parts.push(`failed since ${formatTime(details.since)}`);
  return parts.join('; ');
}

function actor(event: AuditEventView): SafeHtml {
  if (event.actor.type === 'system') return html`<span class="muted">Switchboard (${event.actor.label})</span>`;
  return html`${event.actor.label}${event.actor.type === 'client' ? html` <span class="muted">(app)</span>` : ''}`;
}

/** The events as a table, newest first; '' for none. */
export function activityTable(events: readonly AuditEventView[], links: SubjectLinks, caption: string): SafeHtml | string {
  if (events.length === 0) return '';
  const rows = events.map((event) => {
    const detail = detailText(event);
    return html`<tr>
      <td class="nowrap">${formatTime(event.occurred_at)}</td>
      <td class="wrap" data-label="Event">${TYPE_LABELS[event.type]}${event.reason ? html`: ${REASON_LABELS[event.reason] ?? event.reason}` : ''}<br><code class="muted">${event.type}</code></td>
      <td class="wrap" data-label="By">${actor(event)}</td>
      <td class="wrap" data-label="Subject">${subject(event, links)}</td>
      <td class="wrap" data-label="Details">${detail || dash}</td>
    </tr>`;
  });
  return html`<table class="stack"><caption class="visually-hidden">${caption}</caption><thead><tr><th>When</th><th>Event</th><th>By</th><th>Subject</th><th>Details</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function query(values: ActivityFilterValues, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  if (values.type) params.set('type', values.type);
  if (values.since) params.set('since', values.since);
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  const q = params.toString();
  return q ? `?${q}` : '';
}

function filterForm(values: ActivityFilterValues, errors: FieldErrors) {
  const known = (AUDIT_EVENT_TYPES as readonly string[]).includes(values.type) || values.type === '';
  const options = [
    { value: '', label: 'Any event' },
    ...AUDIT_EVENT_TYPES.map((type) => ({ value: type, label: `${TYPE_LABELS[type]} (${type})` })),
    // Several types from a link (type=a,b) stay selected as they came.
    ...(known ? [] : [{ value: values.type, label: values.type }]),
  ];
  const sinceError = errors.since;
  return html`<form method="get" action="/ui/activity" class="filters" aria-label="Filter activity">
  ${selectField({ name: 'type', label: 'Event', values: { type: values.type }, errors, options })}
  <div class="field">
    <label for="since">Since (UTC, included)</label>
    <input id="since" name="since" type="date" value="${values.since}"${sinceError ? html` aria-invalid="true" aria-describedby="since-error"` : ''}>
    ${sinceError ? html`<p class="field-error" id="since-error">${sinceError}</p>` : ''}
  </div>
  <div class="actions">
    <button type="submit">Filter</button>
    <a href="/ui/activity">Clear</a>
  </div>
</form>`;
}

export interface ActivityPageInput {
  nav: Navigation;
  events: AuditEventView[];
  links: SubjectLinks;
  nextCursor: string | null;
  paged: boolean;
  filters: ActivityFilterValues;
  errors: FieldErrors;
}

/** The organization's audit log, newest first, filtered by type and since, one page at a time. */
export function activityPage(input: ActivityPageInput) {
  const invalid = Object.keys(input.errors).length > 0;
  const filtered = Boolean(input.filters.type || input.filters.since);
  const empty = invalid
    ? 'Correct the filters above to see activity.'
    : input.paged
      ? 'No older activity.'
      : filtered
        ? 'No activity matches these filters.'
        : 'No activity yet. Connecting an app, its subscriptions and what happens to their deliveries show here.';
  return layout({
    title: 'Activity',
    nav: input.nav,
    wide: true,
    body: html`<div class="page-head"><h1>Activity</h1></div>
<div class="card">
  <p class="muted">Who connected or disconnected an app, who changed a subscription, and what Switchboard did on its own, newest first.</p>
  ${filterForm(input.filters, input.errors)}
  ${input.events.length === 0 ? html`<p class="muted">${empty}</p>` : activityTable(input.events, input.links, 'Activity, newest first')}
  <nav class="pager" aria-label="Pages">
    ${input.paged ? html`<a href="/ui/activity${query(input.filters)}">Newest activity</a>` : html`<span></span>`}
    ${input.nextCursor ? html`<a href="/ui/activity${query(input.filters, { cursor: input.nextCursor })}">Older activity</a>` : ''}
  </nav>
</div>`,
  });
}

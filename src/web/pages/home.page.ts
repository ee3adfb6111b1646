import { printableUrl } from '../../url-characters.ts';
import type { DashboardFigures } from '../../dashboard/dashboard.service.ts';
import type { ConnectedApp } from '../../oauth/grants.queries.ts';
import type { SubscriptionView } from '../../webhooks/subscriptions.service.ts';
import { barChart, shareBar } from '../charts/bar-chart.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { circuitPhrase, circuitTripped } from './circuit.ts';
import { formatTime } from './format.ts';
import { disabledBecause, subscriptionStatus } from './webhooks.page.ts';

export interface HomePageInput {
  nav: Navigation;
  figures: DashboardFigures;
  /** Subscriptions failing, disabled, or with their circuit open or probing. */
  troubled: SubscriptionView[];
  clients: Map<string, string>;
  apps: ConnectedApp[];
  /** SMTP_URL is set: open incidents are e-mailed to owners and admins, so the page needs no banner for them. */
  alertsSent: boolean;
}

function callsChart(figures: DashboardFigures) {
  const days = figures.callsPerDay;
  const total = days.reduce((a, d) => a + d.count, 0);
  const busiest = days.reduce((best, d) => (d.count > best.count ? d : best), days[0]!);
  const today = days.at(-1)!;
  const summary =
    total === 0
      ? `No calls in the last ${days.length} days.`
      : `${total} calls in the last ${days.length} days (${days[0]!.day} to ${today.day}, UTC). Busiest day ${busiest.day} with ${busiest.count}; today ${today.count}.`;
  return html`<h2>Calls per day</h2>
  <p class="muted">${summary}</p>
  ${barChart({
    id: 'calls-per-day',
    title: `Calls per day, last ${days.length} days`,
    summary,
    series: [{ label: 'Calls', tone: 'accent' }],
    categories: days.map((d) => ({ label: d.day, short: d.day.slice(8, 10), values: [d.count] })),
    labelEvery: 5,
    categoryHeader: 'Day (UTC)',
  })}`;
}

function deliveriesChart(figures: DashboardFigures) {
  const { delivered, retrying, failed } = figures.deliveries24h;
  const total = delivered + retrying + failed;
  const summary =
    total === 0
      ? 'No deliveries in the last 24 hours.'
      : `${total} ${total === 1 ? 'delivery' : 'deliveries'} in the last 24 hours: ${delivered} delivered, ${retrying} pending or retrying, ${failed} failed.`;
  return html`<h2>Deliveries, last 24 hours</h2>
  ${shareBar({
    id: 'deliveries-24h',
    title: 'Deliveries in the last 24 hours by outcome',
    summary,
    shares: [
      { label: 'Delivered', tone: 'ok', value: delivered },
      { label: 'Retrying', tone: 'warn', value: retrying },
      { label: 'Failed', tone: 'bad', value: failed },
    ],
  })}
  <p class="muted">Webhook deliveries of completed calls, by where they stand now. Retrying includes deliveries waiting for their first attempt.</p>`;
}

function troubleInWords(s: SubscriptionView): string {
  if (s.status === 'disabled') return `disabled ${formatTime(s.disabled_at)}: ${disabledBecause(s)}`;
  const failing = s.failing_since ? `failing since ${formatTime(s.failing_since)}` : '';
  return [failing, circuitPhrase(s)].filter(Boolean).join('; ');
}

function troubledList(input: HomePageInput) {
  if (input.troubled.length === 0)
    return html`<p class="muted">Every subscription is delivering. <a href="/ui/webhooks">All webhooks</a></p>`;
  return html`<ul class="plain-list">${input.troubled.map(
    (s) => html`<li>
    <a class="wrap" href="/ui/webhooks/${s.id}">${printableUrl(s.callback_url)}</a> ${subscriptionStatus(s)}
    <br><span class="muted">${input.clients.get(s.client_id) ?? s.client_id} · ${troubleInWords(s)}</span>
  </li>`,
  )}</ul>`;
}

function appsList(apps: ConnectedApp[]) {
  if (apps.length === 0)
    return html`<p class="muted">No apps connected. An automation platform appears here once someone in your organization authorizes it.</p>`;
  return html`<ul class="plain-list">${apps.map((a) => html`<li><strong>${a.client_name}</strong><br><span class="muted">connected ${formatTime(a.connected_at.toISOString())}</span></li>`)}</ul>
  <p><a href="/connected-apps">Manage connected apps</a></p>`;
}

/**
 * Without SMTP_URL nobody is e-mailed of an incident: the home page says so
 * above everything while any subscription's circuit is open.
 */
function incidentBanner(input: HomePageInput) {
  if (input.alertsSent) return '';
  const open = input.troubled.filter(circuitTripped);
  if (open.length === 0) return '';
  const first = open[0]!;
  const what =
    open.length === 1
      ? html`Deliveries to <a class="wrap" href="/ui/webhooks/${first.id}">${printableUrl(first.callback_url)}</a> are paused: its receiver keeps failing (${circuitPhrase(first)}).`
      : html`${open.length} webhook subscriptions have their deliveries paused because their receivers keep failing; see <a href="#attention">Subscriptions needing attention</a>.`;
  return html`<div class="warning banner" role="alert" id="incident-banner"><strong>Open incident${open.length === 1 ? '' : 's'}.</strong> ${what} No alert e-mails are sent from this Switchboard (no SMTP server configured).</div>`;
}

/** The signed-in home: are calls coming in, are the apps receiving them, and what needs attention. */
export function homePage(input: HomePageInput) {
  return layout({
    title: 'Home',
    nav: input.nav,
    wide: true,
    body: html`<div class="page-head"><h1>${input.nav.organizationName}</h1><a href="/ui/alerts">Alert e-mails</a></div>
${incidentBanner(input)}
<div class="card">${callsChart(input.figures)}</div>
<div class="card">${deliveriesChart(input.figures)}</div>
<div class="grid-2">
  <section class="card" aria-labelledby="attention">
    <h2 id="attention">Subscriptions needing attention</h2>
    ${troubledList(input)}
  </section>
  <section class="card" aria-labelledby="apps">
    <h2 id="apps">Connected apps</h2>
    ${appsList(input.apps)}
  </section>
</div>`,
  });
}

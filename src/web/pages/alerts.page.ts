import { ALERT_SETTINGS_PATH } from '../../alerts/templates.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { notice } from './fields.ts';

export interface AlertsPageInput {
  nav: Navigation;
  /** An owner or admin: among the organization's alert recipients. */
  receives: boolean;
  enabled: boolean;
  /** SMTP_URL is set: alerts are e-mailed at all. */
  sending: boolean;
  notice?: string;
}

/** The signed-in user's own alert e-mails in this organization: on or off. */
export function alertsPage(input: AlertsPageInput) {
  const { nav } = input;
  const state = input.enabled ? 'on' : 'off';
  const form = html`<form method="post" action="${ALERT_SETTINGS_PATH}">
    <input type="hidden" name="csrf" value="${nav.csrf}">
    <input type="hidden" name="enabled" value="${input.enabled ? 'false' : 'true'}">
    <p>Alert e-mails to <strong>${nav.email}</strong> for ${nav.organizationName} are <strong id="alerts-state">${state}</strong>.</p>
    <div class="actions"><button type="submit"${input.enabled ? html` class="secondary"` : ''}>${input.enabled ? 'Turn alerts off' : 'Turn alerts on'}</button></div>
  </form>`;
  return layout({
    title: 'Alert e-mails',
    nav,
    body: html`<div class="page-head"><h1>Alert e-mails</h1></div>
${notice(input.notice)}
<div class="card">
  <p class="lead">Owners and admins get an e-mail when a webhook receiver has been failing for a while (and when it recovers), when a subscription is disabled after days of failures, when deliveries fail for good, and when an app's connection is revoked for a security reason. Nothing is sent for what someone did on purpose.</p>
  ${input.sending ? '' : html`<p class="warning">This Switchboard has no SMTP server configured (SMTP_URL), so no alert e-mails are sent; open incidents show on the home page.</p>`}
  ${input.receives ? form : html`<p class="muted">Only the organization's owners and admins get alert e-mails; you are a member.</p>`}
</div>`,
  });
}

import type { ConnectedApp } from '../../oauth/grants.queries.ts';
import { SCOPE_DESCRIPTIONS, type Scope } from '../../oauth/scopes.ts';
import { html } from '../html.ts';
import { layout } from '../layout.ts';

export function connectedAppsPage(input: {
  csrf: string;
  email: string;
  organizationName: string;
  apps: ConnectedApp[];
  notice?: string;
}) {
  const rows = input.apps.map((app) => html`<tr>
      <td><strong>${app.client_name}</strong><br><span class="muted">connected ${app.connected_at.toISOString().slice(0, 10)}</span></td>
      <td>${app.scopes.map((s) => html`<div title="${SCOPE_DESCRIPTIONS[s as Scope] ?? s}"><code>${s}</code></div>`)}</td>
      <td>
        <form method="post" action="/connected-apps/revoke" class="inline">
          <input type="hidden" name="csrf" value="${input.csrf}">
          <input type="hidden" name="client_id" value="${app.client_id}">
          <button type="submit" class="danger">Revoke</button>
        </form>
      </td>
    </tr>`);
  return layout({
    title: 'Connected apps',
    session: { email: input.email, organizationName: input.organizationName, csrf: input.csrf },
    body: html`<div class="card">
  <h1>Connected apps</h1>
  <p class="lead">Applications that can act for ${input.organizationName}. Revoking one ends its access at once.</p>
  ${input.notice ? html`<p class="notice" role="status">${input.notice}</p>` : ''}
  ${input.apps.length === 0
    ? html`<p class="muted">No applications are connected.</p>`
    : html`<table><thead><tr><th>Application</th><th>Access</th><th></th></tr></thead><tbody>${rows}</tbody></table>`}
</div>`,
  });
}

import type { ConnectedApp } from '../../oauth/grants.queries.ts';
import { SCOPE_DESCRIPTIONS, type Scope } from '../../oauth/scopes.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { notice } from './fields.ts';

/** What kind of app it is: an MCP assistant that registered itself is said to be one, and not verified. */
const KIND_WORDS = {
  platform: 'automation platform',
  metadata_document: 'AI assistant (MCP), from its own document, not verified',
  registered: 'AI assistant (MCP), self-registered, not verified',
} as const;

export function connectedAppsPage(input: { nav: Navigation; apps: ConnectedApp[]; notice?: string }) {
  const { csrf } = input.nav;
  const rows = input.apps.map(
    (app) => html`<tr>
      <td><strong>${app.client_name}</strong><br><span class="muted">${KIND_WORDS[app.client_kind]} · connected ${app.connected_at.toISOString().slice(0, 10)}</span></td>
      <td data-label="Access">${app.scopes.map((s) => html`<div title="${SCOPE_DESCRIPTIONS[s as Scope] ?? s}"><code>${s}</code></div>`)}</td>
      <td class="row-actions">
        <form method="post" action="/connected-apps/revoke" class="inline">
          <input type="hidden" name="csrf" value="${csrf}">
          <input type="hidden" name="client_id" value="${app.client_id}">
          <button type="submit" class="danger small">Revoke</button>
        </form>
      </td>
    </tr>`,
  );
  return layout({
    title: 'Connected apps',
    nav: input.nav,
    wide: true,
    body: html`<div class="page-head"><h1>Connected apps</h1></div>
${notice(input.notice)}
<div class="card">
  <p class="lead">Applications that can act for ${input.nav.organizationName}. Revoking one ends its access at once.</p>
  ${
    input.apps.length === 0
      ? html`<p class="muted">No applications are connected.</p>`
      : html`<table class="stack"><thead><tr><th>Application</th><th>Access</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
  }
</div>`,
  });
}

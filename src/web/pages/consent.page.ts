import type { OrganizationMembership } from '../../organizations/users.queries.ts';
import type { ClientDescription } from '../../oauth/public-clients/client-description.ts';
import { SCOPE_DESCRIPTIONS, type Scope } from '../../oauth/scopes.ts';
import { html } from '../html.ts';
import { layout } from '../layout.ts';

export interface ConsentInput {
  csrf: string;
  client: ClientDescription;
  redirectOrigin: string;
  scopes: string[];
  email: string;
  organizations: OrganizationMembership[];
  selectedOrganizationId: string;
  /** The authorization request's parameters, carried through the form unchanged. */
  params: Record<string, string>;
}

export function consentPage(input: ConsentInput) {
  const selected = input.organizations.find((o) => o.id === input.selectedOrganizationId) ?? input.organizations[0]!;
  const organization =
    input.organizations.length > 1
      ? html`<label for="organization_id">Organization</label>
    <select id="organization_id" name="organization_id">
      ${input.organizations.map((o) => html`<option value="${o.id}"${o.id === selected.id ? html` selected` : ''}>${o.name}</option>`)}
    </select>`
      : html`<p>Organization: <strong>${selected.name}</strong></p>
    <input type="hidden" name="organization_id" value="${selected.id}">`;
  return layout({
    title: `Connect ${input.client.name}`,
    session: { email: input.email, organizationName: selected.name, csrf: input.csrf },
    body: html`<div class="card">
  <h1><span class="client-name">${input.client.name}</span> wants to connect to your Switchboard account</h1>
  <p class="client-origin">From ${input.client.from}${input.client.verified ? '' : html` · <strong>not verified</strong>: it registered itself, so Switchboard cannot vouch for who made it`}</p>
  <p class="lead">Signed in as ${input.email}. If you allow it, ${input.client.name} will be able to:</p>
  <ul class="scopes">
    ${input.scopes.map((s) => html`<li>${SCOPE_DESCRIPTIONS[s as Scope] ?? s} <code>${s}</code></li>`)}
  </ul>
  <form method="post" action="/oauth/authorize">
    <input type="hidden" name="csrf" value="${input.csrf}">
    ${Object.entries(input.params).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
    ${organization}
    <p class="muted">You will be sent back to ${input.redirectOrigin}. You can disconnect it at any time under Connected apps.</p>
    <div class="actions">
      <button type="submit" name="decision" value="allow">Allow</button>
      <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
    </div>
  </form>
</div>`,
  });
}

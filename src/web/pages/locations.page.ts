import type { Location } from '../../locations/locations.schemas.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { notice, postButton } from './fields.ts';

function address(location: Location): string {
  const place = [location.postal_code, location.city, location.state].filter(Boolean).join(' ');
  return [location.address_line1, location.address_line2, place, location.country].filter(Boolean).join(', ');
}

function coordinates(location: Location): string {
  return location.latitude === null || location.longitude === null ? '' : `${location.latitude}, ${location.longitude}`;
}

/** The organization's locations, primary first, then by name (the service's order). */
export function locationsPage(input: { nav: Navigation; locations: Location[]; notice?: string }) {
  const { csrf } = input.nav;
  const rows = input.locations.map(
    (location) => html`<tr>
      <td class="wrap"><strong>${location.name}</strong>${location.is_primary ? html` <span class="badge">Primary</span>` : ''}</td>
      <td class="wrap" data-label="Address">${address(location) || html`<span class="muted">No address</span>`}</td>
      <td class="nowrap" data-label="Coordinates">${coordinates(location) || html`<span class="muted">—</span>`}</td>
      <td class="row-actions">
        <a class="button secondary small" href="/ui/locations/${location.id}/edit">Edit</a>
        ${location.is_primary ? '' : postButton({ action: `/ui/locations/${location.id}/primary`, csrf, label: 'Make primary' })}
        <a class="button secondary small" href="/ui/locations/${location.id}/delete">Delete</a>
      </td>
    </tr>`,
  );
  return layout({
    title: 'Locations',
    nav: input.nav,
    wide: true,
    body: html`<div class="page-head">
  <h1>Locations</h1>
  <a class="button" href="/ui/locations/new">New location</a>
</div>
${notice(input.notice)}
<div class="card">
  ${
    input.locations.length === 0
      ? html`<p class="muted">No locations yet. Add the places your organization works from.</p>`
      : html`<table class="stack"><thead><tr><th>Name</th><th>Address</th><th>Coordinates</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
  }
</div>`,
  });
}

import type { Location } from '../../locations/locations.schemas.ts';
import type { ServiceArea } from '../../service-areas/service-areas.schemas.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { notice } from './fields.ts';

const dash = html`<span class="muted">—</span>`;

export function serviceAreasPage(input: { nav: Navigation; areas: ServiceArea[]; locations: Location[]; notice?: string }) {
  const locationName = new Map(input.locations.map((l) => [l.id, l.name]));
  const rows = input.areas.map(
    (area) => html`<tr>
      <td class="wrap"><strong>${area.label}</strong></td>
      <td class="wrap" data-label="Type">${area.area_type ?? dash}</td>
      <td class="wrap" data-label="Value">${area.value ?? dash}</td>
      <td class="wrap" data-label="Country">${area.country ?? dash}</td>
      <td class="num" data-label="Radius">${area.radius_km === null ? dash : `${area.radius_km} km`}</td>
      <td class="wrap" data-label="Location">${area.location_id ? html`<a href="/ui/locations/${area.location_id}/edit">${locationName.get(area.location_id) ?? 'Location'}</a>` : dash}</td>
      <td class="row-actions">
        <a class="button secondary small" href="/ui/service-areas/${area.id}/edit">Edit</a>
        <a class="button secondary small" href="/ui/service-areas/${area.id}/delete">Delete</a>
      </td>
    </tr>`,
  );
  return layout({
    title: 'Service areas',
    nav: input.nav,
    wide: true,
    body: html`<div class="page-head">
  <h1>Service areas</h1>
  <a class="button" href="/ui/service-areas/new">New service area</a>
</div>
${notice(input.notice)}
<div class="card">
  ${
    input.areas.length === 0
      ? html`<p class="muted">No service areas yet. Describe where your organization takes calls for: a city, a region, a radius around a location.</p>`
      : html`<table class="stack"><thead><tr><th>Label</th><th>Type</th><th>Value</th><th>Country</th><th class="num">Radius</th><th>Location</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
  }
</div>`,
  });
}

import { LATITUDE_MAX, LONGITUDE_MAX } from '../../locations/locations.schemas.ts';
import { html } from '../html.ts';
import type { FieldErrors } from '../forms.ts';
import { layout, type Navigation } from '../layout.ts';
import { formError, hiddenCsrf, textField } from './fields.ts';

/** The new-location and edit-location form; `values` are the fields as typed (or as stored). */
export function locationFormPage(input: { nav: Navigation; id?: string; values: Record<string, string>; errors: FieldErrors }) {
  const editing = input.id !== undefined;
  const field = (name: string, label: string, extra: { type?: 'number'; hint?: string; autofocus?: boolean } = {}) =>
    textField({ name, label, values: input.values, errors: input.errors, ...extra });
  const title = editing ? `Edit ${input.values.name || 'location'}` : 'New location';
  return layout({
    title,
    nav: input.nav,
    body: html`<div class="card">
  <h1>${title}</h1>
  ${formError(input.errors)}
  <form method="post" action="${editing ? `/ui/locations/${input.id}` : '/ui/locations'}">
    ${hiddenCsrf(input.nav.csrf)}
    ${field('name', 'Name', { autofocus: !editing })}
    ${field('address_line1', 'Address')}
    ${field('address_line2', 'Apartment, suite, floor (optional)')}
    <div class="row">${field('city', 'City')}${field('state', 'State or region')}</div>
    <div class="row">${field('postal_code', 'Postal code')}${field('country', 'Country')}</div>
    <div class="row">
      ${field('latitude', 'Latitude', { type: 'number', hint: `Degrees north, -${LATITUDE_MAX} to ${LATITUDE_MAX}` })}
      ${field('longitude', 'Longitude', { type: 'number', hint: `Degrees east, -${LONGITUDE_MAX} to ${LONGITUDE_MAX}` })}
    </div>
    ${editing ? '' : html`<label class="check"><input type="checkbox" name="is_primary" value="on"${input.values.is_primary === 'on' ? html` checked` : ''}> Make this the primary location</label>`}
    <div class="actions">
      <button type="submit">${editing ? 'Save changes' : 'Create location'}</button>
      <a href="/ui/locations">Cancel</a>
    </div>
  </form>
</div>`,
  });
}

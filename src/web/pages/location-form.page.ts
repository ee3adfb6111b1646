import { LATITUDE_MAX, LONGITUDE_MAX } from '../../locations/locations.schemas.ts';
import { html } from '../html.ts';
import { recordFormPage, recordTextField, type RecordFormInput } from './record-form.ts';

/** The new-location and edit-location form; `values` are the fields as typed (or as stored). */
export function locationFormPage(input: RecordFormInput) {
  const editing = input.id !== undefined;
  const field = recordTextField(input);
  return recordFormPage({
    ...input,
    base: '/ui/locations',
    what: 'location',
    title: editing ? `Edit ${input.values.name || 'location'}` : 'New location',
    fields: html`${field('name', 'Name', { autofocus: !editing })}
    ${field('address_line1', 'Address')}
    ${field('address_line2', 'Apartment, suite, floor (optional)')}
    <div class="row">${field('city', 'City')}${field('state', 'State or region')}</div>
    <div class="row">${field('postal_code', 'Postal code')}${field('country', 'Country')}</div>
    <div class="row">
      ${field('latitude', 'Latitude', { type: 'number', hint: `Degrees north, -${LATITUDE_MAX} to ${LATITUDE_MAX}` })}
      ${field('longitude', 'Longitude', { type: 'number', hint: `Degrees east, -${LONGITUDE_MAX} to ${LONGITUDE_MAX}` })}
    </div>
    ${editing ? '' : html`<label class="check"><input type="checkbox" name="is_primary" value="on"${input.values.is_primary === 'on' ? html` checked` : ''}> Make this the primary location</label>`}`,
  });
}

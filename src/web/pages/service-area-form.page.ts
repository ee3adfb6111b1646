import type { Location } from '../../locations/locations.schemas.ts';
import { html } from '../html.ts';
import { selectField } from './fields.ts';
import { recordFormPage, recordTextField, type RecordFormInput } from './record-form.ts';

/** The new- and edit-service-area form; the location select lists the organization's own locations only. */
export function serviceAreaFormPage(input: RecordFormInput & { locations: Location[] }) {
  const editing = input.id !== undefined;
  const field = recordTextField(input);
  const options = [
    { value: '', label: 'No location' },
    ...input.locations.map((l) => ({ value: l.id, label: l.is_primary ? `${l.name} (primary)` : l.name })),
  ];
  return recordFormPage({
    ...input,
    base: '/ui/service-areas',
    what: 'service area',
    title: editing ? `Edit ${input.values.label || 'service area'}` : 'New service area',
    fields: html`${field('label', 'Label', { autofocus: !editing, hint: 'What people call the area: a city, a region, a postal code' })}
    <div class="row">
      ${field('area_type', 'Type (optional)', { hint: 'For example city, postal_code or region' })}
      ${field('value', 'Value (optional)', { hint: 'The structured value, for example 94107' })}
    </div>
    <div class="row">
      ${field('country', 'Country (optional)')}
      ${field('radius_km', 'Radius in km (optional)', { type: 'number', hint: 'Around the linked location' })}
    </div>
    ${selectField({ name: 'location_id', label: 'Location', options, values: input.values, errors: input.errors })}`,
  });
}

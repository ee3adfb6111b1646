import { html } from '../html.js';
import { layout } from '../layout.js';
import { formError, hiddenCsrf, selectField, textField } from './fields.js';
/** The new- and edit-service-area form; the location select lists the organization's own locations only. */
export function serviceAreaFormPage(input) {
    const editing = input.id !== undefined;
    const field = (name, label, extra = {}) => textField({ name, label, values: input.values, errors: input.errors, ...extra });
    const title = editing ? `Edit ${input.values.label || 'service area'}` : 'New service area';
    const options = [
        { value: '', label: 'No location' },
        ...input.locations.map((l) => ({ value: l.id, label: l.is_primary ? `${l.name} (primary)` : l.name })),
    ];
    return layout({
        title,
        nav: input.nav,
        body: html `<div class="card">
  <h1>${title}</h1>
  ${formError(input.errors)}
  <form method="post" action="${editing ? `/ui/service-areas/${input.id}` : '/ui/service-areas'}">
    ${hiddenCsrf(input.nav.csrf)}
    ${field('label', 'Label', { autofocus: !editing, hint: 'What people call the area: a city, a region, a postal code' })}
    <div class="row">
      ${field('area_type', 'Type (optional)', { hint: 'For example city, postal_code or region' })}
      ${field('value', 'Value (optional)', { hint: 'The structured value, for example 94107' })}
    </div>
    <div class="row">
      ${field('country', 'Country (optional)')}
      ${field('radius_km', 'Radius in km (optional)', { type: 'number', hint: 'Around the linked location' })}
    </div>
    ${selectField({ name: 'location_id', label: 'Location', options, values: input.values, errors: input.errors })}
    <div class="actions">
      <button type="submit">${editing ? 'Save changes' : 'Create service area'}</button>
      <a href="/ui/service-areas">Cancel</a>
    </div>
  </form>
</div>`,
    });
}
//# sourceMappingURL=service-area-form.page.js.map
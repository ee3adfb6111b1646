// The frame of a page that creates or edits one record (a location, a service
// area): the title, the form's error, the record's own fields, then the submit
// button and Cancel. An id means editing: the form posts to the record's URL.
import { html, type SafeHtml } from '../html.ts';
import type { FieldErrors } from '../forms.ts';
import { layout, type Navigation } from '../layout.ts';
import { formError, hiddenCsrf, textField } from './fields.ts';

export interface RecordFormInput {
  nav: Navigation;
  id?: string;
  values: Record<string, string>;
  errors: FieldErrors;
}

/** A text input of this form, showing the value as typed (or as stored) and its message. */
export function recordTextField(input: RecordFormInput) {
  return (name: string, label: string, extra: { type?: 'number'; hint?: string; autofocus?: boolean } = {}) =>
    textField({ name, label, values: input.values, errors: input.errors, ...extra });
}

/** `base` is the section's URL (`/ui/locations`), `what` the record's name in the title and the button. */
export function recordFormPage(input: RecordFormInput & { base: string; what: string; title: string; fields: SafeHtml }) {
  const editing = input.id !== undefined;
  return layout({
    title: input.title,
    nav: input.nav,
    body: html`<div class="card">
  <h1>${input.title}</h1>
  ${formError(input.errors)}
  <form method="post" action="${editing ? `${input.base}/${input.id}` : input.base}">
    ${hiddenCsrf(input.nav.csrf)}
    ${input.fields}
    <div class="actions">
      <button type="submit">${editing ? 'Save changes' : `Create ${input.what}`}</button>
      <a href="${input.base}">Cancel</a>
    </div>
  </form>
</div>`,
  });
}

// Form controls shared by the edit pages: a label, the control, and the
// validation message right beside it (linked with aria-describedby so screen
// readers announce it with the field).
import { html, type SafeHtml } from '../html.ts';
import type { FieldErrors } from '../forms.ts';

interface FieldInput {
  name: string;
  label: string;
  values: Record<string, string>;
  errors: FieldErrors;
  hint?: string;
}

function describedBy(input: FieldInput): SafeHtml | string {
  const ids = [input.errors[input.name] ? `${input.name}-error` : '', input.hint ? `${input.name}-hint` : ''].filter(Boolean);
  return ids.length ? html` aria-describedby="${ids.join(' ')}"` : '';
}

function messages(input: FieldInput) {
  const error = input.errors[input.name];
  return html`${input.hint ? html`<p class="hint" id="${input.name}-hint">${input.hint}</p>` : ''}${error ? html`<p class="field-error" id="${input.name}-error">${error}</p>` : ''}`;
}

/** A text or number input. Numbers use inputmode only: the rules (ranges) are the server's, stated once. */
export function textField(input: FieldInput & { type?: 'text' | 'number'; autofocus?: boolean }) {
  const invalid = input.errors[input.name] ? html` aria-invalid="true"` : '';
  const numeric = input.type === 'number' ? html` inputmode="decimal"` : '';
  return html`<div class="field">
    <label for="${input.name}">${input.label}</label>
    <input id="${input.name}" name="${input.name}" type="text" value="${input.values[input.name] ?? ''}"${numeric}${invalid}${describedBy(input)}${input.autofocus ? html` autofocus` : ''}>
    ${messages(input)}
  </div>`;
}

export function selectField(input: FieldInput & { options: { value: string; label: string }[] }) {
  const invalid = input.errors[input.name] ? html` aria-invalid="true"` : '';
  const selected = input.values[input.name] ?? '';
  return html`<div class="field">
    <label for="${input.name}">${input.label}</label>
    <select id="${input.name}" name="${input.name}"${invalid}${describedBy(input)}>
      ${input.options.map((o) => html`<option value="${o.value}"${o.value === selected ? html` selected` : ''}>${o.label}</option>`)}
    </select>
    ${messages(input)}
  </div>`;
}

/** The page's notice after a Post/Redirect/Get (fixed texts chosen by a code, never text from the URL). */
export function notice(message: string | undefined) {
  return message ? html`<p class="notice" role="status">${message}</p>` : '';
}

/** Above the form: an error that belongs to no single field, or a pointer to the fields' own messages. */
export function formError(errors: FieldErrors) {
  if (errors.form) return html`<p class="error" role="alert">${errors.form}</p>`;
  return Object.keys(errors).length > 0
    ? html`<p class="error" role="alert">Nothing was saved: please correct the fields marked below.</p>`
    : '';
}

export function hiddenCsrf(csrf: string) {
  return html`<input type="hidden" name="csrf" value="${csrf}">`;
}

/** A one-button form posting to `action` (make primary, redeliver, re-enable…). */
export function postButton(input: { action: string; csrf: string; label: string; className?: string }) {
  return html`<form method="post" action="${input.action}" class="inline">${hiddenCsrf(input.csrf)}<button type="submit" class="${input.className ?? 'secondary small'}">${input.label}</button></form>`;
}

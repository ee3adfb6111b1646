// Form posts arrive as strings; the API's TypeBox schemas expect JSON types.
// These helpers convert fields deliberately (empty → null where the field is
// nullable, numerals → numbers) and then validate with the very schema and
// validator the JSON API uses, so every rule lives in one place. Ajv's
// findings become one plain-language message per field, shown beside it.
import type { TSchema } from '@sinclair/typebox';
import { validatorCompiler } from '../http/validation.ts';
import * as errors from '../errors.ts';
import { ValidationProblem, type FieldError } from '../http/problem-details.plugin.ts';
import { UUID_PATTERN } from '../http/schemas.ts';
import { LABEL_PATTERN, NO_NUL_PATTERN } from '../locations/locations.schemas.ts';

export type FormBody = Record<string, unknown> | undefined;
/** Field name → the message shown next to it. */
export type FieldErrors = Record<string, string>;

/** A submitted field as text ('' when absent or repeated). */
export function text(form: FormBody, name: string): string {
  const value = form?.[name];
  return typeof value === 'string' ? value : '';
}

/** '' → null, for nullable text fields. */
export function nullableText(value: string): string | null {
  return value === '' ? null : value;
}

const NUMERAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * '' (or only spaces) → null; a numeral → its number; anything else stays
 * text, so the schema reports "Enter a number" instead of this code guessing.
 */
export function nullableNumber(value: string): number | string | null {
  const trimmed = value.trim();
  if (trimmed === '') return null;
  if (!NUMERAL.test(trimmed)) return value;
  const number = Number(trimmed);
  return Number.isFinite(number) ? number : value;
}

const UUID = new RegExp(UUID_PATTERN);

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** A path id that is not a UUID names nothing: the page answers 404 like an unknown id. */
export function pathId(value: string, what: string): string {
  if (!isUuid(value)) throw new errors.NOT_FOUND(`No such ${what}`);
  return value;
}

interface AjvIssue {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

function humanMessage(issue: AjvIssue): string {
  const limit = issue.params.limit;
  switch (issue.keyword) {
    case 'required':
    case 'minLength':
      return 'Enter a value.';
    case 'maxLength':
      return `Use at most ${String(limit)} characters.`;
    case 'pattern':
      if (issue.params.pattern === LABEL_PATTERN) return 'Enter a value.';
      return issue.params.pattern === NO_NUL_PATTERN ? 'Remove the invisible control character.' : 'Enter a valid value.';
    case 'type':
      if (issue.schemaPath.includes('/then/')) return 'Enter both coordinates, or neither.';
      return String(issue.params.type).includes('number') ? 'Enter a number.' : 'Enter a valid value.';
    case 'minimum':
      return `Must be at least ${String(limit)}.`;
    case 'maximum':
      return `Must be at most ${String(limit)}.`;
    case 'exclusiveMinimum':
      return `Must be greater than ${String(limit)}.`;
    case 'exclusiveMaximum':
      return `Must be less than ${String(limit)}.`;
    case 'dependentRequired':
      return 'Enter both coordinates, or neither.';
    case 'format':
      return 'Choose a value from the list.';
    default:
      return issue.message ? `${issue.message[0]!.toUpperCase()}${issue.message.slice(1)}.` : 'Enter a valid value.';
  }
}

/**
 * When a field breaks several rules, the most telling message wins: its own
 * type or range before the pair rule that only follows from the other
 * coordinate, and a format before the bare pattern that repeats it.
 */
function rank(issue: AjvIssue): number {
  if (issue.schemaPath.includes('/then/')) return 2;
  if (issue.keyword === 'pattern' && issue.params.pattern !== LABEL_PATTERN && issue.params.pattern !== NO_NUL_PATTERN) return 1;
  return 0;
}

function fieldOf(issue: AjvIssue): string {
  if (issue.keyword === 'required' || issue.keyword === 'dependentRequired') return String(issue.params.missingProperty);
  return issue.instancePath.split('/').filter(Boolean)[0] ?? 'form';
}

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

/** A validator for one form, compiled once with the API's body validator. */
export function formValidator<T>(schema: TSchema): (data: Record<string, unknown>) => Validated<T> {
  const validate = validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: '/ui' }) as unknown as {
    (data: unknown): boolean;
    errors?: AjvIssue[] | null;
  };
  return (data) => {
    if (validate(data)) return { ok: true, value: data as T };
    const errors: FieldErrors = {};
    // An `if` failure only wraps its `then` failures, which are reported themselves.
    const issues = (validate.errors ?? []).filter((i) => i.keyword !== 'if');
    for (const issue of issues.sort((a, b) => rank(a) - rank(b))) {
      const field = fieldOf(issue);
      errors[field] ??= humanMessage(issue);
    }
    return { ok: false, errors };
  };
}

/** Field errors a service found (a constraint only the database can check), as form messages: "<label> <message>." */
export function serviceFieldErrors(fieldErrors: FieldError[], labels: Record<string, string>): FieldErrors {
  const errors: FieldErrors = {};
  for (const e of fieldErrors) errors[e.field] ??= `${labels[e.field] ?? e.field} ${e.message}.`;
  return errors;
}

/**
 * Runs a service write; a field error only the service or database could find
 * (a location of another organization, say) comes back as form messages
 * instead of being thrown.
 */
export async function fieldErrorsOf(work: () => Promise<unknown>, labels: Record<string, string>): Promise<FieldErrors | undefined> {
  try {
    await work();
    return undefined;
  } catch (error) {
    if (error instanceof ValidationProblem) return serviceFieldErrors(error.fieldErrors, labels);
    throw error;
  }
}

/** The notice for a `?done=` code after a redirect: only texts from `notices`, never text from the URL. */
export function noticeFor(notices: Record<string, string>, done: unknown): string | undefined {
  return typeof done === 'string' && Object.hasOwn(notices, done) ? notices[done] : undefined;
}

/** The submitted values of `names`, as typed, for validation and for showing the form again. */
export function formValues(form: FormBody, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, text(form, name)]));
}

import { validatorCompiler } from '../http/validation.js';
import * as errors from '../errors.js';
import { ValidationProblem } from '../http/problem-details.plugin.js';
import { UUID_PATTERN } from '../http/schemas.js';
import { LABEL_PATTERN, NO_NUL_PATTERN } from '../locations/locations.schemas.js';
/** A submitted field as text ('' when absent or repeated). */
export function text(form, name) {
    const value = form?.[name];
    return typeof value === 'string' ? value : '';
}
/** '' → null, for nullable text fields. */
export function nullableText(value) {
    return value === '' ? null : value;
}
const NUMERAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
/**
 * '' (or only spaces) → null; a numeral → its number; anything else stays
 * text, so the schema reports "Enter a number" instead of this code guessing.
 */
export function nullableNumber(value) {
    const trimmed = value.trim();
    if (trimmed === '')
        return null;
    if (!NUMERAL.test(trimmed))
        return value;
    const number = Number(trimmed);
    return Number.isFinite(number) ? number : value;
}
const UUID = new RegExp(UUID_PATTERN);
export function isUuid(value) {
    return UUID.test(value);
}
/** A path id that is not a UUID names nothing: the page answers 404 like an unknown id. */
export function pathId(value, what) {
    if (!isUuid(value))
        throw new errors.NOT_FOUND(`No such ${what}`);
    return value;
}
function humanMessage(issue) {
    const limit = issue.params.limit;
    switch (issue.keyword) {
        case 'required':
        case 'minLength':
            return 'Enter a value.';
        case 'maxLength':
            return `Use at most ${String(limit)} characters.`;
        case 'pattern':
            if (issue.params.pattern === LABEL_PATTERN)
                return 'Enter a value.';
            return issue.params.pattern === NO_NUL_PATTERN ? 'Remove the invisible control character.' : 'Enter a valid value.';
        case 'type':
            if (issue.schemaPath.includes('/then/'))
                return 'Enter both coordinates, or neither.';
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
            return issue.message ? `${issue.message[0].toUpperCase()}${issue.message.slice(1)}.` : 'Enter a valid value.';
    }
}
/**
 * When a field breaks several rules, the most telling message wins: its own
 * type or range before the pair rule that only follows from the other
 * coordinate, and a format before the bare pattern that repeats it.
 */
function rank(issue) {
    if (issue.schemaPath.includes('/then/'))
        return 2;
    if (issue.keyword === 'pattern' && issue.params.pattern !== LABEL_PATTERN && issue.params.pattern !== NO_NUL_PATTERN)
        return 1;
    return 0;
}
function fieldOf(issue) {
    if (issue.keyword === 'required' || issue.keyword === 'dependentRequired')
        return String(issue.params.missingProperty);
    return issue.instancePath.split('/').filter(Boolean)[0] ?? 'form';
}
/** A validator for one form, compiled once with the API's body validator. */
export function formValidator(schema) {
    const validate = validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: '/ui' });
    return (data) => {
        if (validate(data))
            return { ok: true, value: data };
        const errors = {};
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
export function serviceFieldErrors(fieldErrors, labels) {
    const errors = {};
    for (const e of fieldErrors)
        errors[e.field] ??= `${labels[e.field] ?? e.field} ${e.message}.`;
    return errors;
}
/**
 * Runs a service write; a field error only the service or database could find
 * (a location of another organization, say) comes back as form messages
 * instead of being thrown.
 */
export async function fieldErrorsOf(work, labels) {
    try {
        await work();
        return undefined;
    }
    catch (error) {
        if (error instanceof ValidationProblem)
            return serviceFieldErrors(error.fieldErrors, labels);
        throw error;
    }
}
/** The notice for a `?done=` code after a redirect: only texts from `notices`, never text from the URL. */
export function noticeFor(notices, done) {
    return typeof done === 'string' && Object.hasOwn(notices, done) ? notices[done] : undefined;
}
/** The submitted values of `names`, as typed, for validation and for showing the form again. */
export function formValues(form, names) {
    return Object.fromEntries(names.map((name) => [name, text(form, name)]));
}
//# sourceMappingURL=forms.js.map
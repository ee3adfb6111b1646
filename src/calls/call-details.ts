// What the voice service tells about a call beyond its summary
// (docs/interface.md §12): direction, both numbers, location, recording,
// transcript and its own references. Numbers are read by libphonenumber-js
// with its full metadata (any spelling of a valid number, with its country
// code) and stored in E.164; the rest is checked by the route schema.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { ValidationProblem } from '../http/problem-details.plugin.ts';

export const DIRECTIONS = ['inbound', 'outbound'] as const;
export type Direction = (typeof DIRECTIONS)[number];

export const RECORDING_URL_MAX_LENGTH = 2048;
export const TRANSCRIPT_MAX_LENGTH = 50_000;
export const METADATA_MAX_KEYS = 20;
export const METADATA_KEY_MAX_LENGTH = 40;
export const METADATA_VALUE_MAX_LENGTH = 500;
/** Longer than any spelling of a valid number needs; checked before the phone library reads it. */
export const PHONE_INPUT_MAX_LENGTH = 64;

/** The fields as a request gives them (all optional; null: unknown or withheld). */
export interface CallDetailsInput {
  direction?: Direction | null | undefined;
  from_number?: string | null | undefined;
  to_number?: string | null | undefined;
  location_id?: string | null | undefined;
  recording_url?: string | null | undefined;
  transcript?: string | null | undefined;
  metadata?: Record<string, string> | undefined;
}

export const DETAIL_FIELDS = [
  'direction',
  'from_number',
  'to_number',
  'location_id',
  'recording_url',
  'transcript',
  'metadata',
] as const satisfies readonly (keyof CallDetailsInput)[];

/** The fields given, numbers in E.164; what the statements store (a key left out keeps the stored value). */
export type CallDetails = Partial<Record<(typeof DETAIL_FIELDS)[number], unknown>>;

/**
 * Numbers read lately, by spelling: reading one with the full metadata costs
 * about 40 µs, a fifth of a whole POST /calls, and a voice service sends the
 * same few numbers over and over (its customer's own lines, its regular
 * callers). Bounded; the oldest spelling read goes first.
 */
const E164_MEMO_SIZE = 4096;
const e164Memo = new Map<string, string | null>();

/** A phone number in E.164, or undefined when it is not a valid number with its country code. */
export function toE164(value: string): string | undefined {
  const trimmed = value.trim();
  if (!trimmed.startsWith('+') || trimmed.length > PHONE_INPUT_MAX_LENGTH) return undefined;
  let e164 = e164Memo.get(trimmed);
  if (e164 === undefined) {
    const parsed = parsePhoneNumberFromString(trimmed);
    e164 = parsed?.isValid() ? parsed.number : null;
    if (e164Memo.size >= E164_MEMO_SIZE) e164Memo.delete(e164Memo.keys().next().value!);
    e164Memo.set(trimmed, e164);
  }
  return e164 ?? undefined;
}

/** A number as a query string carries it: a `+` sent unescaped arrives as a space, read as `+` again. */
export function numberFromQuery(field: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const spelled = value.startsWith(' ') ? `+${value.slice(1)}` : value;
  const e164 = toE164(spelled);
  if (e164 === undefined) throw new ValidationProblem([{ field, message: PHONE_RULE }]);
  return e164;
}

const PHONE_RULE = 'must be a valid phone number with its country code, such as +442079460123';

function checkRecordingUrl(value: string): boolean {
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The details a request gave, checked beyond the schema (numbers read and
 * normalised, the recording an https URL); undefined when it gave none, so a
 * request without them keeps its idempotency fingerprint.
 */
export function callDetails(input: CallDetailsInput): CallDetails | undefined {
  const details: CallDetails = {};
  const problems = [];
  for (const field of DETAIL_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    if ((field === 'from_number' || field === 'to_number') && typeof value === 'string') {
      const e164 = toE164(value);
      if (e164 === undefined) problems.push({ field, message: PHONE_RULE });
      details[field] = e164;
    } else if (field === 'recording_url' && typeof value === 'string' && !checkRecordingUrl(value)) {
      problems.push({ field, message: 'must be an https URL' });
    } else {
      details[field] = value;
    }
  }
  if (problems.length) throw new ValidationProblem(problems);
  return Object.keys(details).length > 0 ? details : undefined;
}

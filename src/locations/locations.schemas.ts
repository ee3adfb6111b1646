// Locations (docs/interface.md §2.4). These schemas are the only
// validation of request bodies: every rule a JSON Schema can state is here,
// so the OpenAPI document shows clients exactly what is checked.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** The longest text field of a location or a service area (a CHECK in SQL too). */
export const MAX_TEXT = 200;
/** Coordinates in degrees: latitude within ±LATITUDE_MAX, longitude within ±LONGITUDE_MAX (CHECKs in SQL too). */
export const LATITUDE_MAX = 90;
export const LONGITUDE_MAX = 180;

/**
 * PostgreSQL text cannot hold U+0000, so it is refused here rather than
 * failing in the database. Anchored single-class patterns run in linear time
 * even on a 64 KiB string.
 */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';
/** A label must show something: at least one non-whitespace character. */
export const LABEL_PATTERN = '\\S';

/** A required label: 1 to MAX_TEXT characters, not only whitespace (the service trims it). */
export function Label(description: string) {
  return Type.String({ minLength: 1, maxLength: MAX_TEXT, pattern: LABEL_PATTERN, allOf: [{ pattern: NO_NUL_PATTERN }], description });
}

export function Text(description: string) {
  return Type.String({ maxLength: MAX_TEXT, pattern: NO_NUL_PATTERN, description });
}

export function NullableText(description: string) {
  return Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: MAX_TEXT, pattern: NO_NUL_PATTERN, description });
}

/** A number or null; one `type` array rather than anyOf, so a wrong value yields one clear error. */
export function NullableNumber(range: { minimum?: number; exclusiveMinimum?: number; maximum: number }, description: string) {
  return Type.Unsafe<number | null>({ type: ['number', 'null'], ...range, description });
}

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp' });

export const Location = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    organization_id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    address_line1: Type.String(),
    address_line2: Type.Union([Type.String(), Type.Null()]),
    city: Type.String(),
    state: Type.String(),
    postal_code: Type.String(),
    country: Type.String(),
    latitude: Type.Union([Type.Number(), Type.Null()]),
    longitude: Type.Union([Type.Number(), Type.Null()]),
    is_primary: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Location' },
);
export type Location = Static<typeof Location>;

/** The fields a client writes, in the form's order: the columns an update may set and the web form's inputs. */
export const LOCATION_FIELDS = [
  'name',
  'address_line1',
  'address_line2',
  'city',
  'state',
  'postal_code',
  'country',
  'latitude',
  'longitude',
  'is_primary',
] as const;

const writableFields = {
  name: Label('Label of the location, trimmed'),
  address_line1: Text('Street address'),
  address_line2: NullableText('Apartment, suite, floor'),
  city: Text('City'),
  state: Text('State or region'),
  postal_code: Text('Postal code'),
  country: Text('Country'),
  latitude: NullableNumber({ minimum: -LATITUDE_MAX, maximum: LATITUDE_MAX }, 'Degrees north; given together with longitude'),
  longitude: NullableNumber({ minimum: -LONGITUDE_MAX, maximum: LONGITUDE_MAX }, 'Degrees east; given together with latitude'),
  is_primary: Type.Boolean({ description: "Make this the organization's primary location (clears the previous one)" }),
} satisfies Record<(typeof LOCATION_FIELDS)[number], TSchema>;

/** A number on one side of the pair requires a number on the other; `dependentRequired` makes them travel together. */
function numberRequiresNumber(given: string, other: string): TSchema {
  return Type.Unsafe({
    if: { properties: { [given]: { type: 'number' } }, required: [given] },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, not a thenable.
    then: { properties: { [other]: { type: 'number' } } },
  });
}

const coordinatesPair = {
  additionalProperties: false,
  dependentRequired: { latitude: ['longitude'], longitude: ['latitude'] },
  allOf: [numberRequiresNumber('latitude', 'longitude'), numberRequiresNumber('longitude', 'latitude')],
};

export const LocationCreateBody = Type.Object(
  {
    name: writableFields.name,
    address_line1: Type.Optional(writableFields.address_line1),
    address_line2: Type.Optional(writableFields.address_line2),
    city: Type.Optional(writableFields.city),
    state: Type.Optional(writableFields.state),
    postal_code: Type.Optional(writableFields.postal_code),
    country: Type.Optional(writableFields.country),
    latitude: Type.Optional(writableFields.latitude),
    longitude: Type.Optional(writableFields.longitude),
    is_primary: Type.Optional(writableFields.is_primary),
  },
  { ...coordinatesPair, description: 'Only name is required; latitude and longitude are both numbers or both absent/null.' },
);
export type LocationCreateBody = Static<typeof LocationCreateBody>;

export const LocationPatchBody = Type.Partial(Type.Object(writableFields), {
  ...coordinatesPair,
  minProperties: 1,
  description: 'Partial update: fields left out keep their value; null clears a nullable field. latitude and longitude are sent together.',
});
export type LocationPatchBody = Static<typeof LocationPatchBody>;

export const LocationList = Type.Array(Location);

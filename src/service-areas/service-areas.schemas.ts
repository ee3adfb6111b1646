// Service areas (docs/interface.md §2.5). The only validation of request
// bodies; the OpenAPI document is generated from these same schemas.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { UUID_PATTERN } from '../http/schemas.ts';
import { Label, NullableNumber, NullableText } from '../locations/locations.schemas.ts';

/** The largest radius of a service area, in kilometres (a CHECK in SQL too). */
export const RADIUS_KM_MAX = 20_000;

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp' });
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const ServiceArea = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    organization_id: Type.String({ format: 'uuid' }),
    label: Type.String(),
    area_type: NullableString,
    value: NullableString,
    country: NullableString,
    radius_km: Type.Union([Type.Number(), Type.Null()]),
    location_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'ServiceArea' },
);
export type ServiceArea = Static<typeof ServiceArea>;

/** The fields a client writes, in the form's order: the columns an update may set and the web form's inputs. */
export const SERVICE_AREA_FIELDS = ['label', 'area_type', 'value', 'country', 'radius_km', 'location_id'] as const;

const writableFields = {
  label: Label('Human-readable name (a city, a region, a postal code), trimmed'),
  area_type: NullableText('Free convention, for example city, postal_code or region'),
  value: NullableText('Structured value'),
  country: NullableText('Country code or country name'),
  radius_km: NullableNumber(
    { exclusiveMinimum: 0, maximum: RADIUS_KM_MAX },
    `Radius in kilometres, greater than 0 and at most ${RADIUS_KM_MAX}`,
  ),
  location_id: Type.Unsafe<string | null>({
    type: ['string', 'null'],
    format: 'uuid',
    pattern: UUID_PATTERN,
    description: 'A location of the same organization, or null; cleared when that location is deleted',
  }),
} satisfies Record<(typeof SERVICE_AREA_FIELDS)[number], TSchema>;

export const ServiceAreaCreateBody = Type.Object(
  {
    label: writableFields.label,
    area_type: Type.Optional(writableFields.area_type),
    value: Type.Optional(writableFields.value),
    country: Type.Optional(writableFields.country),
    radius_km: Type.Optional(writableFields.radius_km),
    location_id: Type.Optional(writableFields.location_id),
  },
  { additionalProperties: false, description: 'Only label is required.' },
);
export type ServiceAreaCreateBody = Static<typeof ServiceAreaCreateBody>;

export const ServiceAreaPatchBody = Type.Partial(Type.Object(writableFields), {
  additionalProperties: false,
  minProperties: 1,
  description: 'Partial update: fields left out keep their value; null clears a nullable field.',
});
export type ServiceAreaPatchBody = Static<typeof ServiceAreaPatchBody>;

export const ServiceAreaList = Type.Array(ServiceArea);

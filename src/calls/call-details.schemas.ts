// Schemas of a call's details (call-details.ts), of the fields every call
// answer and event carries with them, and of the filters a subscription and
// /calls/recent take (docs/interface.md §2.3, §4.2, §12).
import { Type } from '@sinclair/typebox';
import { UUID_PATTERN, Uuid } from '../http/schemas.ts';
import {
  DIRECTIONS,
  METADATA_KEY_MAX_LENGTH,
  METADATA_MAX_KEYS,
  METADATA_VALUE_MAX_LENGTH,
  PHONE_INPUT_MAX_LENGTH,
  RECORDING_URL_MAX_LENGTH,
  TRANSCRIPT_MAX_LENGTH,
} from './call-details.ts';
import { DURATION_MAX_SECONDS } from './call-limits.ts';

const Direction = Type.Union(
  DIRECTIONS.map((d) => Type.Literal(d)),
  { description: 'which way the call went' },
);
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description: string) =>
  Type.Optional(Type.Union([schema, Type.Null()], { description }));

const PhoneInput = Type.String({ minLength: 1, maxLength: PHONE_INPUT_MAX_LENGTH });

/** The optional fields of POST /calls and POST /calls/{id}/complete. */
export const CallDetailsProperties = {
  direction: Nullable(Direction, '`inbound` or `outbound`'),
  from_number: Nullable(
    PhoneInput,
    'the caller: a phone number with its country code (a leading +) in any spelling, stored in E.164; null when withheld',
  ),
  to_number: Nullable(PhoneInput, 'the number called, read like from_number'),
  location_id: Nullable(Uuid, 'a location of the organization'),
  recording_url: Nullable(
    Type.String({ minLength: 1, maxLength: RECORDING_URL_MAX_LENGTH }),
    `the recording: an https URL of at most ${RECORDING_URL_MAX_LENGTH} characters`,
  ),
  transcript: Nullable(Type.String({ maxLength: TRANSCRIPT_MAX_LENGTH }), `at most ${TRANSCRIPT_MAX_LENGTH} characters`),
  metadata: Type.Optional(
    Type.Record(Type.String({ minLength: 1, maxLength: METADATA_KEY_MAX_LENGTH }), Type.String({ maxLength: METADATA_VALUE_MAX_LENGTH }), {
      maxProperties: METADATA_MAX_KEYS,
      propertyNames: { minLength: 1, maxLength: METADATA_KEY_MAX_LENGTH },
      description:
        `the voice service's own references: at most ${METADATA_MAX_KEYS} keys of 1 to ${METADATA_KEY_MAX_LENGTH} characters, ` +
        `string values of at most ${METADATA_VALUE_MAX_LENGTH}`,
    }),
  ),
};

const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

/** What every call answer and every call.completed event carries beside the seed's fields (null or {} when unknown). */
export const CallDetailsOutput = {
  direction: Type.Union([Direction, Type.Null()], { description: '`inbound`, `outbound`, or null when not given' }),
  from_number: NullableString('the caller in E.164 (+442079460123); null when withheld or not given'),
  to_number: NullableString('the number called, in E.164'),
  agent_name: NullableString("the agent's name when the call completed (a later rename does not change it)"),
  location_id: Type.Union([Uuid, Type.Null()]),
  location_name: NullableString("the location's name when the call completed"),
  recording_url: NullableString('an https URL of the recording'),
  transcript: NullableString('the transcript'),
  metadata: Type.Record(Type.String(), Type.String(), { description: "the voice service's references; {} when none" }),
  url: Type.String({ description: "the call's page in the web UI" }),
};

const FilterUuid = Type.String({ format: 'uuid', pattern: UUID_PATTERN });

/** Filters of a call.completed subscription; the same names are /calls/recent's query parameters. */
export const FilterProperties = {
  direction: Type.Optional(
    Type.Union([Type.Literal('inbound'), Type.Literal('outbound')], { description: 'only calls that went this way' }),
  ),
  location_id: Type.Optional(Type.Union([FilterUuid], { description: 'only calls of this location' })),
  agent_id: Type.Optional(Type.Union([FilterUuid], { description: 'only calls of this agent' })),
  min_duration_seconds: Type.Optional(
    Type.Integer({ minimum: 0, maximum: DURATION_MAX_SECONDS, description: 'only calls at least this long' }),
  ),
};

export const FiltersSchema = Type.Object(FilterProperties, {
  additionalProperties: false,
  description: 'every filter given must match; {} (or none) lets every call through',
});

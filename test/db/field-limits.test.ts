// A field limit that PostgreSQL enforces with a CHECK constraint is also a
// named constant in TypeScript (the schemas, the CLI, the web forms use it).
// This test reads each bound from the catalog and compares it with its
// constant, so the two cannot drift; and it fails on a bounded column it does
// not know, so a new CHECK comes with its constant.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EMAIL_MAX_LENGTH } from '../../src/organizations/users.queries.ts';
import { RECORDING_URL_MAX_LENGTH, TRANSCRIPT_MAX_LENGTH } from '../../src/calls/call-details.ts';
import { SUMMARY_MAX_LENGTH } from '../../src/calls/call-limits.ts';
import { KEY_MAX_LENGTH } from '../../src/calls/idempotency.ts';
import { NAME_MAX_LENGTH } from '../../src/http/schemas.ts';
import { LATITUDE_MAX, LONGITUDE_MAX, MAX_TEXT } from '../../src/locations/locations.schemas.ts';
import { RADIUS_KM_MAX } from '../../src/service-areas/service-areas.schemas.ts';
import { HOOK_URL_MAX_LENGTH } from '../../src/ssrf/check-hook-url.ts';
import { ALERT_SUBJECT_MAX_LENGTH, DEDUPE_KEY_MAX_LENGTH, SMTP_ANSWER_MAX_LENGTH } from '../../src/alerts/alert.ts';
import { ACTOR_LABEL_MAX_LENGTH, SUBJECT_ID_MAX_LENGTH } from '../../src/audit/audit-events.schemas.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

/** `table.column` → the upper bound its CHECK states, as TypeScript names it. */
const UPPER_BOUNDS: Record<string, number> = {
  'organizations.name': NAME_MAX_LENGTH,
  'users.name': NAME_MAX_LENGTH,
  'users.email': EMAIL_MAX_LENGTH,
  'agents.name': NAME_MAX_LENGTH,
  'oauth_clients.name': NAME_MAX_LENGTH,
  'calls.summary': SUMMARY_MAX_LENGTH,
  'calls.recording_url': RECORDING_URL_MAX_LENGTH,
  'calls.transcript': TRANSCRIPT_MAX_LENGTH,
  'webhook_subscriptions.callback_url': HOOK_URL_MAX_LENGTH,
  'idempotency_keys.key': KEY_MAX_LENGTH,
  'locations.name': MAX_TEXT,
  'locations.address_line1': MAX_TEXT,
  'locations.address_line2': MAX_TEXT,
  'locations.city': MAX_TEXT,
  'locations.state': MAX_TEXT,
  'locations.postal_code': MAX_TEXT,
  'locations.country': MAX_TEXT,
  'locations.latitude': LATITUDE_MAX,
  'locations.longitude': LONGITUDE_MAX,
  'service_areas.label': MAX_TEXT,
  'service_areas.area_type': MAX_TEXT,
  'service_areas.value': MAX_TEXT,
  'service_areas.country': MAX_TEXT,
  'service_areas.radius_km': RADIUS_KM_MAX,
  'alerts.subject_id': ALERT_SUBJECT_MAX_LENGTH,
  'alerts.dedupe_key': DEDUPE_KEY_MAX_LENGTH,
  'alert_emails.last_error': SMTP_ANSWER_MAX_LENGTH,
  'alert_emails.smtp_response': SMTP_ANSWER_MAX_LENGTH,
  'audit_events.actor_label': ACTOR_LABEL_MAX_LENGTH,
  'audit_events.subject_id': SUBJECT_ID_MAX_LENGTH,
};

/** Lower bounds that are limits of their own (a coordinate's range is symmetric). */
const LOWER_BOUNDS: Record<string, number> = {
  'locations.latitude': -LATITUDE_MAX,
  'locations.longitude': -LONGITUDE_MAX,
};

/**
 * Each `column <= N` / `length(column) <= N` (and `>=`) of a constraint as
 * pg_get_constraintdef writes it, e.g.
 * CHECK (((latitude >= ('-90'::integer)::double precision) AND (latitude <= (90)::double precision))).
 */
function bounds(definition: string): { column: string; op: '<=' | '>='; value: number }[] {
  const found = [];
  const pattern = /(?:length\((\w+)\)|\((\w+)) (<=|>=) \(*'?(-?[\d.]+)'?/g;
  for (const match of definition.matchAll(pattern)) {
    found.push({ column: (match[1] ?? match[2])!, op: match[3] as '<=' | '>=', value: Number(match[4]) });
  }
  return found;
}

describe('field limits', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  test('every upper bound a CHECK constraint states is the TypeScript constant of that field', async () => {
    const { rows } = await db.pool.query<{ table: string; definition: string }>(
      `SELECT conrelid::regclass::text AS table, pg_get_constraintdef(oid) AS definition
         FROM pg_constraint WHERE contype = 'c' AND connamespace = 'public'::regnamespace`,
    );
    const upper = new Map<string, number>();
    const lower = new Map<string, number>();
    for (const { table, definition } of rows) {
      for (const { column, op, value } of bounds(definition)) (op === '<=' ? upper : lower).set(`${table}.${column}`, value);
    }
    assert.deepEqual(Object.fromEntries([...upper].sort()), Object.fromEntries(Object.entries(UPPER_BOUNDS).sort()));
    for (const [field, value] of Object.entries(LOWER_BOUNDS)) assert.equal(lower.get(field), value, field);
  });

  test('the bounds are read from a definition as PostgreSQL writes it', () => {
    assert.deepEqual(bounds('CHECK (((length(name) >= 1) AND (length(name) <= 201)))'), [
      { column: 'name', op: '>=', value: 1 },
      { column: 'name', op: '<=', value: 201 },
    ]);
    assert.deepEqual(bounds(`CHECK (((radius_km > (0)::double precision) AND (radius_km <= (20000)::double precision)))`), [
      { column: 'radius_km', op: '<=', value: 20000 },
    ]);
  });
});

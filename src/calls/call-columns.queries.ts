// The columns of a call as every statement of calls returns them, and the
// SQL that writes a call's details (call-details.ts) from one JSON parameter.
// Below both the calls statements and the idempotency keys' (which rebuild an
// answer from the call a key stored).

const CALL_COLUMNS = [
  'id',
  'organization_id',
  'agent_id',
  'status',
  'created_at',
  'completed_at',
  'duration_seconds',
  'summary',
  'direction',
  'from_number',
  'to_number',
  'agent_name',
  'location_id',
  'location_name',
  'recording_url',
  'transcript',
  'metadata',
];

/** A call's columns (of the table aliased `alias`), as every statement of calls returns them. */
export function callColumns(alias = ''): string {
  const of = alias ? `${alias}.` : '';
  return `${CALL_COLUMNS.map((column) => of + column).join(', ')}, app_call_url(${of}id) AS url`;
}

export const COLUMNS = callColumns();

/** The same columns read back by name from `alias`, a statement's CTE that returned COLUMNS (url included). */
export function returnedCallColumns(alias: string): string {
  return [...CALL_COLUMNS, 'url'].map((column) => `${alias}.${column}`).join(', ');
}

/**
 * The details of a new call from `text` (JSON text, call-details.ts: read as
 * jsonb, or taken from `details` when the statement read it already, but
 * metadata as json, which keeps the request's compact spelling), as the values
 * of these columns, in this order: the agent's and location's names are read
 * with them.
 */
export const DETAIL_COLUMNS =
  'direction, from_number, to_number, location_id, recording_url, transcript, metadata, agent_name, location_name';

export function detailValues(text: string, agentId: string, details = `${text}::jsonb`): string {
  const location = `(${details}->>'location_id')::uuid`;
  return `${details}->>'direction', ${details}->>'from_number', ${details}->>'to_number', ${location},
          ${details}->>'recording_url', ${details}->>'transcript', coalesce(${text}::json->'metadata', '{}'::json),
          (SELECT a.name FROM agents a WHERE a.id = ${agentId}), (SELECT l.name FROM locations l WHERE l.id = ${location})`;
}

/**
 * The SET list of a completion: each detail in $N (jsonb) replaces the stored
 * one, a detail left out keeps it; the names are read again, as they are now.
 */
export function completionDetailAssignments(text: string): string {
  const details = `${text}::jsonb`;
  const replaced = (column: string, value: string) =>
    `${column} = CASE WHEN ${details} ? '${column}' THEN ${value} ELSE calls.${column} END`;
  const asText = (column: string) => replaced(column, `${details}->>'${column}'`);
  const location = replaced('location_id', `(${details}->>'location_id')::uuid`);
  return [
    asText('direction'),
    asText('from_number'),
    asText('to_number'),
    location,
    asText('recording_url'),
    asText('transcript'),
    replaced('metadata', `${text}::json->'metadata'`),
    'agent_name = (SELECT a.name FROM agents a WHERE a.id = calls.agent_id)',
    `location_name = (SELECT l.name FROM locations l WHERE l.id = ${location.slice('location_id = '.length)})`,
  ].join(',\n');
}

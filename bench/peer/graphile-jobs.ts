// The load generator's side of the graphile-worker peer (graphile-worker.ts):
// its schema, and a completed call written with one job per subscription in
// one transaction, as Switchboard's outbox writes the call with its deliveries.
import { runMigrations } from 'graphile-worker';
import type { Pool } from '../../src/db/pool.ts';

/** graphile-worker's own schema, and the peer's call and attempt tables. */
export async function setUpPeer(connectionString: string, pool: Pool): Promise<void> {
  await runMigrations({ connectionString, logger: undefined });
  await pool.query(`
    CREATE TABLE peer_calls (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      created_at timestamptz NOT NULL DEFAULT now(),
      summary text NOT NULL,
      duration_seconds int NOT NULL
    );
    CREATE TABLE peer_attempts (
      id bigserial PRIMARY KEY,
      job_id bigint NOT NULL,
      url text NOT NULL,
      status int NOT NULL,
      latency_ms int NOT NULL,
      at timestamptz NOT NULL DEFAULT now()
    )`);
}

/**
 * A completed call and one job per receiver URL, in one statement (its own
 * transaction): the call's row, its event body (Switchboard's fields, id
 * first and no spaces, as the receivers read it) and graphile_worker.add_jobs, which
 * NOTIFYs once. Resolves with the call's id once committed.
 */
export async function completePeerCall(pool: Pool, urls: string[], call: { summary: string; durationSeconds: number }): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    `WITH call AS (
       INSERT INTO peer_calls (summary, duration_seconds) VALUES ($1, $2) RETURNING *
     ), event AS (
       SELECT call.id,
              (SELECT row_to_json(e)::text FROM (
                 SELECT call.id, NULL::uuid AS organization_id, call.created_at, call.summary, call.duration_seconds,
                        NULL::uuid AS agent_id, NULL::text AS direction, NULL::text AS from_number, NULL::text AS to_number,
                        NULL::text AS agent_name, NULL::uuid AS location_id, NULL::text AS location_name,
                        NULL::text AS recording_url, NULL::text AS transcript, NULL::json AS metadata, '/ui/calls/' || call.id AS url
               ) e) AS body
         FROM call
     ), jobs AS (
       SELECT graphile_worker.add_jobs(array_agg(
                ROW('deliver', json_build_object('url', u.url, 'body', event.body), NULL, NULL, NULL, NULL, NULL, NULL)::graphile_worker.job_spec))
         FROM event, unnest($3::text[]) AS u(url)
     )
     SELECT event.id FROM event, (SELECT count(*) FROM jobs) AS j`,
    [call.summary, call.durationSeconds, urls],
  );
  return rows[0]!.id;
}

// The delivery floor's worker (bench/floors/delivery-floor.ts), in its own process:
// the least work a durable outbox in PostgreSQL can do per delivery, not a
// product. One worker, a cap of `cap` in flight per subscription counted in
// this process, bare POSTs (no signature, no SSRF check, no log line), and no
// NOTIFY: it claims again as soon as a slot frees, and polls every 2 ms when
// it finds nothing. `lease` and `lock` keep the product's durability rules (the
// outbox row committed with the call, an outcome written only under its lease,
// an attempt logged per attempt) with as few writes as each can; `nolog` drops
// the attempt log, as a bound:
//
//   lease   the lease is a row update committed before the send (what
//           Switchboard does: it outlives a crash of the worker and is seen
//           by other workers); outcomes go in batches, one statement that
//           releases the lease, marks the delivery done and logs the attempt.
//   lock    the lease is the row lock of an open transaction per batch (no
//           write for it: a crash ends the transaction and frees the rows);
//           the outcomes and the attempt log are written, and the locks
//           released, by that transaction's COMMIT.
//   nolog   `lock` without the attempt log: one update per delivery, a bound
//           below anything that keeps a delivery log.
//
// argv: databaseUrl variant urlsJson cap
// Prints {"ready":true} once connected, then runs until SIGTERM.
import pg from 'pg';
import { Agent, request } from 'undici';

const [databaseUrl, variant, urlsJson, capText] = process.argv.slice(2);
const urls = JSON.parse(urlsJson);
const cap = Number(capText);
const agent = new Agent({ keepAliveTimeout: 60_000 });
const pool = new pg.Pool({ connectionString: databaseUrl, max: urls.length + 4 });
let stopping = false;

async function post(url, body) {
  const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
  await res.body.dump();
  return res.statusCode;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Due deliveries of each subscription in `want` (subscription, how many), locked; the caller leases them or holds the lock. */
const PICK = `SELECT x.id FROM unnest($1::int[], $2::int[]) AS w(sub, n), LATERAL (
    SELECT f.id FROM floor_deliveries f
     WHERE f.subscription = w.sub AND NOT f.done AND f.lease_until IS NULL
     ORDER BY f.id LIMIT w.n FOR UPDATE SKIP LOCKED) x`;

// ---- lease: leases committed before the send, outcomes in group-committed batches
function leaseVariant() {
  const inFlight = urls.map(() => 0);
  const waiting = [];
  let writing = false;
  let claiming = false;
  let again = false;

  async function writeOutcomes() {
    if (writing) return;
    writing = true;
    while (waiting.length > 0) {
      const batch = waiting.splice(0);
      await pool.query({
        name: 'floor_record',
        text: `WITH i AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[]) AS i(id, attempt, status)),
               released AS (UPDATE floor_deliveries d SET done = true, lease_until = NULL
                              FROM i WHERE d.id = i.id AND d.attempts = i.attempt AND d.lease_until IS NOT NULL RETURNING d.id)
               INSERT INTO floor_attempts (delivery_id, attempt, status_code, outcome)
               SELECT i.id, i.attempt, i.status, CASE WHEN r.id IS NULL THEN 'superseded' ELSE 'succeeded' END
                 FROM i LEFT JOIN released r ON r.id = i.id`,
        values: [batch.map((o) => o.id), batch.map((o) => o.attempt), batch.map((o) => o.status)],
      });
      for (const o of batch) inFlight[o.sub]--;
      claim();
    }
    writing = false;
  }

  async function claim() {
    if (claiming) {
      again = true;
      return;
    }
    claiming = true;
    do {
      again = false;
      const subs = [];
      const counts = [];
      inFlight.forEach((n, sub) => {
        if (n < cap) {
          subs.push(sub);
          counts.push(cap - n);
        }
      });
      if (subs.length === 0) break;
      const { rows } = await pool.query({
        name: 'floor_lease',
        text: `UPDATE floor_deliveries d SET lease_until = now() + interval '30 seconds', attempts = d.attempts + 1
                WHERE d.id IN (${PICK}) RETURNING d.id, d.subscription, d.body, d.attempts`,
        values: [subs, counts],
      });
      for (const row of rows) {
        inFlight[row.subscription]++;
        post(urls[row.subscription], row.body).then((status) => {
          waiting.push({ id: row.id, sub: row.subscription, attempt: row.attempts, status });
          void writeOutcomes();
        });
      }
      if (rows.length === 0 && !stopping) {
        await sleep(2);
        again = true;
      }
    } while (again && !stopping);
    claiming = false;
  }
  claim();
}

// ---- lock / nolog: one loop per subscription, the batch's transaction holds the rows while they are sent
function lockVariant(withLog) {
  const loop = async (sub) => {
    const client = await pool.connect();
    await client.query('SET idle_in_transaction_session_timeout = 30000');
    while (!stopping) {
      await client.query('BEGIN');
      const { rows } = await client.query({
        name: 'floor_lock',
        text: `SELECT f.id, f.body, f.attempts + 1 AS attempt FROM floor_deliveries f WHERE f.id IN (${PICK})`,
        values: [[sub], [cap]],
      });
      if (rows.length === 0) {
        await client.query('COMMIT');
        await sleep(2);
        continue;
      }
      const statuses = await Promise.all(rows.map((row) => post(urls[sub], row.body)));
      const values = [rows.map((r) => r.id), rows.map((r) => r.attempt), statuses];
      await client.query(
        withLog
          ? {
              name: 'floor_done_log',
              text: `WITH i AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[]) AS i(id, attempt, status)),
                 done AS (UPDATE floor_deliveries d SET done = true, attempts = i.attempt FROM i WHERE d.id = i.id)
                 INSERT INTO floor_attempts (delivery_id, attempt, status_code, outcome) SELECT id, attempt, status, 'succeeded' FROM i`,
              values,
            }
          : {
              name: 'floor_done',
              text: `UPDATE floor_deliveries d SET done = true, attempts = i.attempt, last_status = i.status
                   FROM unnest($1::bigint[], $2::int[], $3::int[]) AS i(id, attempt, status) WHERE d.id = i.id`,
              values,
            },
      );
      await client.query('COMMIT');
    }
    client.release();
  };
  urls.forEach((_, sub) => void loop(sub));
}

await pool.query('SELECT 1');
if (variant === 'lease') leaseVariant();
else if (variant === 'lock') lockVariant(true);
else if (variant === 'nolog') lockVariant(false);
else throw new Error(`unknown variant ${variant}`);
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
process.on('SIGTERM', () => {
  stopping = true;
  setTimeout(() => process.exit(0), 50);
});

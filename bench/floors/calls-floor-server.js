// The floor of bench:api's POST /calls row (BENCH_ROWS=calls-floor), in its
// own process: the least a durable ingest route can do per call, not a
// product. Fastify with the body schema and nothing else (no credentials, no
// row-level security, no grant test, no log line, no metrics, no NOTIFY);
// each call and its one outbox row are committed before the answer, many
// calls per statement (a group commit: while one batch is on its way the next
// gathers, two at most in flight). The tables are its own (floor_*), one index each.
// argv: port; env: DATABASE_URL.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
await pool.query(`
  DROP TABLE IF EXISTS floor_api_calls, floor_api_deliveries;
  CREATE TABLE floor_api_calls (id uuid PRIMARY KEY, completed_at timestamptz NOT NULL DEFAULT now(), summary text NOT NULL, duration_seconds int NOT NULL);
  CREATE TABLE floor_api_deliveries (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, call_id uuid NOT NULL, body text NOT NULL,
                                     done boolean NOT NULL DEFAULT false);`);

const waiting = [];
let writing = 0;

async function writeLoop() {
  writing++;
  while (waiting.length > 0) {
    const batch = waiting.splice(0, 256);
    try {
      await pool.query({
        name: 'floor_api_ingest',
        text: `WITH i AS (SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[]) AS i(id, summary, duration, body)),
               c AS (INSERT INTO floor_api_calls (id, summary, duration_seconds) SELECT id, summary, duration FROM i)
               INSERT INTO floor_api_deliveries (call_id, body) SELECT id, body FROM i`,
        values: [
          batch.map((b) => b.call.id),
          batch.map((b) => b.call.summary),
          batch.map((b) => b.call.duration_seconds),
          batch.map((b) => b.body),
        ],
      });
      for (const b of batch) b.resolve();
    } catch (error) {
      for (const b of batch) b.reject(error);
    }
  }
  writing--;
}

function store(call, body) {
  return new Promise((resolve, reject) => {
    waiting.push({ call, body, resolve, reject });
    if (writing === 0 || (writing < 2 && waiting.length >= 8)) void writeLoop();
  });
}

const app = Fastify();
app.get('/', async () => ({ ok: true }));
app.post(
  '/calls',
  {
    schema: {
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['summary', 'duration_seconds'],
        properties: { summary: { type: 'string', minLength: 1, maxLength: 10000 }, duration_seconds: { type: 'integer', minimum: 0 } },
      },
    },
  },
  async (request, reply) => {
    const call = { id: randomUUID(), status: 'completed', completed_at: new Date().toISOString(), ...request.body };
    const body = JSON.stringify(call);
    await store(call, body);
    reply.code(201).header('content-type', 'application/json');
    return body;
  },
);
await app.listen({ port: Number(process.argv[2]), host: '127.0.0.1' });

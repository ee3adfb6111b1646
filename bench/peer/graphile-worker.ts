// The peer of bench:delivery: what a Node team would run instead of
// Switchboard's delivery worker, graphile-worker 0.17.3 with its defaults
// (LISTEN/NOTIFY on jobs:insert, 2 s poll), in a process of its own.
// One job per delivery (bench/peer/graphile-jobs.ts enqueues them with the
// call, in one transaction); the task POSTs the body to the receiver over a
// keep-alive undici agent, records the attempt in peer_attempts and returns,
// and graphile-worker marks the job done (a throw: retried with its backoff).
//
// env: DATABASE_URL, PEER_CONCURRENCY (Switchboard's in-flight limit × the
// subscriptions), PEER_POOL (connections; default the concurrency, as
// graphile-worker warns below that),
// NODE_EXTRA_CA_CERTS (the receivers' CA). Prints "peer worker running" once
// it listens; SIGTERM stops it.
import { performance } from 'node:perf_hooks';
import { Logger, run, type Task } from 'graphile-worker';
import { Agent, request } from 'undici';

const agent = new Agent({ allowH2: false });

const deliver: Task = async (payload, helpers) => {
  const { url, body } = payload as { url: string; body: string };
  const started = performance.now();
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher: agent });
  await res.body.dump();
  await helpers.query('INSERT INTO peer_attempts (job_id, url, status, latency_ms) VALUES ($1, $2, $3, $4)', [
    helpers.job.id,
    url,
    res.statusCode,
    Math.round(performance.now() - started),
  ]);
  if (res.statusCode >= 300) throw new Error(`the receiver answered ${res.statusCode}`);
};

// Warnings and errors only, as Switchboard's worker runs in the bench (LOG_LEVEL=warn).
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') process.stderr.write(`${level}: ${message}\n`);
});

const runner = await run({
  connectionString: process.env.DATABASE_URL,
  concurrency: Number(process.env.PEER_CONCURRENCY ?? 50),
  maxPoolSize: Number(process.env.PEER_POOL ?? process.env.PEER_CONCURRENCY ?? 50),
  noHandleSignals: true,
  logger,
  taskList: { deliver },
});
process.once('SIGTERM', () => {
  void runner.stop().then(() => agent.close());
});
process.stdout.write('peer worker running\n');
await runner.promise;

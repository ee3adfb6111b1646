// npx tsx bench/floors/delivery-floor.ts [--calls N --subscriptions M --variants lease,lock,nolog --rounds R]
//
// What the burst of bench:delivery could reach at best on this machine with a
// durable outbox in PostgreSQL: the same load (N calls by 8 clients, each
// call's outbox rows committed with it, M HTTPS receivers, at most 10 in
// flight per subscription) delivered by bench/floors/floor-worker.js, a worker that
// does nothing but the durable minimum (see its header for the variants),
// against the same warmed-up raw undici loop as bench:delivery, in the same run.
// Tables of their own (floor_*): no RLS, no foreign keys, one index each, no
// triggers, no NOTIFY. Each process is its own, as in bench:delivery; the CPU
// line says where each delivery's CPU went.
//
// It is a bound, not a design: if the floor's ratio stays under bench:delivery's
// goal of 0.5 ×, no outbox keeping those rules reaches it here (docs/performance.md).
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { generateTestTls } from '../../test/helpers/tls-certificates.ts';
import { benchDatabase } from '../bench-database.ts';
import { cpuSeconds, postmasterOf, serverCpuSeconds } from '../process-cpu.ts';
import { runRawLoop } from './raw-loop.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '2000' },
    subscriptions: { type: 'string', default: '5' },
    variants: { type: 'string', default: 'lease,lock,nolog' },
    rounds: { type: 'string', default: '1' },
  },
});
const CALLS = Number(args.calls);
const SUBSCRIPTIONS = Number(args.subscriptions);
const CAP = 10;
const CONCURRENCY = SUBSCRIPTIONS * CAP;
const COMPLETERS = 8;
const WARM_UP_CALLS = Math.min(CALLS, 400);

const SCHEMA = `
CREATE TABLE floor_calls (id uuid PRIMARY KEY, completed_at timestamptz NOT NULL DEFAULT now(), summary text NOT NULL);
CREATE TABLE floor_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subscription int NOT NULL,
  call_id uuid NOT NULL,
  body text NOT NULL,
  attempts int NOT NULL DEFAULT 0,
  lease_until timestamptz,
  last_status int,
  done boolean NOT NULL DEFAULT false);
CREATE INDEX floor_deliveries_due ON floor_deliveries (subscription, id) WHERE NOT done;
CREATE TABLE floor_attempts (
  delivery_id bigint NOT NULL, attempt int NOT NULL, status_code int, outcome text NOT NULL,
  attempted_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (delivery_id, attempt));`;

/** A call.completed body of the size Switchboard sends (the same fields). */
function eventBody(id: string, i: number): string {
  return JSON.stringify({
    id,
    organization_id: '6f1c2f4e-8a0b-4c57-9d1e-2b3c4d5e6f70',
    created_at: new Date().toISOString(),
    summary: `Bench call ${i}: customer asked for a visit next week`,
    duration_seconds: 60 + (i % 600),
    agent_id: null,
  });
}

async function main() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-floor-'));
  const database = await benchDatabase();
  const pool = new pg.Pool({ connectionString: database.url, max: COMPLETERS + 2 });
  let targets: ChildProcess | undefined;
  try {
    const tls = await generateTestTls(tmp);
    let receipts = 0;
    let waiter: { count: number; resolve: () => void } | undefined;
    targets = fork(path.join(ROOT, 'bench/delivery-targets.js'), [tls.certPath, tls.keyPath, String(SUBSCRIPTIONS)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [],
    });
    const urls = await new Promise<string[]>((resolve) => {
      targets!.on('message', (message: { type: string; urls?: string[]; items?: unknown[] }) => {
        if (message.type === 'ready') resolve(message.urls!);
        if (message.type !== 'received') return;
        receipts += message.items!.length;
        if (waiter && receipts >= waiter.count) waiter.resolve();
      });
    });
    const receiptsReach = (count: number) =>
      new Promise<void>((resolve) => {
        if (receipts >= count) resolve();
        else waiter = { count, resolve };
      });
    const {
      rows: [backend],
    } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const postmaster = postmasterOf(backend!.pid)!;
    const rawEnv = { PATH: process.env.PATH, NODE_EXTRA_CA_CERTS: tls.caCertPath };
    const bodyBytes = Buffer.byteLength(eventBody(randomUUID(), 1000));

    // The call and its M outbox rows in one statement, committed together (what Switchboard's ingest does, minus RLS and the grant test).
    let callNumber = 0;
    const complete = async () => {
      const id = randomUUID();
      const i = callNumber++;
      await pool.query({
        name: 'floor_ingest',
        text: `WITH c AS (INSERT INTO floor_calls (id, summary) VALUES ($1, $2) RETURNING id)
               INSERT INTO floor_deliveries (subscription, call_id, body) SELECT s, c.id, $3 FROM c, generate_series(0, $4 - 1) s`,
        values: [id, `Bench call ${i}`, eventBody(id, i), SUBSCRIPTIONS],
      });
    };
    const completeTogether = async (count: number) => {
      let left = count;
      await Promise.all(
        Array.from({ length: COMPLETERS }, async () => {
          while (left-- > 0) await complete();
        }),
      );
    };

    const runVariant = async (variant: string) => {
      await pool.query(`DROP TABLE IF EXISTS floor_calls, floor_deliveries, floor_attempts; ${SCHEMA}`);
      const worker = spawn(
        process.execPath,
        [path.join(ROOT, 'bench/floors/floor-worker.js'), database.url, variant, JSON.stringify(urls), String(CAP)],
        {
          cwd: ROOT,
          env: rawEnv,
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      await new Promise<void>((resolve) => worker.stdout!.once('data', () => resolve()));
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      // Warm-up, as bench:delivery's: a burst, then calls one at a time.
      let base = receipts;
      await completeTogether(WARM_UP_CALLS);
      for (let i = 0; i < 20; i++) await complete();
      await receiptsReach(base + (WARM_UP_CALLS + 20) * SUBSCRIPTIONS);
      await pool.query('VACUUM ANALYZE floor_deliveries, floor_attempts, floor_calls');

      base = receipts;
      const cpuBefore = {
        generator: process.cpuUsage(),
        worker: cpuSeconds(worker.pid!),
        receivers: cpuSeconds(targets!.pid!),
        database: serverCpuSeconds(postmaster),
      };
      const started = performance.now();
      await completeTogether(CALLS);
      await receiptsReach(base + CALLS * SUBSCRIPTIONS);
      const elapsedMs = performance.now() - started;
      const deliveries = CALLS * SUBSCRIPTIONS;
      const generatorCpu = process.cpuUsage(cpuBefore.generator);
      const perDelivery = {
        generator: (generatorCpu.user + generatorCpu.system) / 1000 / deliveries,
        worker: ((cpuSeconds(worker.pid!) - cpuBefore.worker) * 1000) / deliveries,
        database: ((serverCpuSeconds(postmaster) - cpuBefore.database) * 1000) / deliveries,
        receivers: ((cpuSeconds(targets!.pid!) - cpuBefore.receivers) * 1000) / deliveries,
      };
      worker.kill('SIGTERM');
      await exited;
      const {
        rows: [check],
      } = await pool.query<{ undone: number }>('SELECT count(*)::int AS undone FROM floor_deliveries WHERE NOT done');
      return { rate: deliveries / (elapsedMs / 1000), perDelivery, check: check! };
    };

    const runRaw = async () => {
      const total = CALLS * SUBSCRIPTIONS;
      let receiversBefore = NaN;
      const result = await runRawLoop(
        urls,
        { total, concurrency: CONCURRENCY, bodyBytes, warmUp: (WARM_UP_CALLS + 20) * SUBSCRIPTIONS },
        rawEnv,
        () => (receiversBefore = cpuSeconds(targets!.pid!)),
      );
      return {
        rate: total / (result.elapsedMs / 1000),
        clientMs: result.cpuMs / total,
        receiversMs: ((cpuSeconds(targets!.pid!) - receiversBefore) * 1000) / total,
      };
    };

    process.stdout.write(
      `bench:delivery-floor — ${CALLS} calls × ${SUBSCRIPTIONS} subscriptions, ${CAP} in flight per subscription; floor worker, receivers, raw loop and load generator in separate processes (Node ${process.version}, ${os.cpus().length} CPUs, ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'})\n`,
    );
    process.stdout.write('CPU ms per delivery: load generator / worker / PostgreSQL / receivers = total\n');
    const fmt = (n: number) => n.toFixed(3);
    for (let round = 0; round < Number(args.rounds); round++) {
      for (const variant of args.variants!.split(',')) {
        const raw = await runRaw();
        const floor = await runVariant(variant);
        const c = floor.perDelivery;
        const total = c.generator + c.worker + c.database + c.receivers;
        process.stdout.write(
          `  ${variant.padEnd(6)} ${floor.rate.toFixed(0).padStart(6)} /s  raw ${raw.rate.toFixed(0).padStart(6)} /s  ratio ${(floor.rate / raw.rate).toFixed(2)}×` +
            `  CPU ${fmt(c.generator)} / ${fmt(c.worker)} / ${fmt(c.database)} / ${fmt(c.receivers)} = ${fmt(total)}` +
            ` (CPUs ${((total * floor.rate) / (os.cpus().length * 10)).toFixed(0)} % busy)` +
            `  raw client ${fmt(raw.clientMs)} receivers ${fmt(raw.receiversMs)}` +
            (floor.check.undone > 0 ? `  UNDELIVERED ${floor.check.undone}` : '') +
            '\n',
        );
      }
    }
  } finally {
    targets?.send({ type: 'close' });
    await pool.end();
    await database.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();

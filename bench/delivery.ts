// npm run bench:delivery [-- --calls N --subscriptions M]
//
// End-to-end webhook delivery on this machine: a real PostgreSQL (DATABASE_URL
// or an embedded one in a temporary directory), M subscriptions each on its own
// local HTTPS target, the real delivery worker (in this process), and N calls
// completed through the calls service. It prints, from the commit of a call to
// the target receiving its delivery:
//   1. idle latency: one call at a time, every delivery received before the next call;
//   2. throughput: all N calls completed as fast as possible (8 at a time);
// and beside them a raw undici POST loop to the same targets (same body, same
// concurrency as the worker may use), the floor that HTTPS on loopback sets.
//
// The CA of the throwaway certificate must be trusted at process start, so the
// script generates it and re-runs itself with NODE_EXTRA_CA_CERTS set.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { createCall } from '../src/calls/calls.service.ts';
import { loadConfig } from '../src/config/config.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createMetrics } from '../src/metrics/metrics.ts';
import { createClient } from '../src/oauth/clients.service.ts';
import { createGrant } from '../src/oauth/tokens.service.ts';
import { insertOrganization } from '../src/orgs/organizations.queries.ts';
import { insertMembership, insertUser } from '../src/orgs/users.queries.ts';
import { startDeliveryWorker } from '../src/webhooks/delivery/worker.ts';
import { createSecretBox } from '../src/webhooks/secret-box.ts';
import { subscribe } from '../src/webhooks/subscriptions.service.ts';
import { generateTestTls } from '../test/helpers/tls-certificates.ts';

const { values: args } = parseArgs({
  options: { calls: { type: 'string', default: '200' }, subscriptions: { type: 'string', default: '5' }, child: { type: 'boolean' } },
});
const CALLS = Number(args.calls);
const SUBSCRIPTIONS = Number(args.subscriptions);
const COMPLETERS = 8;

interface Target {
  url: string;
  close(): Promise<void>;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summarize(label: string, latencies: number[], elapsedMs: number, count: number): string {
  const sorted = [...latencies].sort((a, b) => a - b);
  const ms = (value: number) => `${value.toFixed(1)} ms`.padStart(10);
  return `${label.padEnd(44)} p50 ${ms(percentile(sorted, 50))}  p99 ${ms(percentile(sorted, 99))}  ${(count / (elapsedMs / 1000)).toFixed(0).padStart(6)} /s`;
}

async function startTargets(count: number, cert: Buffer, key: Buffer, onReceive: (body: string, at: number) => void): Promise<Target[]> {
  return Promise.all(Array.from({ length: count }, async () => {
    const server = https.createServer({ cert, key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        onReceive(Buffer.concat(chunks).toString('utf8'), performance.now());
        res.writeHead(204).end();
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `https://127.0.0.1:${port}/hook`,
      close: () => new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    };
  }));
}

async function openDatabase(): Promise<{ url: string; close(): Promise<void> }> {
  if (process.env.DATABASE_URL) {
    const name = `switchboard_bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      async close() {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      },
    };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-'));
  await chmod(dir, 0o755);
  const embedded: EmbeddedPostgres = await startEmbeddedPostgres(dir);
  return {
    url: embedded.url,
    async close() {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function rawLoop(targets: Target[], body: string, total: number, concurrency: number): Promise<{ latencies: number[]; elapsedMs: number }> {
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const index = next++;
      const sent = performance.now();
      const res = await request(targets[index % targets.length]!.url, {
        method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent,
      });
      await res.body.dump();
      latencies.push(performance.now() - sent);
    }
  }));
  const elapsedMs = performance.now() - started;
  await agent.close();
  return { latencies, elapsedMs };
}

async function bench(tlsDir: string) {
  const cert = readFileSync(path.join(tlsDir, 'server.pem'));
  const key = readFileSync(path.join(tlsDir, 'server-key.pem'));
  const config = loadConfig({ ...process.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_ALLOWED_PORTS: '*', SECRET_KEY: randomBytes(32).toString('base64'), DATABASE_URL: '' });
  const database = await openDatabase();
  const pool: Pool = createPool(database.url, 20);
  const committed = new Map<string, number>();
  const received: number[] = [];
  let expected = 0;
  let onAllReceived: (() => void) | undefined;
  const targets = await startTargets(SUBSCRIPTIONS, cert, key, (body, at) => {
    const id = (JSON.parse(body) as { id?: string }).id;
    const start = id ? committed.get(id) : undefined;
    if (start !== undefined) received.push(at - start);
    if (received.length >= expected) onAllReceived?.();
  });
  const allReceived = (count: number) => new Promise<void>((resolve) => {
    expected = count;
    if (received.length >= count) resolve();
    else onAllReceived = resolve;
  });

  try {
    await migrate(pool);
    const org = await insertOrganization(pool, 'Bench Org');
    const client = await createClient(pool, { name: 'Bench Platform', redirectUris: ['https://bench.example/cb'] });
    const secretBox = createSecretBox(config.secretKey!);
    // Subscriptions belong to a live grant (migration 0007): a user of the organization approved the client.
    const user = await insertUser(pool, { email: `bench-${randomUUID()}@example.test`, name: null, passwordHash: 'unused' });
    await insertMembership(pool, org.id, user.id, 'owner');
    const grant = await createGrant(pool, { clientUuid: client.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] });
    const principal = {
      kind: 'oauth' as const, userId: user.id, organizationId: org.id, scopes: ['calls:read'], clientId: client.client_id, grantId: grant.id,
    };
    for (const target of targets) {
      await subscribe({ pool, secretBox, urlCheck: { allowPrivate: true, allowedPorts: '*' } }, principal, { hookUrl: target.url, secret: 'bench-secret' });
    }
    const worker = await startDeliveryWorker({
      pool, databaseUrl: database.url, config, log: pino({ level: 'warn' }), metrics: createMetrics(), secretBox,
    });

    const complete = async (i: number) => {
      const call = await createCall(pool, org.id, { summary: `bench call ${i}`, duration_seconds: i });
      committed.set(call.id, performance.now());
    };
    // Caveat: `committed` is stamped when COMMIT has returned to this process, a few tens of
    // microseconds after PostgreSQL made the row visible, so latencies are, if anything, low by that.

    // Warm-up: connections, TLS sessions, JIT.
    for (let i = 0; i < 5; i++) await complete(i);
    await allReceived(5 * SUBSCRIPTIONS);
    received.length = 0;

    // 1. Idle latency: the worker is idle when each call commits.
    const idleCalls = Math.min(CALLS, 100);
    let started = performance.now();
    for (let i = 0; i < idleCalls; i++) {
      const target = received.length + SUBSCRIPTIONS;
      await complete(i);
      await allReceived(target);
    }
    const idle = { latencies: received.splice(0), elapsedMs: performance.now() - started };

    // 2. Throughput: N calls completed as fast as they commit.
    started = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: COMPLETERS }, async () => {
      while (next < CALLS) await complete(next++);
    }));
    await allReceived(CALLS * SUBSCRIPTIONS);
    const burst = { latencies: received.splice(0), elapsedMs: performance.now() - started };
    await worker.stop();

    // 3. The same POSTs without Switchboard: undici straight to the targets.
    const body = JSON.stringify({ id: randomUUID(), organization_id: org.id, created_at: new Date().toISOString(), summary: 'raw', duration_seconds: 1, agent_id: null });
    const rawSequential = await rawLoop(targets, body, idleCalls * SUBSCRIPTIONS, 1);
    const rawConcurrent = await rawLoop(targets, body, CALLS * SUBSCRIPTIONS, Math.min(64, SUBSCRIPTIONS * 10));

    const lines = [
      `Webhook delivery bench: ${CALLS} calls × ${SUBSCRIPTIONS} subscriptions on local HTTPS targets (Node ${process.version}, ${os.cpus().length} CPUs)`,
      '',
      'commit → receipt (Switchboard, LISTEN/NOTIFY worker):',
      summarize(`  idle, one call at a time (${idle.latencies.length} deliveries)`, idle.latencies, idle.elapsedMs, idle.latencies.length),
      summarize(`  burst, ${COMPLETERS} completers (${burst.latencies.length} deliveries)`, burst.latencies, burst.elapsedMs, burst.latencies.length),
      '',
      'raw undici POST to the same targets (request → response):',
      summarize(`  sequential (${rawSequential.latencies.length} requests)`, rawSequential.latencies, rawSequential.elapsedMs, rawSequential.latencies.length),
      summarize(`  ${Math.min(64, SUBSCRIPTIONS * 10)} concurrent (${rawConcurrent.latencies.length} requests)`, rawConcurrent.latencies, rawConcurrent.elapsedMs, rawConcurrent.latencies.length),
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await Promise.all(targets.map((target) => target.close()));
    await pool.end();
    await database.close();
  }
}

if (args.child) {
  await bench(process.env.SB_BENCH_TLS_DIR!);
} else {
  const tlsDir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-tls-'));
  try {
    const tls = await generateTestTls(tlsDir);
    const child = spawn(process.execPath, ['--import', 'tsx', process.argv[1]!, '--child', ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, NODE_EXTRA_CA_CERTS: tls.caCertPath, SB_BENCH_TLS_DIR: tlsDir },
    });
    process.exitCode = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  } finally {
    await rm(tlsDir, { recursive: true, force: true });
  }
}

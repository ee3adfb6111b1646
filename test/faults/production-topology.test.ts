import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/webhooks.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import {
  deliveredBy,
  fleetEnv,
  loadCalls,
  seedTenant,
  startServe,
  startWorkerProcess,
  stopProcess,
  waitUntilSettled,
  type Served,
  type Tenant,
  type WorkerProcess,
} from '../helpers/fleet.ts';

const REDIS_URL = process.env.REDIS_URL;
const SKIP = REDIS_URL
  ? false
  : 'REDIS_URL is not set: the production topology shares its rate limits through Redis (CI runs it on the machine’s PostgreSQL and Redis)';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SUBSCRIPTIONS = 2;

// The production topology (docs/operations.md, "Running in production"): two
// `serve --no-worker` API processes and two `worker` processes on one
// PostgreSQL and one Redis. Calls are ingested through both APIs while one
// worker and one API process are killed with SIGKILL and started again.
describe('production topology: 2 × serve --no-worker, 2 × worker, kill -9 under load', { skip: SKIP }, () => {
  let db: TestDatabase;
  let target: HttpsTarget;
  let apis: Served[] = [];
  let workers: WorkerProcess[] = [];
  let tenant: Tenant;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    db = await createTestDatabase();
    // A little latency, so attempts are in flight when a worker dies.
    target = await startHttpsTarget(() => ({ status: 204, delayMs: 30 }));
    // Attempts time out well after the 5 s the receiver holds them below, so the held ones are still in flight at the
    // kill: a held attempt that timed out first would be retried by its own worker and arrive twice legitimately.
    env = fleetEnv(db.url, { REDIS_URL: REDIS_URL!, RATE_LIMIT: '6/min', WEBHOOK_TIMEOUT_MS: '15000' });
    apis = await Promise.all([startServe(env, ['--no-worker']), startServe(env, ['--no-worker'])]);
    workers = await Promise.all([startWorkerProcess(env), startWorkerProcess(env)]);
    tenant = await seedTenant(db.url, apis[0]!.url, (i) => `${target.url}/hooks/topology-${i}`, SUBSCRIPTIONS);
  });
  after(async () => {
    await Promise.all([...apis, ...workers].map((p) => stopProcess(p, 'SIGKILL')));
    await tenant?.close();
    await target?.close();
    await db?.drop();
  });

  test('a worker serves /healthz, /readyz and /metrics on WORKER_PORT', async () => {
    const worker = workers[0]!;
    assert.equal((await fetch(`${worker.url}/healthz`)).status, 200);
    const ready = await fetch(`${worker.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready' });
    const metrics = await fetch(`${worker.url}/metrics`);
    assert.equal(metrics.status, 200);
    const text = await metrics.text();
    assert.match(text, /switchboard_webhook_delivery_attempts_total/);
    assert.match(text, /switchboard_webhook_deliveries_queued\{state="pending"\} \d+/);
    // Nothing tenant-facing on the worker's port.
    assert.equal((await fetch(`${worker.url}/calls`, { method: 'POST' })).status, 404);
  });

  test('rate limits are shared through Redis by both API processes', async () => {
    const member = await createMember(tenant.pool);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await fetch(`${apis[i % 2]!.url}/locations`, { headers: { 'x-user-token': member.token } });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429]);
  });

  test('every accepted call reaches every subscription; a duplicate only for an attempt in flight at the kill, with the same delivery id', async () => {
    const live = () => apis.map((api) => api.url);
    const load = loadCalls(live, tenant.token, 4);
    await sleep(1500);

    // The killed worker has an attempt in flight: the other worker is paused (SIGSTOP), so a request
    // arriving a moment later comes from the one to be killed; its answer is held until after the kill.
    const killedApi = apis[1]!.url;
    workers[1]!.child.kill('SIGSTOP');
    const cutoff = Date.now() + 200;
    target.respond((request) => ({ status: 204, delayMs: request.receivedAt.getTime() > cutoff ? 5000 : 30 }));
    const held = await waitFor(
      'an attempt of the worker to be killed',
      async () => target.requests.find((request) => request.receivedAt.getTime() > cutoff),
      30_000,
    );
    const heldDelivery = String(held.headers['x-delivery-id']);
    await Promise.all([stopProcess(workers[0]!, 'SIGKILL'), stopProcess(apis[1]!, 'SIGKILL')]);
    workers[1]!.child.kill('SIGCONT');
    target.respond(() => ({ status: 204, delayMs: 30 }));
    await sleep(500);
    const [worker, api] = await Promise.all([startWorkerProcess(env), startServe(env, ['--no-worker'])]);
    workers[0] = worker;
    apis[1] = api;
    await sleep(1500);
    await load.stop();

    // Only the killed process's address failed (no answer at all); every answer is a 201.
    const refused = load.answers.filter((answer) => answer.status !== 201);
    assert.deepEqual(
      refused.filter((answer) => answer.status !== 0 || answer.via !== killedApi),
      [],
      JSON.stringify(refused.slice(0, 5)),
    );
    const accepted = load.answers.flatMap((answer) => (answer.callId ? [answer.callId] : []));
    assert.ok(accepted.length > 20, `only ${accepted.length} calls accepted`);
    const acceptedVia = new Set(load.answers.filter((answer) => answer.callId).map((answer) => answer.via));
    assert.ok(acceptedVia.size >= 2, 'calls were accepted by more than one API process');

    // Deliveries claimed by the killed worker come back after their lease.
    await waitUntilSettled(tenant.pool, tenant.subscriptionIds, 90_000);
    const received = deliveredBy(target.requests);
    const perDelivery = new Map<string, number>();
    for (const request of target.requests) {
      const id = String(request.headers['x-delivery-id']);
      perDelivery.set(id, (perDelivery.get(id) ?? 0) + 1);
    }
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const calls = received.get(`/hooks/topology-${i}`) ?? new Map<string, Set<string>>();
      const missing = accepted.filter((id) => !calls.has(id));
      assert.deepEqual(missing, [], `subscription ${i}: ${missing.length} of ${accepted.length} accepted calls not delivered`);
      for (const [callId, deliveryIds] of calls) assert.equal(deliveryIds.size, 1, `call ${callId} arrived under several delivery ids`);
    }

    // A repeat is an attempt whose lease ran out: one the killed worker had in flight (logged
    // lease_expired, then sent again), or one the paused worker sent before SIGSTOP and recorded after
    // SIGCONT, when a pause longer than its lease let another worker take the delivery over (its late
    // outcome replaces the lease_expired placeholder and is logged superseded).
    const repeated = [...perDelivery].filter(([, count]) => count > 1).map(([id]) => id);
    const { rows: lost } = await tenant.pool.query<{ delivery_id: string }>(
      `SELECT DISTINCT delivery_id FROM webhook_attempts
        WHERE subscription_id = ANY($1::uuid[]) AND (error = 'lease_expired' OR outcome = 'superseded')`,
      [tenant.subscriptionIds],
    );
    const lostAtKill = new Set(lost.map((row) => row.delivery_id));
    assert.ok(
      lostAtKill.has(heldDelivery) && repeated.includes(heldDelivery),
      'the attempt in flight at the kill was lost, then sent again',
    );
    assert.deepEqual(
      repeated.filter((id) => !lostAtKill.has(id)),
      [],
      'every repeated delivery had an attempt whose lease ran out',
    );
    process.stdout.write(
      `# ${accepted.length} calls accepted × ${SUBSCRIPTIONS} subscriptions; ${repeated.length} deliveries repeated after the kill\n`,
    );
  });
});

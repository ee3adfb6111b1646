import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { workerDrainMs } from '../../src/server.ts';
import { HANDED_BACK_MESSAGE } from '../../src/webhooks/worker/hand-back.queries.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
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
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { completeCall, connectPlatform, deliveriesOf, settled, subscribeHook, WEBHOOK_TEST_ENV } from '../helpers/webhooks.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// SIGTERM under load: the process stops taking work, lets running attempts
// finish within its drain time and hands the rest back (lease released, due
// now) so another worker sends them at once, drains HTTP and exits cleanly
// within SHUTDOWN_TIMEOUT.
describe('graceful stop of a worker with attempts in flight', () => {
  let t: TestApp;
  let target: HttpsTarget;
  const workers: WorkerProcess[] = [];

  before(async () => {
    t = await startTestApp({ env: WEBHOOK_TEST_ENV });
    target = await startHttpsTarget();
  });
  after(async () => {
    await Promise.all(workers.map((worker) => stopProcess(worker, 'SIGKILL')));
    await target.close();
    await t.close();
  });

  test('SIGTERM: finished attempts recorded, hanging ones handed back at once, exit 0 within SHUTDOWN_TIMEOUT; another worker delivers them', async () => {
    const hang = '/first-attempt-hangs';
    const fast = '/answers';
    target.respond((request) => (request.url === hang && request.headers['x-delivery-attempt'] === '1' ? { hang: true } : { status: 200 }));
    const org = await connectPlatform(t);
    const hangHook = await subscribeHook(t, org, { hookUrl: `${target.url}${hang}` });
    const fastHook = await subscribeHook(t, org, { hookUrl: `${target.url}${fast}` });
    // A 20 s time-out gives a 30 s lease: waiting for it to expire is what must not happen.
    const env = fleetEnv(t.db.url, {
      ...WEBHOOK_TEST_ENV,
      WEBHOOK_TIMEOUT_MS: '20000',
      SHUTDOWN_TIMEOUT: '5s',
      SECRET_KEY: t.config.secretKey!.toString('base64'),
    });
    const first = await startWorkerProcess(env);
    workers.push(first);
    const calls = 5;
    for (let i = 0; i < calls; i++) await completeCall(t, org.member, { summary: `graceful ${i}` });
    await settled(t, fastHook.id, calls, 15_000);
    await target.waitForRequests(calls * 2, 15_000);

    // A second worker, idle: its next look of its own is 30 s away (the safety poll).
    const second = await startWorkerProcess(env);
    workers.push(second);
    const stoppedAt = Date.now();
    first.child.kill('SIGTERM');
    const code = await first.exited;
    const tookMs = Date.now() - stoppedAt;
    // Exit 0 is the clean exit: SHUTDOWN_TIMEOUT's forced one is exit 1, with its own line.
    assert.equal(code, 0, `a clean exit, not the SHUTDOWN_TIMEOUT's forced one:\n${first.output()}`);
    assert.doesNotMatch(first.output(), /did not finish within SHUTDOWN_TIMEOUT/);
    // The hanging attempts had their drain time before they were handed back.
    assert.ok(tookMs >= workerDrainMs(5000), `stopped after the drain time of ${workerDrainMs(5000)} ms (took ${tookMs} ms)`);

    // No lease left to expire: every hanging attempt was handed back and is on record as lost.
    // (the second worker may already hold some of them again: then under a new lease, at attempt 2)
    const { rows: lost } = await t.db.pool.query(
      `SELECT attempt, error, error_message, outcome FROM webhook_attempts WHERE subscription_id = $1 AND attempt = 1`,
      [hangHook.id],
    );
    assert.deepEqual(
      lost,
      Array(calls).fill({ attempt: 1, error: 'lease_expired', error_message: HANDED_BACK_MESSAGE, outcome: 'retrying' }),
    );

    // The idle worker is told (NOTIFY) and takes them right away; their lease would have lasted 30 s.
    const deliveries = await settled(t, hangHook.id, calls, 15_000);
    assert.ok(deliveries.every((delivery) => delivery.status === 'succeeded' && delivery.attempts === 2));
    const resent = target.requests.filter((request) => request.url === hang && request.headers['x-delivery-attempt'] === '2');
    assert.deepEqual(
      new Set(resent.map((r) => r.headers['x-delivery-id'])),
      new Set(deliveries.map((d) => d.id)),
      'sent again under the same delivery ids',
    );
    assert.equal(
      (await deliveriesOf(t, fastHook.id)).filter((d) => d.attempts !== 1).length,
      0,
      'finished attempts were recorded, not handed back',
    );
  });
});

describe('graceful stop of serve under HTTP load', () => {
  let db: TestDatabase;
  let target: HttpsTarget;
  let served: Served | undefined;
  let worker: WorkerProcess | undefined;
  let tenant: Tenant;

  before(async () => {
    db = await createTestDatabase();
    target = await startHttpsTarget(() => ({ status: 204 }));
  });
  after(async () => {
    if (served) await stopProcess(served, 'SIGKILL');
    if (worker) await stopProcess(worker, 'SIGKILL');
    await tenant?.close();
    await target.close();
    await db.drop();
  });

  test('SIGTERM: no 500, exit 0 within SHUTDOWN_TIMEOUT, every accepted call delivered', async () => {
    const env = fleetEnv(db.url, { SHUTDOWN_TIMEOUT: '5s' });
    served = await startServe(env);
    tenant = await seedTenant(db.url, served.url, () => `${target.url}/hooks/graceful`);
    const load = loadCalls(() => [served!.url], tenant.token, 4);
    await sleep(1000);
    served.child.kill('SIGTERM');
    const code = await served.exited;
    await load.stop();
    // Exit 0 is the clean exit: SHUTDOWN_TIMEOUT's forced one is exit 1, with its own line.
    assert.equal(code, 0, served.output());
    assert.doesNotMatch(served.output(), /did not finish within SHUTDOWN_TIMEOUT/);

    const answered = load.answers.filter((answer) => answer.status !== 0);
    assert.deepEqual(
      answered.filter((answer) => answer.status !== 201 && answer.status !== 503),
      [],
      'only 201, or 503 while closing',
    );
    const accepted = answered.flatMap((answer) => (answer.callId ? [answer.callId] : []));
    assert.ok(accepted.length > 0);

    // What the stopped process had not delivered yet waits in the queue for the next worker.
    worker = await startWorkerProcess(env);
    await waitUntilSettled(tenant.pool, tenant.subscriptionIds, 30_000);
    const delivered = deliveredBy(target.requests).get('/hooks/graceful') ?? new Map();
    assert.deepEqual(
      accepted.filter((id) => !delivered.has(id)),
      [],
      'every accepted call delivered',
    );
  });
});

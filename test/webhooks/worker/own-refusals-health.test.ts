// An attempt the service refuses itself says nothing about the endpoint
// (endpoint-health.ts, health 'none'): a URL its own address or port checks
// block, a stored URL of a shape it no longer sends to, a fault of its own
// before sending (a secret no key opens). Such attempts fail the delivery as
// usual, but never cut the endpoint's concurrency, open its circuit or mark it
// slow; only the receiver's own failures do (the control: a port nothing
// listens on).
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../../helpers/app.ts';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';
import {
  completeCall,
  connectPlatform,
  settled,
  startTestWorker,
  startWebhookApp,
  subscribeHook,
  waitFor,
} from '../../helpers/webhooks.ts';
import { BREAKER_THRESHOLD } from '../../../src/webhooks/worker/endpoint-health.ts';
import type { DeliveryWorker } from '../../../src/webhooks/worker/worker.ts';

/** Every attempt is retried at once three times: four attempts a delivery, more than the circuit's threshold over two. */
const RETRIES = '20ms,20ms,20ms';
const ATTEMPTS_PER_DELIVERY = 4;
const DELIVERIES = 2;

const HEALTH = 'answered, consecutive_failures, concurrency_limit, slow, circuit_state, circuit_retry_at, circuit_opens';

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("the service's own refusals and endpoint health", () => {
  let t: TestApp;
  let target: HttpsTarget;
  let worker: DeliveryWorker | undefined;
  before(async () => {
    t = await startWebhookApp({ WEBHOOK_RETRY_SCHEDULE: RETRIES });
    target = await startHttpsTarget();
  });
  after(async () => {
    await worker?.stop();
    await target.close();
    await t.close();
  });

  const health = async (id: string) => (await t.db.pool.query(`SELECT ${HEALTH} FROM webhook_subscriptions WHERE id = $1`, [id])).rows[0];

  test('blocked_address, blocked_port, invalid_url and internal fail their deliveries and leave the endpoint healthy', async () => {
    const org = await connectPlatform(t);
    // Subscribed while private targets and any port are allowed; the worker below allows neither.
    const hooks = {
      blocked_address: await subscribeHook(t, org, { hookUrl: `https://127.0.0.1/blocked-address` }),
      blocked_port: await subscribeHook(t, org, { hookUrl: `${target.url}/blocked-port` }),
      invalid_url: await subscribeHook(t, org, { hookUrl: `${target.url}/invalid-url` }),
      internal: await subscribeHook(t, org, { hookUrl: `https://127.0.0.1/internal` }),
    };
    // Stored before the rules changed (fixture): a plain-http URL, and a secret sealed under a key long gone.
    await t.db.pool.query("UPDATE webhook_subscriptions SET callback_url = 'http://127.0.0.1/invalid-url' WHERE id = $1", [
      hooks.invalid_url.id,
    ]);
    await t.db.pool.query("UPDATE webhook_subscriptions SET secret_ciphertext = decode(repeat('5a', 60), 'hex') WHERE id = $1", [
      hooks.internal.id,
    ]);
    const before = new Map<string, unknown>();
    for (const hook of Object.values(hooks)) before.set(hook.id, await health(hook.id));

    worker = await startTestWorker(t, { config: { ...t.config, webhookAllowPrivateTargets: false, webhookAllowedPorts: [443] } });
    for (let i = 0; i < DELIVERIES; i++) await completeCall(t, org.member, { summary: `refused ${i}` });
    for (const [error, hook] of Object.entries(hooks)) {
      const deliveries = await settled(t, hook.id, DELIVERIES, 20_000);
      assert.ok(
        deliveries.every((d) => d.status === 'failed' && d.attempts === ATTEMPTS_PER_DELIVERY),
        `${error}: ${JSON.stringify(deliveries)}`,
      );
      const { rows } = await t.db.pool.query<{ error: string; status_code: number | null }>(
        'SELECT error, status_code FROM webhook_attempts WHERE subscription_id = $1',
        [hook.id],
      );
      assert.equal(rows.length, DELIVERIES * ATTEMPTS_PER_DELIVERY);
      assert.ok(
        rows.every((r) => r.error === error && r.status_code === null),
        `${error}: ${JSON.stringify(rows)}`,
      );
      assert.deepEqual(await health(hook.id), before.get(hook.id), `${error}: the endpoint's health is as it was`);
    }
    assert.deepEqual(target.requests, [], 'nothing was sent');
    await worker.stop();
    worker = undefined;

    // The control: the receiver's own failure (nothing listens) counts, and opens the circuit.
    worker = await startTestWorker(t);
    const refused = await subscribeHook(t, org, { hookUrl: `https://127.0.0.1:${await closedPort()}/nothing-listens` });
    for (let i = 0; i < DELIVERIES; i++) await completeCall(t, org.member, { summary: `unanswered ${i}` });
    const counted = await waitFor(
      'the unanswered endpoint to open its circuit',
      async () => {
        const row = await health(refused.id);
        return row.circuit_opens > 0 ? row : undefined;
      },
      20_000,
    );
    assert.ok(counted.consecutive_failures >= BREAKER_THRESHOLD, JSON.stringify(counted));
    assert.equal(counted.concurrency_limit, 1, JSON.stringify(counted));
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';
import type { TestApp } from '../../helpers/app.ts';
import {
  completeCall,
  connectPlatform,
  settled,
  startTestWorker,
  startWebhookApp,
  subscribeHook,
  type Connection,
} from '../../helpers/webhooks.ts';
import type { Pool } from '../../../src/db/pool.ts';
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION } from '../../../src/webhooks/worker/endpoint-health.ts';
import type { DeliveryWorker } from '../../../src/webhooks/worker/worker.ts';

// A completed call's NOTIFY names its subscriptions. A worker already running
// as many attempts of each named subscription as the cap allows cannot lease
// anything of theirs, so it skips the claim (a slow receiver used to cost an
// empty claim per completed call); their work is claimed once its attempts end.
describe('a notification for a subscription this worker holds at its cap', () => {
  let t: TestApp;
  let slow: HttpsTarget;
  let fast: HttpsTarget;
  let worker: DeliveryWorker;
  let claims = 0;
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));

  before(async () => {
    t = await startWebhookApp();
    // The slow receiver answers nothing until the test opens the gate.
    slow = await startHttpsTarget(async () => {
      await gate;
      return { status: 204 };
    });
    fast = await startHttpsTarget(() => ({ status: 204 }));
    // Claims borrow a client with connect() and no arguments (pool.query passes a callback).
    const pool = new Proxy(t.db.pool, {
      get(target, property, receiver) {
        if (property === 'connect') {
          return (...args: unknown[]) => {
            if (args.length === 0) claims++;
            return (target.connect as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Pool;
    // Attempts outlast the test (the gate ends them), and the safety poll never comes.
    worker = await startTestWorker(t, {
      pool,
      pollIntervalMs: 600_000,
      config: { ...t.config, webhookTimeoutMs: 60_000 },
    });
  });
  after(async () => {
    release();
    await worker.stop();
    await slow.close();
    await fast.close();
    await t.close();
  });

  test('skips the claim, and the work is delivered once the held attempts end', async () => {
    const busy: Connection = await connectPlatform(t);
    const other: Connection = await connectPlatform(t);
    const slowHook = await subscribeHook(t, busy, { hookUrl: `${slow.url}/held` });
    const fastHook = await subscribeHook(t, other, { hookUrl: `${fast.url}/free` });

    for (let i = 0; i < MAX_IN_FLIGHT_PER_SUBSCRIPTION; i++) await completeCall(t, busy.member);
    await slow.waitForRequests(MAX_IN_FLIGHT_PER_SUBSCRIPTION);
    const before = claims;

    const more = 20;
    for (let i = 0; i < more; i++) await completeCall(t, busy.member);
    // Notifications arrive in commit order: once the other organization's call
    // is delivered, the worker has read every notification before it.
    await completeCall(t, other.member);
    await fast.waitForRequests(1);
    // The other organization's call costs a claim, and its claim finds the
    // held subscription's due work and looks once more (then once a second
    // while it stays blocked); each of the twenty notifications before it
    // cost a claim before (22 in all, measured with the skip disabled).
    assert.ok(
      claims - before < more / 4,
      `${claims - before} claims for ${more} notifications of a capped subscription and one of a free one`,
    );
    assert.equal(slow.requests.length, MAX_IN_FLIGHT_PER_SUBSCRIPTION, 'the cap still holds');

    release();
    const delivered = await settled(t, slowHook.id, MAX_IN_FLIGHT_PER_SUBSCRIPTION + more, 20_000);
    assert.ok(delivered.every((d) => d.status === 'succeeded'));
    assert.equal((await settled(t, fastHook.id, 1))[0]!.status, 'succeeded');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';
import type { TestApp } from '../../helpers/app.ts';
import {
  completeCall,
  connectPlatform,
  deliveriesOf,
  settled,
  startTestWorker,
  startWebhookApp,
  subscribeHook,
  waitFor,
} from '../../helpers/webhooks.ts';
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION } from '../../../src/webhooks/worker/endpoint-health.ts';
import type { DeliveryWorker } from '../../../src/webhooks/worker/worker.ts';

describe('claiming deliveries', () => {
  let t: TestApp;
  let target: HttpsTarget;
  const workers: DeliveryWorker[] = [];

  before(async () => {
    // Long enough that the held attempts never time out (and go again) while a
    // loaded machine runs the rest of the test: the cap is counted in requests.
    t = await startWebhookApp({ WEBHOOK_TIMEOUT_MS: '30000' });
    target = await startHttpsTarget();
    // Two workers in one process compete for the same rows, like two processes would.
    workers.push(await startTestWorker(t), await startTestWorker(t));
  });
  after(async () => {
    await target.close();
    await Promise.all(workers.map((worker) => worker.stop()));
    await t.close();
  });

  test('at most 10 deliveries of one subscription are in flight, across workers; the rest wait for a free slot', async () => {
    const slow = '/slow';
    const release: (() => void)[] = [];
    target.respond((request) =>
      request.url === slow ? new Promise((resolve) => release.push(() => resolve({ status: 200 }))) : { status: 200 },
    );
    const org = await connectPlatform(t);
    const slowHook = await subscribeHook(t, org, { hookUrl: `${target.url}${slow}` });
    for (let i = 0; i < 15; i++) await completeCall(t, org.member);
    await target.waitForRequests(MAX_IN_FLIGHT_PER_SUBSCRIPTION);

    // Barrier: another subscription's delivery goes through, so both workers have run rounds since.
    const other = await connectPlatform(t);
    const fastHook = await subscribeHook(t, other, { hookUrl: `${target.url}/fast` });
    await completeCall(t, other.member);
    await settled(t, fastHook.id, 1);

    assert.equal(target.requests.filter((r) => r.url === slow).length, MAX_IN_FLIGHT_PER_SUBSCRIPTION);
    const waiting = (await deliveriesOf(t, slowHook.id)).filter((d) => d.attempts === 0);
    assert.equal(waiting.length, 5);

    for (const answer of release.splice(0)) answer();
    const done = await waitFor('the slow hook to drain', async () => {
      for (const answer of release.splice(0)) answer();
      const rows = await deliveriesOf(t, slowHook.id);
      return rows.every((d) => d.status === 'succeeded') ? rows : undefined;
    });
    assert.equal(done.length, 15);
    assert.equal(target.requests.filter((r) => r.url === slow).length, 15);
  });

  test('five days of only failures disable a subscription; enabling it resumes its paused delivery', async () => {
    const path = '/failing';
    target.respond((request) => (request.url === path ? { status: 500 } : { status: 200 }));
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}` });
    // The hook has been failing for six days already.
    await t.db.pool.query("UPDATE webhook_subscriptions SET failing_since = now() - interval '6 days' WHERE id = $1", [hook.id]);
    await completeCall(t, org.member);
    const headers = { 'x-user-token': org.member.token };
    const disabled = await waitFor('the hook to be disabled', async () => {
      const view = (await t.app.inject({ url: `/webhooks/${hook.id}`, headers })).json();
      return view.status === 'disabled' ? view : undefined;
    });
    assert.ok(Date.parse(disabled.disabled_at) > Date.now() - 60_000);
    const [paused] = await deliveriesOf(t, hook.id);
    assert.equal(paused!.status, 'pending');
    assert.equal(paused!.attempts, 1, 'nothing is sent to a disabled hook');

    await completeCall(t, org.member);
    assert.equal((await deliveriesOf(t, hook.id)).length, 1, 'a disabled hook gets no new deliveries');
    const refused = await t.app.inject({ method: 'POST', url: `/webhooks/deliveries/${paused!.id}/redeliver`, headers });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().code, 'WEBHOOK_SUBSCRIPTION_DISABLED');

    target.respond(() => ({ status: 200 }));
    const enabled = await t.app.inject({ method: 'POST', url: `/webhooks/${hook.id}/enable`, headers });
    assert.equal(enabled.statusCode, 200);
    assert.equal(enabled.json().status, 'active');
    assert.equal(enabled.json().disabled_at, null);
    assert.equal(enabled.json().failing_since, null);
    const [resumed] = await settled(t, hook.id, 1);
    assert.equal(resumed!.status, 'succeeded');
  });
});

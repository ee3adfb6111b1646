import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';
import type { TestApp } from '../../helpers/app.ts';
import {
  attemptsOf,
  claimDueDeliveries,
  completeCall,
  connectPlatform,
  deliveriesOf,
  startWebhookApp,
  subscribeHook,
} from '../../helpers/webhooks.ts';
import { attemptDelivery, type AttemptDeps } from '../../../src/webhooks/worker/attempt.ts';
import { createSecretBox } from '../../../src/crypto/secret-box.ts';

// The claim → attempt → record steps driven one by one (no worker loop), to
// show what the lease token protects.
describe('one attempt under a lease', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let deps: AttemptDeps;

  before(async () => {
    t = await startWebhookApp();
    target = await startHttpsTarget();
    deps = {
      pool: t.db.pool,
      secretBox: createSecretBox(t.config.secretKey!),
      metrics: t.app.metrics,
      log: pino({ level: 'silent' }),
      timeoutMs: t.config.webhookTimeoutMs,
      allowPrivate: true,
      allowedPorts: '*',
      retryScheduleMs: t.config.webhookRetryScheduleMs,
    };
  });
  after(async () => {
    await target.close();
    await t.close();
  });

  const later = () => performance.now() + 60_000;

  test('a worker whose lease ran out records its attempt as superseded and changes nothing; the new holder decides', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/lease` });
    await completeCall(t, org.member);

    const [stale] = await claimDueDeliveries(t.db.pool, { limit: 1, leaseMs: 1 });
    assert.equal(stale!.attempt, 1);
    await new Promise((resolve) => setTimeout(resolve, 5)); // let the 1 ms lease run out
    const [fresh] = await claimDueDeliveries(t.db.pool, { limit: 1, leaseMs: 60_000 });
    assert.equal(fresh!.id, stale!.id);
    assert.equal(fresh!.attempt, 2);
    assert.equal(fresh!.lost_attempt, 1);
    assert.deepEqual(await claimDueDeliveries(t.db.pool, { limit: 1, leaseMs: 60_000 }), [], 'a live lease is never claimed twice');

    target.respond(() => ({ status: 200 }));
    await attemptDelivery(deps, stale!, later());
    assert.deepEqual(await attemptsOf(t, stale!.id), [{ attempt: 1, status_code: 200, error: null, outcome: 'superseded' }]);
    assert.equal((await deliveriesOf(t, hook.id))[0]!.status, 'pending', 'the stale worker changed nothing');

    await attemptDelivery(deps, fresh!, later());
    assert.deepEqual(await attemptsOf(t, stale!.id), [
      { attempt: 1, status_code: 200, error: null, outcome: 'superseded' },
      { attempt: 2, status_code: 200, error: null, outcome: 'succeeded' },
    ]);
    const requests = target.requests.filter((r) => r.url === '/lease');
    assert.deepEqual(
      requests.map((r) => r.headers['x-delivery-attempt']),
      ['1', '2'],
    );
    assert.equal((await deliveriesOf(t, hook.id))[0]!.status, 'succeeded');
  });

  test('a claim too old to finish within its lease is given back unsent, attempt number included', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/too-late` });
    await completeCall(t, org.member);
    const [claimed] = await claimDueDeliveries(t.db.pool, { limit: 1, leaseMs: 60_000 });
    await attemptDelivery(deps, claimed!, performance.now());
    assert.equal(target.requests.filter((r) => r.url === '/too-late').length, 0);
    const [delivery] = await deliveriesOf(t, hook.id);
    assert.equal(delivery!.attempts, 0);
    assert.equal(delivery!.lease_token, null);
    const [again] = await claimDueDeliveries(t.db.pool, { limit: 1, leaseMs: 60_000 });
    assert.equal(again!.attempt, 1);
    await attemptDelivery(deps, again!, later());
    assert.equal(target.requests.filter((r) => r.url === '/too-late').length, 1);
  });
});

// A subscription that asked for signed deliveries whose secret no key of the
// service opens (sealed under a SECRET_KEY nobody kept) is never sent an
// unsigned request: each attempt is logged as the service's own fault
// ('internal', saying which keys to look for) and retried, so restoring the
// key lets it through. The control, a secret the service can open, is
// delivered signed to the same receiver by the same worker meanwhile.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
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
import { createSecretBox } from '../../../src/crypto/secret-box.ts';
import type { DeliveryWorker } from '../../../src/webhooks/worker/worker.ts';

describe('a subscription secret no key opens', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let worker: DeliveryWorker;
  before(async () => {
    t = await startWebhookApp({ WEBHOOK_RETRY_SCHEDULE: '20ms,20ms' });
    target = await startHttpsTarget();
    worker = await startTestWorker(t);
  });
  after(async () => {
    await worker.stop();
    await target.close();
    await t.close();
  });

  test('is never sent unsigned: every attempt is logged internal, saying why, and nothing reaches the receiver', async () => {
    const org = await connectPlatform(t);
    const lost = await subscribeHook(t, org, { hookUrl: `${target.url}/lost-key`, secret: 'sealed-under-a-lost-key' });
    const kept = await subscribeHook(t, org, { hookUrl: `${target.url}/kept-key`, secret: 'sealed-under-secret-key' });
    // Sealed again under a key the service does not have (fixture), as after SECRET_KEY changed with no SECRET_KEY_PREVIOUS.
    const elsewhere = createSecretBox(randomBytes(32)).seal('sealed-under-a-lost-key', org.member.org.id);
    await t.db.pool.query('UPDATE webhook_subscriptions SET secret_ciphertext = $2 WHERE id = $1', [lost.id, elsewhere]);

    const call = await completeCall(t, org.member);
    const [delivery] = await settled(t, lost.id, 1, 15_000);
    assert.equal(delivery!.status, 'failed', 'failed once its retries were spent');
    const { rows: attempts } = await t.db.pool.query<{ attempt: number; error: string; error_message: string; status_code: number | null }>(
      'SELECT attempt, error, error_message, status_code FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt',
      [delivery!.id],
    );
    assert.deepEqual(
      attempts.map((a) => a.attempt),
      [1, 2, 3],
    );
    for (const a of attempts) {
      assert.equal(a.error, 'internal');
      assert.equal(a.status_code, null);
      assert.match(a.error_message, /opens under neither SECRET_KEY nor SECRET_KEY_PREVIOUS/);
    }
    assert.deepEqual(
      target.requests.filter((r) => r.url === '/lost-key'),
      [],
      'nothing was sent to it, signed or not',
    );

    const signed = await waitFor('the control delivery', async () =>
      target.requests.find((r) => r.url === '/kept-key' && JSON.parse(r.body).id === call.id),
    );
    assert.equal(signed.headers['x-signature'], 'sealed-under-secret-key');
    assert.ok(signed.headers['webhook-signature'], 'the control is signed');
    assert.equal((await settled(t, kept.id, 1))[0]!.status, 'succeeded');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';
import type { TestApp } from '../../helpers/app.ts';
import { adminQuery } from '../../helpers/db.ts';
import { completeCall, connectPlatform, settled, startTestWorker, startWebhookApp, subscribeHook, waitFor } from '../../helpers/webhooks.ts';
import type { DeliveryWorker } from '../../../src/webhooks/delivery/worker.ts';

describe('the worker is woken by NOTIFY, not by polling', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let worker: DeliveryWorker;

  before(async () => {
    t = await startWebhookApp();
    target = await startHttpsTarget();
    // A safety poll far longer than this test: only NOTIFY can explain a delivery.
    worker = await startTestWorker(t, { pollIntervalMs: 600_000 });
  });
  after(async () => {
    await worker.stop();
    await target.close();
    await t.close();
  });

  const listenerPids = async () =>
    (await adminQuery("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN %'", [t.db.name])).rows.map((r) => r.pid as number);

  test('a completed call is delivered without waiting for the poll', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/notified` });
    await completeCall(t, org.member);
    const [delivery] = await settled(t, hook.id, 1, 5000);
    assert.equal(delivery!.status, 'succeeded');
  });

  test('when the LISTEN connection is killed, the worker reconnects and keeps delivering', async () => {
    const [pid] = await listenerPids();
    assert.ok(pid, 'the worker holds a LISTEN connection');
    await adminQuery('SELECT pg_terminate_backend($1)', [pid]);
    const newPid = await waitFor('a new LISTEN connection', async () => (await listenerPids()).find((p) => p !== pid));
    assert.notEqual(newPid, pid);

    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/after-reconnect` });
    await completeCall(t, org.member);
    const [delivery] = await settled(t, hook.id, 1, 5000);
    assert.equal(delivery!.status, 'succeeded');
  });
});

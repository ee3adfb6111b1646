import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';
import type { TestApp } from '../../helpers/app.ts';
import { adminQuery } from '../../helpers/db.ts';
import {
  completeCall,
  connectPlatform,
  settled,
  startTestWorker,
  startWebhookApp,
  subscribeHook,
  waitFor,
} from '../../helpers/webhooks.ts';
import type { DeliveryWorker } from '../../../src/webhooks/worker/worker.ts';
import { WORKER_LISTENER_NAME } from '../../../src/webhooks/worker/listener.ts';
import { startSilentProxy, type SilentProxy } from '../../helpers/silent-proxy.ts';

/** The backends of the worker's LISTEN connections to the app's database. */
async function workerListenerPids(t: TestApp): Promise<number[]> {
  const { rows } = await adminQuery('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2', [
    t.db.name,
    WORKER_LISTENER_NAME,
  ]);
  return rows.map((r) => r.pid as number);
}

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

  const listenerPids = () => workerListenerPids(t);

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

describe('the worker notices a LISTEN connection that went silent', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let proxy: SilentProxy;
  let worker: DeliveryWorker;

  before(async () => {
    t = await startWebhookApp();
    target = await startHttpsTarget();
    proxy = await startSilentProxy(t.db.url);
    // Only the LISTEN connection goes through the proxy; the safety poll is far
    // longer than this test, so a delivery after the silence means the worker
    // found out and listened again.
    worker = await startTestWorker(t, { databaseUrl: proxy.urlFor(t.db.url), pollIntervalMs: 600_000, listenHeartbeatMs: 200 });
  });
  after(async () => {
    await worker.stop();
    await proxy.close();
    await target.close();
    await t.close();
  });

  test('a call completed after the silence is delivered without waiting for the poll', async () => {
    // Silenced before any delivery: no lease of this worker's is running out, so
    // no timer of its own could look for the call either; only a new LISTEN can.
    const listening = () => workerListenerPids(t);
    const [silenced] = await waitFor('the worker listening', async () => {
      const pids = await listening();
      return pids.length === 1 ? pids : undefined;
    });
    proxy.silence();

    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/after-silence` });
    await completeCall(t, org.member);
    const [delivery] = await settled(t, hook.id, 1, 10_000);
    assert.equal(delivery!.status, 'succeeded');
    // The server never learns that the silent one went away (its backend stays until the server's own keepalive).
    await waitFor(
      'a new LISTEN connection beside the silent one',
      async () => (await listening()).some((pid) => pid !== silenced) && proxy.open === 1,
    );
  });
});

// An SMTP server that accepts connections and never answers holds the alert
// sender's e-mails, never a webhook delivery: the delivery worker and the
// alert tasks run in one process on one pool, and calls completed meanwhile
// reach their receiver at once while the e-mails wait.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { alertTasks } from '../../src/alerts/alert-tasks.ts';
import { taskHost } from '../../src/background.ts';
import { enqueueAlert } from '../../src/alerts/outbox.queries.ts';
import { startAll, stopAll, type Task } from '../../src/tasks/task.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { completeCall, connectPlatform, startTestWorker, subscribeHook, waitFor, WEBHOOK_TEST_ENV } from '../helpers/webhooks.ts';
import type { DeliveryWorker } from '../../src/webhooks/worker/worker.ts';

describe('alerts beside webhook deliveries', () => {
  let t: TestApp;
  let blackHole: net.Server;
  const sockets = new Set<net.Socket>();
  let target: HttpsTarget;
  let worker: DeliveryWorker;
  let tasks: Task[] = [];

  before(async () => {
    // Takes the connection, never says 220: each send waits for its greeting time-out (30 s).
    blackHole = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const { port } = blackHole.address() as net.AddressInfo;
    t = await startTestApp({ env: { ...WEBHOOK_TEST_ENV, SMTP_URL: `smtp://127.0.0.1:${port}` } });
    target = await startHttpsTarget();
    worker = await startTestWorker(t);
    const log = pino({ level: 'silent' });
    tasks = alertTasks(taskHost(log), { pool: t.db.pool, config: t.config, log, metrics: t.app.metrics });
    await startAll(tasks);
  });

  after(async () => {
    await stopAll(tasks);
    await worker.stop();
    await target.close();
    await t.close();
    for (const socket of sockets) socket.destroy();
    blackHole.close();
  });

  test('deliveries go out at once while the alert e-mails hang on an SMTP server that never answers', async () => {
    const connection = await connectPlatform(t);
    const hook = await subscribeHook(t, connection, { hookUrl: `${target.url}/beside-alerts` });
    for (let i = 0; i < 20; i++) {
      await enqueueAlert(t.db.pool, {
        organizationId: connection.member.org.id,
        kind: 'failing',
        subjectType: 'subscription',
        subjectId: hook.id,
        dedupeKey: `failing:${hook.id}:${i}`,
        details: { app: 'Zap Platform', client_id: connection.client.client_id, url: hook.callback_url, since: new Date().toISOString() },
      });
    }
    await waitFor('the sender to be holding SMTP connections', async () => sockets.size > 0, 15_000);
    const started = Date.now();
    for (let i = 0; i < 5; i++) await completeCall(t, connection.member);
    await target.waitForRequests(5, 10_000);
    const tookMs = Date.now() - started;
    assert.ok(tookMs < 10_000, `five deliveries in ${tookMs} ms`);
    assert.ok(sockets.size > 0, 'the e-mails are still waiting on the SMTP server meanwhile');
    const { rows } = await t.db.pool.query<{ sent: number }>(`SELECT count(*)::int AS sent FROM alert_emails WHERE status = 'sent'`);
    assert.equal(rows[0]!.sent, 0);
  });
});

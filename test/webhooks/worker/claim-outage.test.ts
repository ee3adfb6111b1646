import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createPool, type Pool } from '../../../src/db/pool.ts';
import type { DeliveryWorker } from '../../../src/webhooks/worker/worker.ts';
import type { TestApp } from '../../helpers/app.ts';
import { controllablePostgres, type ControllablePostgres } from '../../helpers/postgres-control.ts';
import { startTestWorker, startWebhookApp } from '../../helpers/webhooks.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Longer than the minute after which the worker's own outage log used to repeat at level error. */
const OUTAGE_MS = 65_000;

// While the database is away the claim loop reports through the task layer's
// outage watch: one warning when it begins, one line when it ends, never an
// error per retry, however long it lasts. The server stopped is a private one
// (test/helpers/postgres-control.ts), so the file runs beside the others: its
// minute of outage is waiting, and its assertions are about log lines, not
// timing. (The machine's own cluster is stopped by
// test/faults/database-outage.serial.test.ts.)
describe('the delivery worker during a database outage', () => {
  let postgres: ControllablePostgres;
  let t: TestApp;
  let pool: Pool;
  let worker: DeliveryWorker;
  const lines: { level: number; msg: string; task?: string }[] = [];

  before(async () => {
    postgres = await controllablePostgres();
    t = await startWebhookApp();
    pool = createPool(postgres.databaseUrl, 2);
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    worker = await startTestWorker(t, {
      pool,
      databaseUrl: postgres.databaseUrl,
      log: pino({ level: 'info' }, sink),
      pollIntervalMs: 1000,
    });
  });
  after(async () => {
    await worker?.stop();
    await pool?.end();
    await t?.close();
    await postgres?.close();
  });

  test('a stop longer than a minute: one outage warning, no error-level line, one line when it ends', { timeout: 180_000 }, async () => {
    await postgres.stop();
    await sleep(OUTAGE_MS);
    await postgres.start();
    const deadline = Date.now() + 60_000;
    while (!lines.some((line) => line.msg.startsWith('database reachable again'))) {
      assert.ok(Date.now() < deadline, `the worker never reported the end of the outage:\n${JSON.stringify(lines)}`);
      worker.wake();
      await sleep(200);
    }
    const summary = JSON.stringify(lines);
    assert.deepEqual(
      lines.filter((line) => line.level >= 50),
      [],
      `no error-level line: ${summary}`,
    );
    const began = lines.filter((line) => line.msg.startsWith('database unreachable'));
    assert.equal(began.length, 1, `one outage warning: ${summary}`);
    assert.equal(began[0]!.level, 40);
    assert.equal(began[0]!.task, 'webhook-delivery');
    assert.equal(lines.filter((line) => line.msg.startsWith('database reachable again')).length, 1, summary);
  });
});

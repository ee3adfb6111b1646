// Idempotency-Key under concurrent duplicates (src/calls/idempotency.ts),
// through two servers on one database.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { connectPlatform, settled, startTestWorker, startWebhookApp, subscribeHook, WEBHOOK_TEST_ENV } from '../helpers/webhooks.ts';
import type { DeliveryWorker } from '../../src/webhooks/worker/worker.ts';

// Many copies of one request at once, through two servers on one database
// (each with its own in-process registry and group commit, as two API
// processes would be): one call, one delivery per subscription, every other
// copy answered with the first answer or 409.
describe('Idempotency-Key under concurrent duplicates', () => {
  let a: TestApp;
  let b: TestApp;
  let target: HttpsTarget;
  let worker: DeliveryWorker;
  before(async () => {
    a = await startWebhookApp();
    b = await startTestApp({ db: a.db, env: WEBHOOK_TEST_ENV });
    target = await startHttpsTarget();
    worker = await startTestWorker(a);
  });
  after(async () => {
    await worker.stop();
    await target.close();
    await b.close();
    await a.close();
  });

  const COPIES = 50;
  const BUDGET_MS = 4_000;
  const MAX_ROUNDS = 300;
  const KEYS_AT_ONCE = 4;

  /**
   * The call of each delivery the target received on `path`, once per delivery id: a slow
   * attempt (the machine is shared) may be retried, and a retry is the same delivery.
   */
  function deliveredCalls(path: string): string[] {
    const byDelivery = new Map<string, string>();
    for (const r of target.requests.filter((request) => request.url === path)) {
      byDelivery.set(String(r.headers['x-delivery-id']), JSON.parse(r.body).id as string);
    }
    return [...byDelivery.values()];
  }

  function noErrorLogs() {
    for (const app of [a, b])
      assert.ok(
        !app.logs.some((line) => /"level":(50|60)/.test(line)),
        app.logs.find((line) => /"level":(50|60)/.test(line)),
      );
  }

  /**
   * The copies overlapped: each server answered 409 to some copy, which it does only while
   * its first copy with the key is still in progress (copies one after another all get the
   * first answer). Copies are sent to the servers in turn, so the even ones went to `a`.
   */
  function assertOverlapped(key: string, answers: { statusCode: number }[]) {
    for (const server of [0, 1]) {
      const mine = answers.filter((_, i) => i % 2 === server);
      assert.ok(
        mine.some((r) => r.statusCode === 409),
        `${key}: server ${server ? 'b' : 'a'} answered ${mine.map((r) => r.statusCode)}, no copy while its first was in progress`,
      );
    }
  }

  test(`${COPIES} identical POST /calls with one key make one call and one delivery per subscription`, async () => {
    const org = await connectPlatform(a);
    const hooks = [];
    for (const path of ['/race-one', '/race-two']) hooks.push(await subscribeHook(a, org, { hookUrl: `${target.url}${path}` }));
    const headers = { 'x-user-token': org.member.token };
    const winners: string[] = [];
    const started = Date.now();
    let keys = 0;
    let rounds = 0;
    // Several keys at once, so each server's group commit also writes batches of different keys
    // that hold a key the other server is claiming at the same moment.
    const sendCopies = async (key: string, n: number) => {
      const payload = { summary: `Race ${key}`, duration_seconds: n };
      const answers = await Promise.all(
        Array.from({ length: COPIES }, (_, i) =>
          (i % 2 ? b : a).app.inject({
            method: 'POST',
            url: '/calls',
            headers: { ...headers, 'idempotency-key': key },
            payload,
          }),
        ),
      );
      const statuses = new Set(answers.map((r) => r.statusCode));
      assert.ok(
        [...statuses].every((s) => s === 201 || s === 409),
        `${key}: ${[...statuses]}`,
      );
      const created = answers.filter((r) => r.statusCode === 201);
      assert.ok(created.length >= 1, `${key}: someone succeeded`);
      assert.equal(new Set(created.map((r) => r.body)).size, 1, `${key}: every 201 is the same answer`);
      for (const conflict of answers.filter((r) => r.statusCode === 409)) {
        assert.equal(conflict.json().code, 'IDEMPOTENCY_KEY_IN_PROGRESS');
        assert.equal(conflict.headers['retry-after'], '1');
      }
      assertOverlapped(key, answers);
      winners.push(created[0]!.json().id);
    };
    while (rounds < MAX_ROUNDS && (rounds < 5 || Date.now() - started < BUDGET_MS)) {
      await Promise.all(
        Array.from({ length: KEYS_AT_ONCE }, () => {
          keys++;
          return sendCopies(`race-${keys}`, keys);
        }),
      );
      rounds++;
    }
    const { rows: calls } = await a.db.pool.query<{ id: string }>('SELECT id FROM calls WHERE organization_id = $1', [org.member.org.id]);
    assert.deepEqual(calls.map((c) => c.id).sort(), [...winners].sort(), `one call per key over ${keys} keys`);
    for (const hook of hooks) {
      const delivered = await settled(a, hook.id, keys, 30_000);
      assert.ok(delivered.every((d) => d.status === 'succeeded'));
    }
    for (const path of ['/race-one', '/race-two']) {
      assert.deepEqual(deliveredCalls(path).sort(), [...winners].sort(), `${path}: one delivery of each call`);
    }
    noErrorLogs();
  });

  test(`${COPIES} identical completions with one key complete once; none is told the call was already completed`, async () => {
    const org = await connectPlatform(a);
    const hook = await subscribeHook(a, org, { hookUrl: `${target.url}/race-complete` });
    const headers = { 'x-user-token': org.member.token };
    const started = Date.now();
    let keys = 0;
    let rounds = 0;
    const completeCopies = async (key: string, n: number) => {
      const call = (await a.app.inject({ method: 'POST', url: '/calls', headers, payload: {} })).json();
      const answers = await Promise.all(
        Array.from({ length: COPIES }, (_, i) =>
          (i % 2 ? b : a).app.inject({
            method: 'POST',
            url: `/calls/${call.id}/complete`,
            headers: { ...headers, 'idempotency-key': key },
            payload: { summary: `Completed ${key}`, duration_seconds: n },
          }),
        ),
      );
      const odd = answers.find((r) => r.statusCode !== 200 && !(r.statusCode === 409 && r.json().code === 'IDEMPOTENCY_KEY_IN_PROGRESS'));
      assert.equal(odd, undefined, `${key}: ${odd?.statusCode} ${odd?.body}`);
      const completed = answers.filter((r) => r.statusCode === 200);
      assert.ok(completed.length >= 1);
      assertOverlapped(key, answers);
      assert.equal(new Set(completed.map((r) => r.body)).size, 1);
    };
    while (rounds < MAX_ROUNDS && (rounds < 5 || Date.now() - started < BUDGET_MS)) {
      await Promise.all(
        Array.from({ length: KEYS_AT_ONCE }, () => {
          keys++;
          return completeCopies(`complete-${keys}`, keys);
        }),
      );
      rounds++;
    }
    const delivered = await settled(a, hook.id, keys, 30_000);
    assert.equal(new Set(delivered.map((d) => d.call_id)).size, keys, 'one delivery per completed call');
    assert.equal(new Set(deliveredCalls('/race-complete')).size, keys);
    assert.equal(deliveredCalls('/race-complete').length, keys);
    noErrorLogs();
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { HttpsTarget } from '../../helpers/https-target.ts';
import type { TestApp } from '../../helpers/app.ts';
import {
  completeCall,
  connectPlatform,
  deliveriesOf,
  settled,
  startDeliveryRig,
  type DeliveryRig,
  subscribeHook,
  waitFor,
} from '../../helpers/webhooks.ts';

describe('delivery log, redelivery, unsubscribe and organization boundaries', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let rig: DeliveryRig;

  before(async () => {
    rig = await startDeliveryRig();
    ({ t, target } = rig);
  });
  after(() => rig.close());

  const requestsTo = (path: string) => target.requests.filter((request) => request.url === path);

  test('the delivery log lists every attempt, newest first, with status, latency, error and the answer', async () => {
    const path = '/log';
    let seen = 0;
    // The first answer comes 150 ms late: its logged latency shows that wait.
    target.respond((request) =>
      request.url === path && ++seen === 1 ? { status: 500, body: 'x'.repeat(5000), delayMs: 150 } : { status: 201, body: 'thanks' },
    );
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}` });
    const call = await completeCall(t, org.member);
    const [delivery] = await settled(t, hook.id, 1);

    for (const headers of [{ 'x-user-token': org.member.token }, org.headers]) {
      const res = await t.app.inject({ url: `/webhooks/${hook.id}/deliveries`, headers });
      assert.equal(res.statusCode, 200);
      const log = res.json();
      assert.equal(log.length, 2);
      assert.deepEqual(
        log.map((a: { attempt: number }) => a.attempt),
        [2, 1],
      );
      const [second, first] = log;
      assert.equal(first.delivery_id, delivery!.id);
      assert.equal(first.call_id, call.id);
      assert.equal(first.status_code, 500);
      assert.equal(first.outcome, 'retrying');
      assert.equal(first.response_body, 'x'.repeat(4096), 'the first 4 KiB of the answer');
      assert.equal(first.error, null);
      assert.ok(Number.isInteger(first.latency_ms) && first.latency_ms >= 149, `latency ${first.latency_ms} ms`);
      assert.ok(Date.parse(first.attempted_at) <= Date.parse(second.attempted_at));
      assert.equal(second.status_code, 201);
      assert.equal(second.response_body, 'thanks');
      assert.equal(second.outcome, 'succeeded');
      assert.equal(second.delivery_status, 'succeeded');
    }
  });

  test('the log pages with a Link header', async () => {
    target.respond(() => ({ status: 200 }));
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/paged` });
    for (let i = 0; i < 3; i++) await completeCall(t, org.member);
    await settled(t, hook.id, 3);
    const headers = { 'x-user-token': org.member.token };
    const first = await t.app.inject({ url: `/webhooks/${hook.id}/deliveries?limit=2`, headers });
    assert.equal(first.json().length, 2);
    const link = /^<([^>]+)>; rel="next"$/.exec(String(first.headers.link));
    assert.ok(link, String(first.headers.link));
    const next = new URL(link[1]!);
    const second = await t.app.inject({ url: `${next.pathname}${next.search}`, headers });
    assert.equal(second.json().length, 1);
    assert.equal(second.headers.link, undefined);
    const ids = [...first.json(), ...second.json()].map((a: { id: string }) => a.id);
    assert.equal(new Set(ids).size, 3);
  });

  test('redeliver sends the same delivery again with the next attempt number', async () => {
    const path = '/redeliver';
    target.respond(() => ({ status: 200 }));
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}` });
    await completeCall(t, org.member);
    const [delivery] = await settled(t, hook.id, 1);

    const res = await t.app.inject({
      method: 'POST',
      url: `/webhooks/deliveries/${delivery!.id}/redeliver`,
      headers: { 'x-user-token': org.member.token },
    });
    assert.equal(res.statusCode, 202);
    assert.equal(res.json().id, delivery!.id);
    assert.equal(res.json().status, 'pending');
    const received = await waitFor('the redelivery', async () => (requestsTo(path).length === 2 ? requestsTo(path) : undefined));
    assert.deepEqual(
      received.map((r) => r.headers['x-delivery-id']),
      [delivery!.id, delivery!.id],
    );
    assert.deepEqual(
      received.map((r) => r.headers['x-delivery-attempt']),
      ['1', '2'],
    );
    assert.equal(received[0]!.body, received[1]!.body);
    const [again] = await settled(t, hook.id, 1);
    assert.equal(again!.status, 'succeeded');
    assert.equal(again!.attempts, 2);

    const platform = await t.app.inject({ method: 'POST', url: `/webhooks/deliveries/${delivery!.id}/redeliver`, headers: org.headers });
    assert.equal(platform.statusCode, 202, 'the subscribing platform may redeliver too');
  });

  test('unsubscribe stops deliveries to that URL and only that URL', async () => {
    target.respond(() => ({ status: 200 }));
    const org = await connectPlatform(t);
    await subscribeHook(t, org, { hookUrl: `${target.url}/stopped` });
    const kept = await subscribeHook(t, org, { hookUrl: `${target.url}/kept` });
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/webhooks/subscribe',
      headers: org.headers,
      payload: { hookUrl: `${target.url}/stopped` },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { success: true });
    const call = await completeCall(t, org.member);
    await settled(t, kept.id, 1);
    assert.equal(requestsTo('/kept').filter((r) => JSON.parse(r.body).id === call.id).length, 1);
    assert.equal(requestsTo('/stopped').length, 0);
  });

  test("another organization's calls never reach a subscription", async () => {
    target.respond(() => ({ status: 200 }));
    const mine = await connectPlatform(t);
    // Same platform client, same URL, another organization.
    const theirs = await connectPlatform(t, { client: mine.client });
    const myHook = await subscribeHook(t, mine, { hookUrl: `${target.url}/tenant` });
    const theirHook = await subscribeHook(t, theirs, { hookUrl: `${target.url}/tenant` });
    assert.notEqual(myHook.id, theirHook.id);

    const theirCall = await completeCall(t, theirs.member);
    const myCall = await completeCall(t, mine.member);
    await settled(t, myHook.id, 1);
    await settled(t, theirHook.id, 1);
    const [myDelivery] = await deliveriesOf(t, myHook.id);
    const [theirDelivery] = await deliveriesOf(t, theirHook.id);
    assert.equal(myDelivery!.call_id, myCall.id);
    assert.equal(theirDelivery!.call_id, theirCall.id);
    const bodies = requestsTo('/tenant').map((r) => JSON.parse(r.body));
    assert.equal(bodies.filter((b) => b.id === theirCall.id).length, 1);
    assert.ok(bodies.every((b) => (b.id === myCall.id ? b.organization_id === mine.member.org.id : true)));

    // The database refuses a delivery of one organization's call to another's subscription outright.
    await assert.rejects(
      t.db.pool.query(
        `INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body) VALUES ($1, $2, $3, 'call.completed', '{}')`,
        [mine.member.org.id, myHook.id, theirCall.id],
      ),
      /webhook_deliveries_call_fkey/,
    );

    const foreignLog = await t.app.inject({ url: `/webhooks/${theirHook.id}/deliveries`, headers: { 'x-user-token': mine.member.token } });
    assert.equal(foreignLog.statusCode, 404);
    const foreignRedeliver = await t.app.inject({
      method: 'POST',
      url: `/webhooks/deliveries/${theirDelivery!.id}/redeliver`,
      headers: { 'x-user-token': mine.member.token },
    });
    assert.equal(foreignRedeliver.statusCode, 404);
    assert.equal(foreignRedeliver.json().code, 'WEBHOOK_DELIVERY_NOT_FOUND');
  });
});

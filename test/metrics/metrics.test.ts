import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { completeCall, connectPlatform, startWebhookApp, subscribeHook } from '../helpers/webhooks.ts';

describe('/metrics', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  const scrape = async () => (await t.app.inject({ url: '/metrics' })).body;

  test('counts HTTP requests by route template, never by raw URL', async () => {
    const member = await createMember(t.db.pool);
    await t.app.inject({ url: '/locations/00000000-0000-4000-8000-000000000000', headers: { 'x-user-token': member.token } });
    await t.app.inject({ url: '/no/such/route' });
    const text = await scrape();
    assert.match(text, /switchboard_http_requests_total\{method="GET",route="\/locations\/:id",status="404"\} 1/);
    assert.match(text, /switchboard_http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    assert.doesNotMatch(text, /00000000-0000-4000-8000-000000000000/);
    assert.match(text, /switchboard_http_request_duration_seconds_bucket\{le="[\d.]+",method="GET",route="\/locations\/:id"\}/);
  });

  test('reports the webhook delivery queue depth at scrape time', async () => {
    assert.match(await scrape(), /switchboard_webhook_deliveries_queued\{state="pending"\} 0/);
    // A subscription and a completed call, and no worker running: one delivery waits.
    const connection = await connectPlatform(t);
    await subscribeHook(t, connection, { hookUrl: 'https://127.0.0.1:9/hook' });
    await completeCall(t, connection.member);
    assert.match(await scrape(), /switchboard_webhook_deliveries_queued\{state="pending"\} 1/);
  });

  test('counts active subscriptions per circuit state at scrape time', async () => {
    const gauge = (text: string, state: string) =>
      Number(new RegExp(`^switchboard_webhook_circuit_state\\{state="${state}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
    const counts = (text: string) => ({ closed: gauge(text, 'closed'), open: gauge(text, 'open'), probing: gauge(text, 'probing') });
    const before = counts(await scrape());
    assert.ok(Object.values(before).every(Number.isInteger), 'all three states are reported, zeros included');

    const connection = await connectPlatform(t);
    const ids: string[] = [];
    for (const name of ['closed', 'open', 'probing', 'open-disabled']) {
      ids.push((await subscribeHook(t, connection, { hookUrl: `https://127.0.0.1:9/circuit-${name}` })).id);
    }
    const open = (id: string, retryAt: string) =>
      t.db.pool.query(
        `UPDATE webhook_subscriptions SET circuit_state = 'open', circuit_changed_at = now(), circuit_retry_at = ${retryAt}, consecutive_failures = 5
        WHERE id = $1`,
        [id],
      );
    await open(ids[1]!, "now() + interval '1 hour'");
    await open(ids[2]!, "now() - interval '1 second'");
    // A disabled subscription is not counted, whatever its circuit.
    await open(ids[3]!, "now() + interval '1 hour'");
    await t.db.pool.query("UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now() WHERE id = $1", [ids[3]]);

    assert.deepEqual(counts(await scrape()), { closed: before.closed + 1, open: before.open + 1, probing: before.probing + 1 });
    assert.match(await scrape(), /# TYPE switchboard_webhook_circuit_state gauge/);

    // The wait of the open one ends: it counts as probing from then on.
    await t.db.pool.query("UPDATE webhook_subscriptions SET circuit_retry_at = now() - interval '1 second' WHERE id = $1", [ids[1]]);
    assert.deepEqual(counts(await scrape()), { closed: before.closed + 1, open: before.open, probing: before.probing + 2 });
  });
});

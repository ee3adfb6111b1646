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
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createAgent } from '../../src/calls/agents.service.ts';
import type { TestApp } from '../helpers/app.ts';
import { launchChromium, screenshot, signedInBrowser, SKIP_WITHOUT_BROWSER } from '../helpers/browser.ts';
import type { HttpsTarget } from '../helpers/https-target.ts';
import {
  attemptsOf,
  completeCall,
  connectPlatform,
  settled,
  startDeliveryRig,
  subscribeHook,
  waitFor,
  type DeliveryRig,
} from '../helpers/webhooks.ts';

// Calls and webhook deliveries as a person sees them: real deliveries by a
// real worker to a real HTTPS target, looked at in headless Chromium.
describe('calls and webhooks in headless Chromium', { skip: SKIP_WITHOUT_BROWSER }, () => {
  let t: TestApp;
  let browser: Browser;
  let target: HttpsTarget;
  let rig: DeliveryRig;

  before(async () => {
    rig = await startDeliveryRig({ listen: true });
    ({ t, target } = rig);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await rig?.close();
  });

  test('calls are listed newest first, and one opens in full', async () => {
    const org = await connectPlatform(t);
    const agent = await createAgent(t.db.pool, org.member.org.id, 'Ava (voice agent)');
    await completeCall(t, org.member, { summary: 'First caller asked about opening hours.', duration_seconds: 65 });
    const latest = await completeCall(t, org.member, {
      summary: 'Customer booked a boiler service for Tuesday 9:00.\nPrefers a call back on the mobile number.',
      duration_seconds: 3725,
      agent_id: agent.id,
    });
    const { context, page } = await signedInBrowser(browser, t.url, org.member.email);
    await page.click('nav.sections >> text=Calls');
    const rows = page.locator('tbody tr');
    assert.equal(await rows.count(), 2);
    assert.match((await rows.nth(0).textContent()) ?? '', /Ava \(voice agent\).*1:02:05.*boiler service/s);
    assert.match((await rows.nth(1).textContent()) ?? '', /1:05.*opening hours/s);
    await screenshot(page, 'calls');

    await rows.nth(0).locator('a').click();
    await page.waitForURL(new RegExp(`/ui/calls/${latest.id}$`));
    assert.equal(
      await page.locator('p.summary').textContent(),
      'Customer booked a boiler service for Tuesday 9:00.\nPrefers a call back on the mobile number.',
    );
    assert.match((await page.locator('dl.facts').textContent()) ?? '', /Ava \(voice agent\)/);
    await screenshot(page, 'call');
    await context.close();
  });

  test("a subscription's deliveries show each attempt's status, latency, error and answer; redeliver, re-enable, delete", async () => {
    const path = '/hooks/crm';
    let healthy = false;
    target.respond((request) =>
      request.url === path && !healthy
        ? { status: 503, body: '{"error":"maintenance","detail":"back in five minutes"}' }
        : { status: 200, body: 'ok' },
    );
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}`, secret: 'whsec-test' });
    await completeCall(t, org.member, { summary: 'Caller wants a quote.' });
    const [delivery] = await settled(t, hook.id, 1);
    assert.equal(delivery!.status, 'failed', 'every scheduled attempt answered 503');

    const { context, page } = await signedInBrowser(browser, t.url, org.member.email);
    await page.click('nav.sections >> text=Webhooks');
    const listed = page.locator('tbody tr', { hasText: path });
    assert.match((await listed.textContent()) ?? '', /call\.completed.*Failing.*Zap Platform/s);
    await screenshot(page, 'webhooks');

    await listed.locator('text=Deliveries').click();
    const group = page.locator('table.attempts > tbody.delivery');
    assert.equal(await group.count(), 1, 'one delivery');
    assert.match((await group.locator('tr.delivery-head').textContent()) ?? '', /Call of .*Failed.*3 attempts/s);
    const attempts = group.locator('tr:not(.delivery-head)');
    assert.equal(await attempts.count(), 3, 'the first attempt and two retries');
    const newest = (await attempts.nth(0).textContent()) ?? '';
    assert.match(newest, /^\s*3 · /);
    assert.match(newest, /503/);
    assert.match(newest, /\d+ ms/);
    assert.match(newest, /Failed/);
    assert.match(newest, /maintenance/);
    assert.match((await attempts.nth(2).textContent()) ?? '', /^\s*1 · .*Will retry/s);
    assert.equal(await page.locator('button:has-text("Redeliver")').count(), 1, 'one button per delivery, in its heading');
    await screenshot(page, 'webhook-attempts');

    healthy = true;
    await page.click('button:has-text("Redeliver")');
    await page.waitForURL(/done=redelivered$/);
    assert.match((await page.locator('.notice').textContent()) ?? '', /Delivery queued/);
    await waitFor('the redelivery', async () => (await attemptsOf(t, delivery!.id)).some((a) => a.outcome === 'succeeded'));
    await page.reload();
    const redelivered = (await page.locator('table.attempts > tbody.delivery > tr:not(.delivery-head)').nth(0).textContent()) ?? '';
    assert.match(redelivered, /^\s*4 · .*200.*Succeeded/s);
    await screenshot(page, 'webhook-redelivered');

    // Five days of failures disable a subscription; here the state is set directly.
    await t.db.pool.query(
      "UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now(), failing_since = now() - interval '5 days' WHERE id = $1",
      [hook.id],
    );
    await page.reload();
    assert.match((await page.locator('h1').textContent()) ?? '', /Disabled/);
    assert.equal(await page.locator('button:has-text("Redeliver")').count(), 0, 'no redelivery while disabled');
    assert.equal(
      await page.locator('tbody.delivery p.cannot').textContent(),
      "Can't redeliver: the subscription is disabled; re-enable it first.",
    );
    await screenshot(page, 'webhook-disabled');
    await page.click('button:has-text("Re-enable")');
    await page.waitForURL(/done=enabled$/);
    assert.match((await page.locator('h1').textContent()) ?? '', /Active/);
    const {
      rows: [enabled],
    } = await t.db.pool.query('SELECT status FROM webhook_subscriptions WHERE id = $1', [hook.id]);
    assert.equal(enabled.status, 'active');

    await page.click('text=Delete subscription');
    assert.match((await page.locator('main').textContent()) ?? '', new RegExp(`${path}.*will receive no more`));
    await page.click('button:has-text("Delete subscription")');
    await page.waitForURL(/\/ui\/webhooks\?done=deleted$/);
    assert.match((await page.locator('main').textContent()) ?? '', /No webhook subscriptions/);
    const { rowCount } = await t.db.pool.query('SELECT 1 FROM webhook_subscriptions WHERE id = $1', [hook.id]);
    assert.equal(rowCount, 0);
    await context.close();
  });
});

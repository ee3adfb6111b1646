// Deliveries as a person sees them: a call's page lists where its event went,
// and a subscription's page groups the attempts by delivery; on both each
// delivery has Redeliver or a line saying why it cannot be redelivered. Real
// deliveries by a real worker to a real HTTPS target, in headless Chromium.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.ts';
import { launchChromium, screenshot, signedInBrowser, SKIP_WITHOUT_BROWSER } from '../helpers/browser.ts';
import {
  completeCall,
  connectPlatform,
  deliveriesOf,
  settled,
  startDeliveryRig,
  subscribeHook,
  type DeliveryRig,
} from '../helpers/webhooks.ts';

const utc = (date: Date) => `${date.toISOString().replace('T', ' ').slice(0, 19)} UTC`;

describe('deliveries on the call and subscription pages, in headless Chromium', { skip: SKIP_WITHOUT_BROWSER }, () => {
  let rig: DeliveryRig;
  let t: TestApp;
  let browser: Browser;

  before(async () => {
    rig = await startDeliveryRig({ listen: true });
    t = rig.t;
    // Every path under /failing answers 503; anything else 200.
    rig.target.respond((request) =>
      request.url.startsWith('/failing') ? { status: 503, body: 'down for maintenance' } : { status: 200, body: 'ok' },
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await rig?.close();
  });

  /**
   * Turns a delivery that failed for good into one whose last attempt failed
   * and will be retried an hour from now (out of the worker's reach); returns that time.
   */
  async function retryInAnHour(deliveryId: string): Promise<Date> {
    await t.db.pool.query(
      "UPDATE webhook_attempts SET outcome = 'retrying' WHERE delivery_id = $1 AND attempt = (SELECT attempts FROM webhook_deliveries WHERE id = $1)",
      [deliveryId],
    );
    const { rows } = await t.db.pool.query<{ next: Date }>(
      `UPDATE webhook_deliveries SET status = 'pending', finished_at = NULL, next_attempt_at = date_trunc('second', now()) + interval '1 hour'
        WHERE id = $1 RETURNING next_attempt_at AS next`,
      [deliveryId],
    );
    return rows[0]!.next;
  }

  /** A worker holds the delivery: an attempt is on the wire. */
  async function lease(deliveryId: string) {
    await t.db.pool.query(
      `INSERT INTO webhook_delivery_leases (delivery_id, organization_id, subscription_id, token, attempt, started_at, expires_at)
       SELECT id, organization_id, subscription_id, gen_random_uuid(), attempts + 1, now(), now() + interval '10 minutes'
         FROM webhook_deliveries WHERE id = $1`,
      [deliveryId],
    );
  }

  const text = async (page: Page, selector: string) => ((await page.locator(selector).textContent()) ?? '').replace(/\s+/g, ' ');

  test("a call's page lists each of its deliveries: where it went, its state, attempts, next retry and last answer, linking to the subscription", async () => {
    const org = await connectPlatform(t);
    const ok = await subscribeHook(t, org, { hookUrl: `${rig.target.url}/ok` });
    const failing = await subscribeHook(t, org, { hookUrl: `${rig.target.url}/failing` });
    const later = await subscribeHook(t, org, { hookUrl: `${rig.target.url}/failing/later` });
    const call = await completeCall(t, org.member, { summary: 'Caller asked for a quote.' });
    await Promise.all([settled(t, ok.id, 1), settled(t, failing.id, 1), settled(t, later.id, 1)]);
    const next = await retryInAnHour((await deliveriesOf(t, later.id))[0]!.id);

    const { context, page } = await signedInBrowser(browser, t.url, org.member.email);
    await page.goto(`${t.url}/ui/calls/${call.id}`);
    const rows = page.locator('section[aria-labelledby=deliveries-title] tbody tr');
    assert.equal(await rows.count(), 3, 'one delivery per subscription');
    const row = (hook: { id: string }) => rows.filter({ has: page.locator(`a[href="/ui/webhooks/${hook.id}"]`) });
    assert.match((await row(ok).textContent()) ?? '', /Delivered\s*1\s*[\d-]+ [\d:]+ UTC\s*HTTP 200/);
    assert.match(
      (await row(failing).textContent()) ?? '',
      /Failed\s*failed for good: its retries are used up\s*3\s*[\d-]+ [\d:]+ UTC\s*HTTP 503/,
    );
    assert.match(
      (await row(later).textContent()) ?? '',
      new RegExp(`Will retry\\s*next retry at ${utc(next)}\\s*3\\s*[\\d-]+ [\\d:]+ UTC\\s*HTTP 503`),
    );
    assert.equal(await row(ok).locator('a').textContent(), `${rig.target.url}/ok`);
    await screenshot(page, 'call-deliveries');

    await row(failing).locator('a').click();
    await page.waitForURL(new RegExp(`/ui/webhooks/${failing.id}$`));
    await context.close();
  });

  test("a call's page has Redeliver on each delivery that may be sent again, or says why not; a tap queues the delivery again", async () => {
    const org = await connectPlatform(t);
    const ok = await subscribeHook(t, org, { hookUrl: `${rig.target.url}/ok/redeliver` });
    const failing = await subscribeHook(t, org, { hookUrl: `${rig.target.url}/failing/redeliver` });
    const busy = await subscribeHook(t, org, { hookUrl: `${rig.target.url}/failing/busy` });
    const call = await completeCall(t, org.member);
    await Promise.all([settled(t, ok.id, 1), settled(t, failing.id, 1), settled(t, busy.id, 1)]);
    const busyDelivery = (await deliveriesOf(t, busy.id))[0]!;
    await retryInAnHour(busyDelivery.id);
    await lease(busyDelivery.id);

    const { context, page } = await signedInBrowser(browser, t.url, org.member.email);
    await page.goto(`${t.url}/ui/calls/${call.id}`);
    const rows = page.locator('section[aria-labelledby=deliveries-title] tbody tr');
    const row = (hook: { id: string }) => rows.filter({ has: page.locator(`a[href="/ui/webhooks/${hook.id}"]`) });
    for (const hook of [ok, failing, busy]) {
      const actions = (await row(hook).locator('button:has-text("Redeliver")').count()) + (await row(hook).locator('p.cannot').count());
      assert.equal(actions, 1, `${hook.id}: Redeliver or why not`);
    }
    assert.equal(await row(ok).locator('button:has-text("Redeliver")').count(), 1, 'a delivered one may be sent again');
    assert.equal(await row(busy).locator('p.cannot').textContent(), "Can't redeliver yet: it is being sent right now. Reload in a moment.");

    // The failing target recovers; Redeliver sends its delivery again, now.
    const failed = (await deliveriesOf(t, failing.id))[0]!;
    assert.equal(failed.status, 'failed');
    rig.target.respond((request) =>
      request.url.startsWith('/failing') && request.url !== '/failing/redeliver'
        ? { status: 503, body: 'down for maintenance' }
        : { status: 200, body: 'ok' },
    );
    try {
      await row(failing).locator('button:has-text("Redeliver")').click();
      await page.waitForURL(new RegExp(`/ui/calls/${call.id}\\?done=redelivered$`));
      assert.equal(await page.locator('.notice').textContent(), 'Delivery queued: it is sent again now, with the same X-Delivery-Id.');
      const [again] = await settled(t, failing.id, 1);
      assert.equal(again!.id, failed.id, 'the same delivery');
      assert.equal(again!.status, 'succeeded');
      assert.equal(again!.attempts, 4, 'its three attempts, then the one Redeliver queued');
    } finally {
      rig.target.respond((request) =>
        request.url.startsWith('/failing') ? { status: 503, body: 'down for maintenance' } : { status: 200, body: 'ok' },
      );
    }
    await page.reload();
    assert.match((await row(failing).textContent()) ?? '', /Delivered\s*4\s*[\d-]+ [\d:]+ UTC\s*HTTP 200/);
    await screenshot(page, 'call-redelivered');
    await context.close();
  });

  test("a subscription's attempts are grouped by delivery, each delivery with Redeliver or why it can't be", async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${rig.target.url}/failing/grouped` });
    // Two calls at once: their retries interleave in time.
    const calls = await Promise.all([completeCall(t, org.member), completeCall(t, org.member)]);
    await settled(t, hook.id, 2);
    const busyCall = await completeCall(t, org.member);
    const deliveries = await settled(t, hook.id, 3);
    const busy = deliveries.find((d) => d.call_id === busyCall.id)!;
    await retryInAnHour(busy.id);
    await lease(busy.id);

    const { context, page } = await signedInBrowser(browser, t.url, org.member.email);
    await page.goto(`${t.url}/ui/webhooks/${hook.id}`);
    const groups = page.locator('table.attempts > tbody.delivery');
    assert.equal(await groups.count(), 3, 'one group per delivery');
    const shownCalls = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const group = groups.nth(i);
      const callId = /\/ui\/calls\/([\w-]+)$/.exec((await group.locator('tr.delivery-head a').getAttribute('href')) ?? '')![1]!;
      shownCalls.add(callId);
      const attempts = group.locator('tr:not(.delivery-head)');
      assert.equal(await attempts.count(), 3, `the delivery of call ${callId}: its first attempt and two retries`);
      for (const [n, expected] of [
        [0, /^\s*3 · .*503.*(Failed|Will retry)/s], // the busy one's is to be retried
        [1, /^\s*2 · .*503.*Will retry/s],
        [2, /^\s*1 · .*503.*Will retry/s],
      ] as const) {
        assert.match((await attempts.nth(n).textContent()) ?? '', expected);
      }
      // Each group says it all: Redeliver, or one line on why not.
      const actions =
        (await group.locator('tr.delivery-head button:has-text("Redeliver")').count()) + (await group.locator('p.cannot').count());
      assert.equal(actions, 1, `call ${callId}: Redeliver or why not`);
    }
    assert.deepEqual(shownCalls, new Set([...calls.map((c) => c.id), busyCall.id]));
    const busyGroup = groups.filter({ has: page.locator(`a[href="/ui/calls/${busyCall.id}"]`) });
    assert.match(await text(page, `tbody.delivery:has(a[href="/ui/calls/${busyCall.id}"]) tr.delivery-head`), /Sending now/);
    assert.equal(await busyGroup.locator('p.cannot').textContent(), "Can't redeliver yet: it is being sent right now. Reload in a moment.");
    assert.equal(await page.locator('tbody.delivery button:has-text("Redeliver")').count(), 2);
    await screenshot(page, 'webhook-grouped');

    // The app's access ends: its waiting delivery is dropped, and the subscription is disabled.
    await t.db.pool.query('DELETE FROM webhook_delivery_leases WHERE delivery_id = $1', [busy.id]);
    await page.goto(`${t.url}/connected-apps`);
    await page.locator('tbody tr', { hasText: 'Zap Platform' }).locator('button:has-text("Revoke")').click();
    await page.waitForURL(/revoked=1$/);
    await page.goto(`${t.url}/ui/webhooks/${hook.id}`);
    assert.equal(await page.locator('tbody.delivery button:has-text("Redeliver")').count(), 0);
    assert.equal(
      await busyGroup.locator('p.cannot').textContent(),
      "Can't redeliver: it was dropped when the app's access ended, and is never sent.",
    );
    for (const call of calls) {
      assert.equal(
        await groups
          .filter({ has: page.locator(`a[href="/ui/calls/${call.id}"]`) })
          .locator('p.cannot')
          .textContent(),
        "Can't redeliver: the subscription is disabled (the app's access was revoked); the app must connect again and subscribe.",
      );
    }
    await page.goto(`${t.url}/ui/calls/${busyCall.id}`);
    assert.match(await text(page, 'section[aria-labelledby=deliveries-title] tbody tr'), /Dropped\s*never sent: the app's access ended/);
    assert.equal(
      await page.locator('section[aria-labelledby=deliveries-title] tbody tr p.cannot').textContent(),
      "Can't redeliver: it was dropped when the app's access ended, and is never sent.",
    );
    // A call's page says why as the subscription's does.
    await page.goto(`${t.url}/ui/calls/${calls[0]!.id}`);
    assert.equal(
      await page.locator('section[aria-labelledby=deliveries-title] tbody tr p.cannot').textContent(),
      "Can't redeliver: the subscription is disabled (the app's access was revoked); the app must connect again and subscribe.",
    );
    await context.close();
  });
});

// The Activity page as an owner sees it in headless Chromium: the
// organization's audit log, newest first, its filters, each event linking to
// its subscription or app, and a subscription's page listing its own events.
// A plain member has no Activity link and gets the 403 page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.ts';
import { launchChromium, screenshot, signedInBrowser, SKIP_WITHOUT_BROWSER } from '../helpers/browser.ts';
import { createMember } from '../helpers/fixtures.ts';
import { connectPlatform, startDeliveryRig, subscribeHook, type DeliveryRig } from '../helpers/webhooks.ts';

describe('the Activity page, in headless Chromium', { skip: SKIP_WITHOUT_BROWSER }, () => {
  let rig: DeliveryRig;
  let t: TestApp;
  let browser: Browser;

  before(async () => {
    rig = await startDeliveryRig({ listen: true });
    t = rig.t;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await rig?.close();
  });

  const rows = async (page: Page) =>
    (await page.locator('main table tbody tr').allTextContents()).map((row) => row.replace(/\s+/g, ' ').trim());

  test('an owner reads who did what, filters it, follows an event to its subscription, whose page lists its own events', async () => {
    const org = await connectPlatform(t);
    const kept = await subscribeHook(t, org, { hookUrl: `${rig.target.url}/activity/kept` });
    const removed = await subscribeHook(t, org, { hookUrl: `${rig.target.url}/activity/removed` });
    const del = await t.app.inject({ method: 'DELETE', url: `/webhooks/${removed.id}`, headers: { 'x-user-token': org.member.token } });
    assert.equal(del.statusCode, 204);

    const { context, page } = await signedInBrowser(browser, t.url, org.member.email);
    try {
      await page.click('header nav.sections a:text-is("Activity")');
      await page.waitForURL((url) => url.pathname === '/ui/activity');
      assert.equal(await page.locator('header nav a[aria-current="page"]').textContent(), 'Activity');
      const all = await rows(page);
      assert.equal(all.length, 4, all.join('\n'));
      assert.match(all[0]!, /Subscription deleted: deleted/);
      assert.ok(all[0]!.includes(org.member.email), 'the user who deleted it');
      assert.ok(
        all[0]!.includes(`${new URL(rig.target.url).origin}/… (deleted)`),
        'a deleted subscription is named by its scheme and host (audit details keep no path), not linked',
      );
      assert.match(all[1]!, /Subscription created/);
      assert.match(all[3]!, /App connected/);
      assert.ok(all[3]!.includes(org.client.name));
      await screenshot(page, 'activity');

      await page.selectOption('#type', 'subscription.created');
      await page.click('form.filters button[type=submit]');
      await page.waitForURL((url) => url.searchParams.get('type') === 'subscription.created');
      const created = await rows(page);
      assert.equal(created.length, 2);
      assert.ok(created.every((row) => row.includes('Subscription created')));
      assert.ok(
        created.every((row) => row.includes('(app)')),
        'made by the app',
      );

      await page.fill('#since', '2999-01-01');
      await page.click('form.filters button[type=submit]');
      await page.waitForURL((url) => url.searchParams.get('since') === '2999-01-01');
      assert.match((await page.locator('main .card').textContent()) ?? '', /No activity matches these filters/);

      await page.goto(`${t.url}/ui/activity?since=yesterday`);
      assert.equal(await page.locator('#since-error').textContent(), 'Enter a date as YYYY-MM-DD.');

      await page.goto(`${t.url}/ui/activity?type=subscription.created`);
      await page.click(`main table a[href="/ui/webhooks/${kept.id}"]`);
      await page.waitForURL((url) => url.pathname === `/ui/webhooks/${kept.id}`);
      const own = await page.locator('main .card:has(h2:text-is("Activity")) table tbody tr').allTextContents();
      assert.equal(own.length, 1);
      assert.match(own[0]!, /Subscription created/);

      await page.goto(`${t.url}/ui/activity?type=grant.created`);
      await page.click('main table a[href="/connected-apps"]');
      await page.waitForURL((url) => url.pathname === '/connected-apps');
    } finally {
      await context.close();
    }
  });

  test('disconnecting an app in the web UI shows as its revocation by that user, with its subscription disabled', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${rig.target.url}/activity/disconnected` });
    const { context, page } = await signedInBrowser(browser, t.url, org.member.email);
    try {
      await page.goto(`${t.url}/connected-apps`);
      await page.click('button:text-is("Revoke")');
      await page.waitForURL((url) => url.pathname === '/connected-apps');
      await page.goto(`${t.url}/ui/activity?type=grant.revoked,subscription.disabled`);
      const shown = await rows(page);
      assert.equal(shown.length, 2, shown.join('\n'));
      assert.match(shown[0]!, /Subscription disabled: the app's access ended/);
      assert.match(shown[1]!, /App access revoked: disconnected in the web UI/);
      assert.ok(shown.every((row) => row.includes(org.member.email)));
      assert.equal(await page.locator(`main table a[href="/ui/webhooks/${hook.id}"]`).count(), 1);
    } finally {
      await context.close();
    }
  });

  test('a plain member has no Activity link, and the page answers 403', async () => {
    const owner = await createMember(t.db.pool);
    const member = await createMember(t.db.pool, { org: owner.org, role: 'member' });
    const { context, page } = await signedInBrowser(browser, t.url, member.email);
    try {
      assert.equal(await page.locator('header nav.sections a:text-is("Activity")').count(), 0);
      const res = await page.goto(`${t.url}/ui/activity`);
      assert.equal(res?.status(), 403);
    } finally {
      await context.close();
    }
    const admin = await createMember(t.db.pool, { org: owner.org, role: 'admin' });
    const signedIn = await signedInBrowser(browser, t.url, admin.email);
    try {
      assert.equal(await signedIn.page.locator('header nav.sections a:text-is("Activity")').count(), 1);
    } finally {
      await signedIn.context.close();
    }
  });
});

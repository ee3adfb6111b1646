import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createCall } from '../../src/calls/calls.service.ts';
import { setOrganizationActive } from '../../src/organizations/organizations.queries.ts';
import { setUserActiveByEmail } from '../../src/organizations/users.queries.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { launchChromium, screenshot, signedInBrowser, SKIP_WITHOUT_BROWSER } from '../helpers/browser.ts';
import { createMember } from '../helpers/fixtures.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { createClient, issueTokens, platformHeaders, tokenRequest } from '../helpers/oauth.ts';
import {
  claimDueDeliveries,
  completeCall,
  connectPlatform,
  deliveriesOf,
  startTestWorker,
  subscribeHook,
  waitFor,
  WEBHOOK_TEST_ENV,
  type Connection,
} from '../helpers/webhooks.ts';
import type { DeliveryWorker } from '../../src/webhooks/worker/worker.ts';

// A webhook subscription lives and dies with the OAuth
// grant it was made under. Each test connects two apps to one organization:
// the one whose access ends, and a control app that stays connected, so "the
// worker ran and delivered the control's event" proves that the silence of the
// disconnected app's URL is the fix at work, not a worker that never looked.
describe('webhook subscriptions end with their grant', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let worker: DeliveryWorker | undefined;

  before(async () => {
    t = await startTestApp({ listen: true, env: { ...WEBHOOK_TEST_ENV, REFRESH_REUSE_GRACE: '0' } });
    target = await startHttpsTarget();
  });
  after(async () => {
    await worker?.stop();
    await target.close();
    await t.close();
  });

  async function ensureWorker() {
    worker ??= await startTestWorker(t);
  }

  /** An organization with a disconnecting app (`gone`) and a control app (`kept`), each subscribed to its own path. */
  async function twoApps(tag: string) {
    const gone = await connectPlatform(t, { scopes: ['calls:read'] });
    const control = await createClient(t.db.pool, { name: 'Control Platform', scopes: ['calls:read'] });
    const kept = await connectPlatform(t, { member: gone.member, client: control });
    const goneHook = await subscribeHook(t, gone, { hookUrl: `${target.url}/${tag}/gone` });
    const keptHook = await subscribeHook(t, kept, { hookUrl: `${target.url}/${tag}/kept` });
    return { gone, kept, goneHook, keptHook };
  }

  async function listAs(connection: Connection) {
    const res = await t.app.inject({ url: '/webhooks', headers: { 'x-user-token': connection.member.token } });
    assert.equal(res.statusCode, 200);
    return res.json() as { id: string; status: string; disabled_reason: string | null }[];
  }

  /** The control's delivery for the call arrived; nothing ever went to the disconnected path. */
  async function assertOnlyControlReceives(tag: string, callId: string) {
    await waitFor('the control delivery', async () =>
      target.requests.some((r) => r.url === `/${tag}/kept` && JSON.parse(r.body).id === callId),
    );
    assert.deepEqual(
      target.requests.filter((r) => r.url === `/${tag}/gone`),
      [],
    );
  }

  test('revoking the app on /connected-apps in Chromium disables its subscription; the next call is not sent to it', {
    skip: SKIP_WITHOUT_BROWSER,
  }, async () => {
    await ensureWorker();
    const { gone, goneHook } = await twoApps('ui');
    const browser: Browser = await launchChromium();
    try {
      const { context, page } = await signedInBrowser(browser, t.url, gone.member.email);
      await page.goto(`${t.url}/connected-apps`);
      await page.locator('tr', { hasText: 'Zap Platform' }).locator('button', { hasText: 'Revoke' }).click();
      await page.waitForURL(/\/connected-apps/);
      assert.equal(await page.locator('tr', { hasText: 'Zap Platform' }).count(), 0);

      const call = await completeCall(t, gone.member, { summary: 'Confidential: caller disputes an invoice.' });
      await assertOnlyControlReceives('ui', call.id);
      assert.deepEqual(await deliveriesOf(t, goneHook.id), [], 'no delivery was even queued for it');

      // The reason shows on the webhooks pages, and there is no Re-enable button.
      await page.goto(`${t.url}/ui/webhooks`);
      const row = page.locator('tbody tr', { hasText: '/ui/gone' });
      assert.match((await row.textContent()) ?? '', /Disabled.*access was revoked/s);
      assert.equal(await row.locator('button', { hasText: 'Re-enable' }).count(), 0);
      await row.locator('text=Deliveries').click();
      assert.match((await page.locator('dl.facts').textContent()) ?? '', /Disabled because.*access was revoked/s);
      await screenshot(page, 'webhook-grant-revoked');
      await context.close();

      const listed = await t.app.inject({ url: `/webhooks/${goneHook.id}`, headers: { 'x-user-token': gone.member.token } });
      assert.equal(listed.json().status, 'disabled');
      assert.equal(listed.json().disabled_reason, 'grant_revoked');
    } finally {
      await browser.close();
    }
  });

  test('deactivating the user who connected the app stops its subscription', async () => {
    await ensureWorker();
    // The owner's connection is the control; a second member connects the app that will stop.
    const kept = await connectPlatform(t);
    await subscribeHook(t, kept, { hookUrl: `${target.url}/user/kept` });
    const granted = await createMember(t.db.pool, { org: kept.member.org });
    const app = await createClient(t.db.pool, { name: 'Personal Platform', scopes: ['calls:read'] });
    const gone = await connectPlatform(t, { member: granted, client: app });
    const goneHook = await subscribeHook(t, gone, { hookUrl: `${target.url}/user/gone` });

    await setUserActiveByEmail(t.db.pool, granted.email, false);
    const call = await completeCall(t, kept.member, { summary: 'Caller asked for the manager.' });
    await assertOnlyControlReceives('user', call.id);
    assert.deepEqual(await deliveriesOf(t, goneHook.id), []);
    const listed = (await listAs(kept)).find((s) => s.id === goneHook.id);
    assert.equal(listed?.status, 'disabled');
    assert.equal(listed?.disabled_reason, 'user_deactivated');

    // Reactivating the user does not silently resume the hook, but it can now be re-enabled.
    await setUserActiveByEmail(t.db.pool, granted.email, true);
    assert.equal((await listAs(kept)).find((s) => s.id === goneHook.id)?.status, 'disabled');
    const enable = await t.app.inject({
      method: 'POST',
      url: `/webhooks/${goneHook.id}/enable`,
      headers: { 'x-user-token': kept.member.token },
    });
    assert.equal(enable.statusCode, 200);
    assert.equal(enable.json().status, 'active');
    assert.equal(enable.json().disabled_reason, null);
  });

  test('deactivating the organization drops deliveries already queued: nothing is sent', async () => {
    // Queued while no worker runs, then the organization is deactivated, then a worker starts.
    const { gone, goneHook, keptHook } = await twoApps('org');
    await worker?.stop();
    worker = undefined;
    await completeCall(t, gone.member, { summary: 'Queued before the organization was deactivated.' });
    assert.equal((await deliveriesOf(t, goneHook.id)).length, 1);
    await setOrganizationActive(t.db.pool, gone.member.org.id, false);
    // A call recorded for the inactive organization by a system path enqueues nothing either.
    await createCall(t.db.pool, gone.member.org.id, { summary: 'After deactivation.', duration_seconds: 5 });

    await ensureWorker();
    const control = await connectPlatform(t);
    const controlHook = await subscribeHook(t, control, { hookUrl: `${target.url}/org/control` });
    const controlCall = await completeCall(t, control.member);
    await waitFor("an unrelated organization's delivery", async () =>
      target.requests.some((r) => r.url === '/org/control' && JSON.parse(r.body).id === controlCall.id),
    );
    assert.deepEqual(
      target.requests.filter((r) => r.url.startsWith('/org/gone') || r.url.startsWith('/org/kept')),
      [],
    );
    for (const hook of [goneHook, keptHook]) {
      const rows = await deliveriesOf(t, hook.id);
      assert.deepEqual(
        rows.map((r) => [r.status, r.attempts]),
        [['failed', 0]],
        'the queued delivery was dropped unsent',
      );
    }
    const { rows } = await t.db.pool.query('SELECT status, disabled_reason FROM webhook_subscriptions WHERE id = ANY ($1)', [
      [goneHook.id, keptHook.id],
    ]);
    assert.deepEqual(rows, [
      { status: 'disabled', disabled_reason: 'organization_deactivated' },
      { status: 'disabled', disabled_reason: 'organization_deactivated' },
    ]);
    assert.ok(controlHook);
  });

  test('a refresh token reused after the grace revokes the grant, and with it the subscription', async () => {
    await ensureWorker();
    const member = await createMember(t.db.pool);
    const client = await createClient(t.db.pool, { name: 'Zap Platform', scopes: ['calls:read'] });
    const tokens = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    const gone: Connection = { member, client, headers: platformHeaders(tokens, client), accessToken: tokens.access_token };
    const goneHook = await subscribeHook(t, gone, { hookUrl: `${target.url}/reuse/gone` });
    const controlClient = await createClient(t.db.pool, { name: 'Control Platform', scopes: ['calls:read'] });
    const kept = await connectPlatform(t, { member, client: controlClient });
    await subscribeHook(t, kept, { hookUrl: `${target.url}/reuse/kept` });

    const form = {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: client.client_id,
      client_secret: client.client_secret,
    };
    assert.equal((await tokenRequest(t.app, form)).statusCode, 200);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past REFRESH_REUSE_GRACE=0
    const reused = await tokenRequest(t.app, form);
    assert.equal(reused.statusCode, 400);
    assert.equal(reused.json().error, 'invalid_grant');

    const call = await completeCall(t, member);
    await assertOnlyControlReceives('reuse', call.id);
    assert.deepEqual(await deliveriesOf(t, goneHook.id), []);
    const listed = await listAs(gone);
    assert.equal(listed.find((s) => s.id === goneHook.id)?.disabled_reason, 'grant_revoked');
    // Neither the user nor the platform can switch it back on: the app must connect again.
    const enable = await t.app.inject({
      method: 'POST',
      url: `/webhooks/${goneHook.id}/enable`,
      headers: { 'x-user-token': member.token },
    });
    assert.equal(enable.statusCode, 409);
    assert.equal(enable.json().code, 'WEBHOOK_SUBSCRIPTION_GRANT_ENDED');
  });

  test('subscribing again after reconnecting binds the hook to the new grant and resumes it', async () => {
    await ensureWorker();
    const gone = await connectPlatform(t);
    const hook = await subscribeHook(t, gone, { hookUrl: `${target.url}/again/hook` });
    await t.db.pool.query(`UPDATE oauth_grants SET revoked_at = now(), revoked_reason = 'user' WHERE organization_id = $1`, [
      gone.member.org.id,
    ]);
    const reconnected = await connectPlatform(t, { member: gone.member, client: gone.client });
    const again = await subscribeHook(t, reconnected, { hookUrl: `${target.url}/again/hook` });
    assert.equal(again.id, hook.id);
    const call = await completeCall(t, gone.member);
    await waitFor('the delivery under the new grant', async () =>
      target.requests.some((r) => r.url === '/again/hook' && JSON.parse(r.body).id === call.id),
    );
  });

  // The triggers disable a subscription in the revoking transaction. These two
  // switch them off to show the second line on its own: enqueue and claim each
  // check the grant, which is what closes the window where a call completes
  // while a revocation commits.
  test('with the revocation triggers off, the outbox still enqueues nothing for a dead grant', async () => {
    const gone = await connectPlatform(t);
    const hook = await subscribeHook(t, gone, { hookUrl: `${target.url}/window/enqueue` });
    await t.db.pool.query('ALTER TABLE oauth_grants DISABLE TRIGGER oauth_grants_stop_webhooks');
    try {
      await t.db.pool.query(`UPDATE oauth_grants SET revoked_at = now(), revoked_reason = 'user' WHERE organization_id = $1`, [
        gone.member.org.id,
      ]);
    } finally {
      await t.db.pool.query('ALTER TABLE oauth_grants ENABLE TRIGGER oauth_grants_stop_webhooks');
    }
    await completeCall(t, gone.member);
    assert.deepEqual(await deliveriesOf(t, hook.id), []);
  });

  test('with the revocation triggers off, a delivery queued before the revocation is never claimed', async () => {
    await worker?.stop();
    worker = undefined;
    const gone = await connectPlatform(t);
    const hook = await subscribeHook(t, gone, { hookUrl: `${target.url}/window/claim` });
    await completeCall(t, gone.member);
    assert.equal((await deliveriesOf(t, hook.id)).length, 1);
    await t.db.pool.query('ALTER TABLE users DISABLE TRIGGER users_stop_webhooks');
    try {
      await setUserActiveByEmail(t.db.pool, gone.member.email, false);
    } finally {
      await t.db.pool.query('ALTER TABLE users ENABLE TRIGGER users_stop_webhooks');
    }
    const claimed = await claimDueDeliveries(t.db.pool, { limit: 100, leaseMs: 60_000 });
    assert.deepEqual(
      claimed.filter((c) => c.subscription_id === hook.id),
      [],
    );
    assert.deepEqual(
      (await deliveriesOf(t, hook.id)).map((d) => [d.status, d.attempts]),
      [['pending', 0]],
    );
    // Release anything else this test's claim leased, so the shared worker can send it.
    await t.db.pool.query('DELETE FROM webhook_delivery_leases WHERE delivery_id = ANY ($1)', [claimed.map((c) => c.id)]);
  });
});

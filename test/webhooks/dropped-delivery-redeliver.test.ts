// A delivery dropped because the app's access ended (grant revoked, user or
// organization deactivated) is never sent, by recover or by redeliver, even
// after the app is connected again and its subscription is active once more
// (docs/security.md, "Review findings of the second review", 1). Through the
// HTTP API with a real worker and a real HTTPS receiver: each case ends with a
// fresh call that the same subscription does receive, which proves the worker
// ran and the hook is live, so the dropped delivery's absence is the rule at work.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { withOrg } from '../../src/db/with-org.ts';
import { setOrganizationActive } from '../../src/organizations/organizations.queries.ts';
import { setUserActiveByEmail } from '../../src/organizations/users.queries.ts';
import { requeueDelivery } from '../../src/webhooks/deliveries.queries.ts';
import type { DeliveryWorker } from '../../src/webhooks/worker/worker.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { createClient, issueTokens, platformHeaders, type TestClient } from '../helpers/oauth.ts';
import { csrfToken, signedInAgent } from '../helpers/web.ts';
import {
  attemptsOf,
  completeCall,
  deliveriesOf,
  startTestWorker,
  subscribeHook,
  waitFor,
  WEBHOOK_TEST_ENV,
  type Connection,
} from '../helpers/webhooks.ts';

const HOUR = 3_600_000;

describe("redeliver refuses a delivery dropped when the app's access ended, as recover does", () => {
  let t: TestApp;
  let target: HttpsTarget;
  let worker: DeliveryWorker | undefined;

  before(async () => {
    // A failed attempt is retried only an hour later: a delivery stays pending, with an attempt, while access ends.
    t = await startTestApp({ listen: true, env: { ...WEBHOOK_TEST_ENV, WEBHOOK_RETRY_SCHEDULE: '1h' } });
    target = await startHttpsTarget();
  });
  after(async () => {
    await worker?.stop();
    await target.close();
    await t.close();
  });

  async function startWorker() {
    worker ??= await startTestWorker(t);
  }
  async function stopWorker() {
    await worker?.stop();
    worker = undefined;
  }

  async function connect(member: Member, client: TestClient) {
    const tokens = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    const connection: Connection = { member, client, headers: platformHeaders(tokens, client), accessToken: tokens.access_token };
    return { connection, refreshToken: tokens.refresh_token };
  }

  const redeliver = (id: string, headers: Record<string, string>) =>
    t.app.inject({ method: 'POST', url: `/webhooks/deliveries/${id}/redeliver`, headers });
  const recover = (id: string, headers: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: `/webhooks/${id}/recover`,
      headers,
      payload: { since: new Date(Date.now() - HOUR).toISOString() },
    });
  const sentWithId = (deliveryId: string) => target.requests.filter((r) => r.headers['x-delivery-id'] === deliveryId);

  /** Both refuse the dropped delivery (redeliver as the user and as the platform), nothing changes, and a new call is delivered. */
  async function assertNeverSentAgain(input: {
    hookId: string;
    droppedId: string;
    connection: Connection;
    path: string;
    sentBefore: number;
  }) {
    const { hookId, droppedId, connection, path, sentBefore } = input;
    const subscription = await t.app.inject({ url: `/webhooks/${hookId}`, headers: { 'x-user-token': connection.member.token } });
    assert.equal(subscription.json().status, 'active', 'the app is connected again and its subscription active');
    for (const headers of [{ 'x-user-token': connection.member.token }, connection.headers]) {
      const res = await redeliver(droppedId, headers);
      assert.equal(res.statusCode, 409, res.body);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      const problem = res.json();
      assert.equal(problem.code, 'WEBHOOK_DELIVERY_ACCESS_ENDED');
      assert.match(
        problem.detail,
        new RegExp(`${droppedId}.*dropped unsent when the app's access ended.*never sent.*redelivery or recover`),
      );
    }
    const recovered = await recover(hookId, { 'x-user-token': connection.member.token });
    assert.equal(recovered.statusCode, 202, recovered.body);
    assert.deepEqual([recovered.json().requeued, recovered.json().more], [0, false]);
    // The page's Redeliver button says why, on the page the user came from.
    const agent = await signedInAgent(t.url, connection.member.email);
    const page = await agent.post(`/ui/webhooks/${hookId}/deliveries/${droppedId}/redeliver`, { csrf: await csrfToken(agent) });
    assert.equal(page.status, 303);
    assert.equal(page.location, `/ui/webhooks/${hookId}?problem=access_ended`);
    assert.match((await agent.get(page.location!)).body, /dropped when the app&#39;s access ended: it is never sent/);
    // The requeue statement holds the rule itself: a revocation that drops a
    // delivery after redeliver has read it still wins.
    const requeued = await withOrg(t.app.db, connection.member.org.id, (db) => requeueDelivery(db, droppedId));
    assert.equal(requeued, undefined);
    const [row] = (await deliveriesOf(t, hookId)).filter((d) => d.id === droppedId);
    assert.equal(row!.status, 'failed', 'still dropped');

    await startWorker();
    const fresh = await completeCall(t, connection.member, { summary: 'After the app connected again.' });
    await waitFor('the new call at the reconnected hook', async () =>
      target.requests.some((r) => r.url === path && JSON.parse(r.body).id === fresh.id),
    );
    assert.equal(sentWithId(droppedId).length, sentBefore, 'the dropped delivery was not sent again');
    // The refusal is about that delivery only: one that was sent may be sent again.
    const [delivered] = (await deliveriesOf(t, hookId)).filter((d) => d.call_id === fresh.id);
    await waitFor(
      'the new delivery to settle',
      async () => (await deliveriesOf(t, hookId)).find((d) => d.id === delivered!.id)?.status === 'succeeded',
    );
    assert.equal((await redeliver(delivered!.id, connection.headers)).statusCode, 202);
    await waitFor('the redelivered call', async () => sentWithId(delivered!.id).length === 2);
  }

  test('revoked by the app (RFC 7009) while retrying, then reconnected: redeliver 409, recover skips it, nothing sent', async () => {
    await startWorker();
    const path = '/revoked/hook';
    let healthy = false;
    target.respond((request) => (request.url === path && !healthy ? { status: 503 } : { status: 200 }));
    const member = await createMember(t.db.pool);
    const client = await createClient(t.db.pool, { name: 'Zap Platform', scopes: ['calls:read'] });
    const first = await connect(member, client);
    const hook = await subscribeHook(t, first.connection, { hookUrl: `${target.url}${path}` });
    await completeCall(t, member, { summary: 'Sent once, answered 503, waiting for its retry.' });
    const [dropped] = await waitFor('the first attempt', async () => {
      const rows = await deliveriesOf(t, hook.id);
      return rows.length === 1 && rows[0]!.attempts === 1 && rows[0]!.lease_token === null ? rows : undefined;
    });
    assert.deepEqual(
      (await attemptsOf(t, dropped!.id)).map((a) => a.outcome),
      ['retrying'],
    );

    const revoked = await t.app.inject({
      method: 'POST',
      url: '/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        token: first.refreshToken,
        client_id: client.client_id,
        client_secret: client.client_secret,
      }).toString(),
    });
    assert.equal(revoked.statusCode, 200);
    assert.equal((await deliveriesOf(t, hook.id))[0]!.status, 'failed', 'dropped by the revocation');

    healthy = true;
    const again = await connect(member, client);
    assert.equal(
      (await subscribeHook(t, again.connection, { hookUrl: `${target.url}${path}` })).id,
      hook.id,
      'the same subscription, taken over',
    );
    await assertNeverSentAgain({ hookId: hook.id, droppedId: dropped!.id, connection: again.connection, path, sentBefore: 1 });
  });

  for (const ended of ['user', 'organization'] as const) {
    test(`queued when the ${ended} was deactivated, then reactivated and re-enabled: redeliver 409, recover skips it, nothing sent`, async () => {
      await stopWorker();
      const path = `/${ended}/hook`;
      const member = await createMember(t.db.pool);
      const client = await createClient(t.db.pool, { name: 'Zap Platform', scopes: ['calls:read'] });
      const { connection } = await connect(member, client);
      const hook = await subscribeHook(t, connection, { hookUrl: `${target.url}${path}` });
      await completeCall(t, member, { summary: 'Queued while no worker runs.' });
      const [dropped] = await deliveriesOf(t, hook.id);

      if (ended === 'user') await setUserActiveByEmail(t.db.pool, member.email, false);
      else await setOrganizationActive(t.db.pool, member.org.id, false);
      assert.deepEqual(
        (await deliveriesOf(t, hook.id)).map((d) => [d.status, d.attempts]),
        [['failed', 0]],
        'dropped unsent',
      );
      if (ended === 'user') await setUserActiveByEmail(t.db.pool, member.email, true);
      else await setOrganizationActive(t.db.pool, member.org.id, true);
      // The grant stands again, so the subscription may be switched back on.
      const enabled = await t.app.inject({ method: 'POST', url: `/webhooks/${hook.id}/enable`, headers: { 'x-user-token': member.token } });
      assert.equal(enabled.statusCode, 200, enabled.body);

      await assertNeverSentAgain({ hookId: hook.id, droppedId: dropped!.id, connection, path, sentBefore: 0 });
    });
  }
});

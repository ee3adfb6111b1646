// A subscription lives with the grant it was made under, and the grant with
// its user's membership of the organization: removing the membership (an
// operator's DELETE of the memberships row; the trigger
// memberships_stop_webhooks) stops the subscriptions of that user's grants in
// that organization, as a revocation does (docs/delivery-engine.md, T8). A
// second app connected by the organization's owner is the control: the worker
// ran and delivered its events, so the silence of the stopped one is the stop.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { createClient } from '../helpers/oauth.ts';
import {
  completeCall,
  connectPlatform,
  deliveriesOf,
  startTestWorker,
  startWebhookApp,
  subscribeHook,
  waitFor,
} from '../helpers/webhooks.ts';
import type { DeliveryWorker } from '../../src/webhooks/worker/worker.ts';

describe("removing a user's membership of an organization", () => {
  let t: TestApp;
  let target: HttpsTarget;
  let worker: DeliveryWorker | undefined;
  before(async () => {
    t = await startWebhookApp();
    target = await startHttpsTarget();
  });
  after(async () => {
    await worker?.stop();
    await target.close();
    await t.close();
  });

  test('disables the subscriptions of the apps that user connected there, fails what they had queued, and sends them nothing more', async () => {
    const kept = await connectPlatform(t);
    const keptHook = await subscribeHook(t, kept, { hookUrl: `${target.url}/kept` });
    const leaving = await createMember(t.db.pool, { org: kept.member.org });
    const app = await createClient(t.db.pool, { name: 'Personal Platform', scopes: ['calls:read'] });
    const gone = await connectPlatform(t, { member: leaving, client: app });
    const goneHook = await subscribeHook(t, gone, { hookUrl: `${target.url}/gone` });
    // The same user in another organization, connected to the same app there: that membership stays.
    const elsewhere = await createMember(t.db.pool);
    await t.db.pool.query("INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'member')", [
      elsewhere.org.id,
      leaving.user.id,
    ]);
    const otherOrg = await connectPlatform(t, { member: { ...leaving, org: elsewhere.org }, client: app });
    const otherOrgHook = await subscribeHook(t, otherOrg, { hookUrl: `${target.url}/other-org` });

    // Queued before the removal, with no worker running yet.
    const queued = await completeCall(t, kept.member, { summary: 'Queued before the removal' });
    assert.equal((await deliveriesOf(t, goneHook.id)).length, 1);

    const removed = await t.db.pool.query('DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2', [
      kept.member.org.id,
      leaving.user.id,
    ]);
    assert.equal(removed.rowCount, 1);

    const subscription = async (hookId: string) => {
      const res = await t.app.inject({ url: `/webhooks/${hookId}`, headers: { 'x-user-token': kept.member.token } });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { status: string; disabled_reason: string | null };
    };
    const stopped = await subscription(goneHook.id);
    assert.equal(stopped.status, 'disabled');
    assert.equal(stopped.disabled_reason, 'membership_removed');
    assert.equal((await subscription(keptHook.id)).status, 'active', "another user's connection is untouched");
    const { rows: otherRows } = await t.db.pool.query('SELECT status FROM webhook_subscriptions WHERE id = $1', [otherOrgHook.id]);
    assert.equal(otherRows[0].status, 'active', "the same user's connection in an organization they still belong to is untouched");
    const [dropped] = await deliveriesOf(t, goneHook.id);
    assert.equal(dropped!.status, 'failed', 'what was queued for it is dropped');

    // The worker delivers the control's events, old and new, and nothing to the stopped subscription.
    worker = await startTestWorker(t);
    const after = await completeCall(t, kept.member, { summary: 'After the removal' });
    await waitFor('both control deliveries', async () => {
      const ids = target.requests.filter((r) => r.url === '/kept').map((r) => JSON.parse(r.body).id);
      return ids.includes(queued.id) && ids.includes(after.id);
    });
    assert.deepEqual(
      target.requests.filter((r) => r.url === '/gone'),
      [],
    );
    assert.equal((await deliveriesOf(t, goneHook.id)).length, 1, 'no new delivery was queued for it');

    // It cannot be re-enabled while the access it was made under stays ended (docs/interface.md, the subscription's states).
    const enable = await t.app.inject({
      method: 'POST',
      url: `/webhooks/${goneHook.id}/enable`,
      headers: { 'x-user-token': kept.member.token },
    });
    assert.equal(enable.statusCode, 409, enable.body);
    assert.equal((await subscription(goneHook.id)).status, 'disabled');
  });
});

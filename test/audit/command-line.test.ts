import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { baseEnv, cliJson } from '../helpers/cli.ts';
import { createMember } from '../helpers/fixtures.ts';
import { connectPlatform, subscribeHook, WEBHOOK_TEST_ENV } from '../helpers/webhooks.ts';

// The switchboard command line as the audit log names it: system, label
// "command line", for the subscriptions its deactivations stop and its client
// deletion removes (the real executable, on the app's database).
describe('audit events of the command line', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    t = await startTestApp({ env: WEBHOOK_TEST_ENV });
    env = baseEnv({ DATABASE_URL: t.db.url });
  });
  after(() => t.close());

  const read = async (organizationId: string, subjectId: string) =>
    (
      await t.db.pool.query(
        `SELECT type, reason, actor_type, actor_id, actor_label FROM audit_events
          WHERE organization_id = $1 AND subject_id = $2 AND type IN ('subscription.disabled', 'subscription.deleted')`,
        [organizationId, subjectId],
      )
    ).rows;
  const byCommandLine = { actor_type: 'system', actor_id: null, actor_label: 'command line' };

  test('user deactivate, org deactivate and client delete', async () => {
    const owner = await createMember(t.db.pool);
    const platformUser = await createMember(t.db.pool, { org: owner.org, role: 'member' });
    const a = await connectPlatform(t, { member: platformUser });
    const hookA = await subscribeHook(t, a, { hookUrl: 'https://127.0.0.1:9/cli-user' });
    await cliJson(['user', 'deactivate', '--email', platformUser.email], env);
    assert.deepEqual(await read(owner.org.id, hookA.id), [{ type: 'subscription.disabled', reason: 'user_deactivated', ...byCommandLine }]);
    const res = await t.app.inject({ url: '/audit-events?type=subscription.disabled', headers: { 'x-user-token': owner.token } });
    assert.equal(res.json()[0].actor.label, 'command line');

    const b = await connectPlatform(t);
    const hookB = await subscribeHook(t, b, { hookUrl: 'https://127.0.0.1:9/cli-org' });
    await cliJson(['org', 'deactivate', b.member.org.id], env);
    assert.deepEqual(await read(b.member.org.id, hookB.id), [
      { type: 'subscription.disabled', reason: 'organization_deactivated', ...byCommandLine },
    ]);

    const c = await connectPlatform(t);
    const hookC = await subscribeHook(t, c, { hookUrl: 'https://127.0.0.1:9/cli-client' });
    await cliJson(['client', 'delete', c.client.client_id], env);
    assert.deepEqual(await read(c.member.org.id, hookC.id), [{ type: 'subscription.deleted', reason: 'client_deleted', ...byCommandLine }]);
  });
});

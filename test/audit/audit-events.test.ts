import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { COMMAND_LINE } from '../../src/audit/audit-actor.ts';
import { actAs } from '../../src/audit/audit-events.queries.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { deleteClient } from '../../src/oauth/clients.service.ts';
import { revokeConnectedApp } from '../../src/oauth/connected-apps.service.ts';
import { setOrganizationActive } from '../../src/organizations/organizations.queries.ts';
import { setUserActiveByEmail } from '../../src/organizations/users.queries.ts';
import type { HealthPolicy } from '../../src/webhooks/worker/endpoint-health.ts';
import { recordOutcomes } from '../../src/webhooks/worker/record.queries.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { createClient, obtainCode, tokenRequest, type TestClient } from '../helpers/oauth.ts';
import {
  answeredOutcome,
  claimDueDeliveries,
  completeCall,
  connectPlatform,
  settled,
  startTestWorker,
  subscribeHook,
  waitFor,
  WEBHOOK_TEST_ENV,
  type Connection,
} from '../helpers/webhooks.ts';
import { NO_CACHES } from '../../src/cache/caches.ts';

interface EventJson {
  id: string;
  type: string;
  occurred_at: string;
  actor: { type: string; id: string | null; label: string };
  subject: { type: string; id: string };
  reason: string | null;
  details: Record<string, unknown>;
}

// Each event type and reason of the audit log (issue 32): the change made as
// a user, an app or the system makes it, then the event read through
// GET /audit-events; a rolled-back change leaves none.
describe('audit log: every event type and reason, read through GET /audit-events', () => {
  let t: TestApp;
  let target: HttpsTarget;
  before(async () => {
    t = await startTestApp({ listen: true, env: { ...WEBHOOK_TEST_ENV, REFRESH_REUSE_GRACE: '0' } });
    target = await startHttpsTarget();
  });
  after(async () => {
    await target.close();
    await t.close();
  });

  async function events(member: Member, query = ''): Promise<EventJson[]> {
    const res = await t.app.inject({ url: `/audit-events${query}`, headers: { 'x-user-token': member.token } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as EventJson[];
  }

  async function only(member: Member, type: string, subjectId?: string): Promise<EventJson> {
    const found = (await events(member, `?type=${type}`)).filter((e) => subjectId === undefined || e.subject.id === subjectId);
    assert.equal(found.length, 1, `one ${type}: ${JSON.stringify(found)}`);
    return found[0]!;
  }

  async function connectWithHook(options: { member?: Member } = {}): Promise<Connection & { hookId: string }> {
    const connection = await connectPlatform(t, options.member ? { member: options.member } : {});
    const hook = await subscribeHook(t, connection, { hookUrl: `${target.url}/hooks/${Math.random().toString(36).slice(2)}` });
    return { ...connection, hookId: hook.id };
  }

  /** A client connected through the consent page and the code exchange: the grant a user approves. */
  async function consent(member: Member, client: TestClient) {
    const { code, verifier } = await obtainCode(t.url, { client, member });
    const exchange = (form: Record<string, string> = {}) =>
      tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier!,
        redirect_uri: client.redirect_uris[0]!,
        client_id: client.client_id,
        client_secret: client.client_secret,
        ...form,
      });
    const res = await exchange();
    assert.equal(res.statusCode, 200, res.body);
    return { tokens: res.json() as { access_token: string; refresh_token: string }, exchange };
  }

  test('grant.created: a user approves a client on the consent page (actor the user, subject the client)', async () => {
    const member = await createMember(t.db.pool);
    const client = await createClient(t.db.pool, { name: 'Consent Platform' });
    await consent(member, client);
    const event = await only(member, 'grant.created');
    assert.deepEqual(event.actor, { type: 'user', id: member.user.id, label: member.email });
    assert.deepEqual(event.subject, { type: 'client', id: client.client_id });
    assert.equal(event.reason, null);
    assert.equal(event.details.client_name, 'Consent Platform');
    assert.match(event.id, /^[0-9a-f-]{36}$/);
    assert.ok(!Number.isNaN(Date.parse(event.occurred_at)));
  });

  test('grant.revoked code_replay: the code used twice revokes the grant; the subscription is disabled grant_revoked', async () => {
    const member = await createMember(t.db.pool);
    const client = await createClient(t.db.pool, { name: 'Replay Platform' });
    const { exchange } = await consent(member, client);
    assert.equal((await exchange()).statusCode, 400);
    const event = await only(member, 'grant.revoked');
    assert.equal(event.reason, 'code_replay');
    assert.deepEqual(event.actor, { type: 'client', id: client.client_id, label: 'Replay Platform' });
    assert.deepEqual(event.subject, { type: 'client', id: client.client_id });
  });

  test('grant.revoked refresh_reuse, and its subscriptions disabled grant_revoked by the same actor', async () => {
    const member = await createMember(t.db.pool);
    const client = await createClient(t.db.pool, { name: 'Reuse Platform', scopes: ['calls:read'] });
    const { tokens } = await consent(member, client);
    const headers = {
      authorization: `Bearer ${tokens.access_token}`,
      'x-client-id': client.client_id,
      'x-client-secret': client.client_secret,
    };
    const hook = await subscribeHook(t, { member, client, headers, accessToken: tokens.access_token }, { hookUrl: `${target.url}/reuse` });
    const refresh = () =>
      tokenRequest(t.app, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: client.client_id,
        client_secret: client.client_secret,
      });
    assert.equal((await refresh()).statusCode, 200);
    assert.equal((await refresh()).statusCode, 400);
    const revoked = await only(member, 'grant.revoked');
    assert.equal(revoked.reason, 'refresh_reuse');
    assert.equal(revoked.actor.type, 'client');
    const disabled = await only(member, 'subscription.disabled', hook.id);
    assert.equal(disabled.reason, 'grant_revoked');
    assert.deepEqual(disabled.actor, revoked.actor);
    assert.deepEqual(disabled.subject, { type: 'subscription', id: hook.id });
    // Scheme and host only: a receiver's own secret is often in the path (Zapier's is).
    assert.equal(disabled.details.hook_url, `${target.url}/…`);
    // The revocation came first, within the one transaction.
    const order = (await events(member, '?type=grant.revoked,subscription.disabled')).map((e) => e.type);
    assert.deepEqual(order, ['subscription.disabled', 'grant.revoked']);
  });

  test('grant.revoked revoked: the client revokes its refresh token (RFC 7009)', async () => {
    const member = await createMember(t.db.pool);
    const client = await createClient(t.db.pool, { name: 'Revoking Platform' });
    const { tokens } = await consent(member, client);
    const res = await tokenRequest(
      t.app,
      { token: tokens.refresh_token, client_id: client.client_id, client_secret: client.client_secret },
      { path: '/oauth/revoke' },
    );
    assert.equal(res.statusCode, 200, res.body);
    const event = await only(member, 'grant.revoked');
    assert.equal(event.reason, 'revoked');
    assert.deepEqual(event.actor, { type: 'client', id: client.client_id, label: 'Revoking Platform' });
  });

  test('grant.revoked disconnected: a user disconnects the app in the web UI; subscription.disabled grant_revoked names the user', async () => {
    const { member, client, hookId } = await connectWithHook();
    const admin = await createMember(t.db.pool, { org: member.org, role: 'admin' });
    const actor = { type: 'user' as const, id: admin.user.id, label: admin.email };
    assert.equal(await revokeConnectedApp(t.app.db, NO_CACHES, member.org.id, client.client_id, actor), true);
    const event = await only(member, 'grant.revoked');
    assert.equal(event.reason, 'disconnected');
    assert.deepEqual(event.actor, actor);
    const disabled = await only(member, 'subscription.disabled', hookId);
    assert.equal(disabled.reason, 'grant_revoked');
    assert.deepEqual(disabled.actor, actor);
  });

  test('subscription.created by the app, subscription.deleted unsubscribed (DELETE /webhooks/subscribe)', async () => {
    const connection = await connectPlatform(t);
    const hookUrl = `${target.url}/unsubscribe-me`;
    const hook = await subscribeHook(t, connection, { hookUrl, secret: 'a-webhook-secret-that-must-not-leak' });
    const created = await only(connection.member, 'subscription.created');
    assert.deepEqual(created.actor, { type: 'client', id: connection.client.client_id, label: connection.client.name });
    assert.deepEqual(created.subject, { type: 'subscription', id: hook.id });
    assert.equal(created.details.hook_url, `${target.url}/…`);
    const res = await t.app.inject({ method: 'DELETE', url: '/webhooks/subscribe', headers: connection.headers, payload: { hookUrl } });
    assert.equal(res.statusCode, 200, res.body);
    const deleted = await only(connection.member, 'subscription.deleted');
    assert.equal(deleted.reason, 'unsubscribed');
    assert.equal(deleted.actor.type, 'client');
    assert.deepEqual(deleted.subject, { type: 'subscription', id: hook.id });
    const all = JSON.stringify(await events(connection.member));
    assert.ok(!all.includes('a-webhook-secret-that-must-not-leak'), 'no secret in any event');
    assert.ok(!all.includes(connection.accessToken), 'no token in any event');
  });

  test('subscription.secret_changed: subscribing the URL again with another secret, never the secret itself', async () => {
    const connection = await connectPlatform(t);
    const hookUrl = `${target.url}/hooks/catch/123/zap-own-secret/`;
    const hook = await subscribeHook(t, connection, { hookUrl });
    const changed = async () => (await events(connection.member, '?type=subscription.secret_changed')).length;
    // No secret given keeps the stored one: nothing changed.
    await subscribeHook(t, connection, { hookUrl });
    assert.equal(await changed(), 0);
    await subscribeHook(t, connection, { hookUrl, secret: 'first-secret-must-not-leak' });
    assert.equal(await changed(), 1, 'none before, one now');
    await subscribeHook(t, connection, { hookUrl, secret: 'first-secret-must-not-leak' });
    await subscribeHook(t, connection, { hookUrl });
    assert.equal(await changed(), 1, 'the same secret again, or none, changes nothing');
    await subscribeHook(t, connection, { hookUrl, secret: 'second-secret-must-not-leak' });
    const [latest] = await events(connection.member, '?type=subscription.secret_changed');
    assert.equal(await changed(), 2);
    assert.deepEqual(latest!.actor, { type: 'client', id: connection.client.client_id, label: connection.client.name });
    assert.deepEqual(latest!.subject, { type: 'subscription', id: hook.id });
    assert.equal(latest!.reason, null);
    assert.deepEqual(latest!.details, { hook_url: `${target.url}/…`, client_id: connection.client.client_id, event: 'call.completed' });
    const all = JSON.stringify(await events(connection.member));
    assert.ok(!all.includes('must-not-leak') && !all.includes('zap-own-secret'), 'no secret and no path in any event');
    // The members' view keeps the full URL.
    const list = await t.app.inject({ url: '/webhooks', headers: { 'x-user-token': connection.member.token } });
    assert.equal(list.json()[0].callback_url, hookUrl);
  });

  test('subscription.deleted deleted: DELETE /webhooks/{id} by a user', async () => {
    const { member, hookId } = await connectWithHook();
    const res = await t.app.inject({ method: 'DELETE', url: `/webhooks/${hookId}`, headers: { 'x-user-token': member.token } });
    assert.equal(res.statusCode, 204, res.body);
    const event = await only(member, 'subscription.deleted');
    assert.equal(event.reason, 'deleted');
    assert.deepEqual(event.actor, { type: 'user', id: member.user.id, label: member.email });
  });

  test('subscription.deleted client_deleted: the command line deletes the client', async () => {
    const { member, client, hookId } = await connectWithHook();
    assert.equal(await deleteClient(t.db.pool, client.client_id), true);
    const event = await only(member, 'subscription.deleted', hookId);
    assert.equal(event.reason, 'client_deleted');
    assert.deepEqual(event.actor, { type: 'system', id: null, label: 'command line' });
  });

  test('subscription.deleted gone: the receiver answers 410 to the worker', async () => {
    const { member, hookId } = await connectWithHook();
    target.respond(() => ({ status: 410 }));
    const worker = await startTestWorker(t);
    try {
      await completeCall(t, member);
      const event = await waitFor('subscription.deleted gone', async () =>
        (await events(member, '?type=subscription.deleted')).find((e) => e.subject.id === hookId),
      );
      assert.equal(event.reason, 'gone');
      assert.deepEqual(event.actor, { type: 'system', id: null, label: 'worker' });
    } finally {
      await worker.stop();
      target.respond(() => ({ status: 200 }));
    }
  });

  test('subscription.disabled user_deactivated, organization_deactivated (command line) and membership_removed', async () => {
    const aOwner = await createMember(t.db.pool);
    const a = await connectWithHook({ member: await createMember(t.db.pool, { org: aOwner.org, role: 'member' }) });
    await withTransaction(t.db.pool, async (tx) => {
      await actAs(tx, COMMAND_LINE);
      await setUserActiveByEmail(tx, a.member.email, false);
    });
    const byUser = await only(aOwner, 'subscription.disabled', a.hookId);
    assert.equal(byUser.reason, 'user_deactivated');
    assert.deepEqual(byUser.actor, { type: 'system', id: null, label: 'command line' });

    const b = await connectWithHook();
    await withTransaction(t.db.pool, async (tx) => {
      await actAs(tx, COMMAND_LINE);
      await setOrganizationActive(tx, b.member.org.id, false);
    });
    const reader = await createMember(t.db.pool);
    // The organization is inactive, so its owner's token no longer works: read its log as the database has it.
    const { rows } = await t.db.pool.query(
      "SELECT type, reason, actor_label FROM audit_events WHERE organization_id = $1 AND type = 'subscription.disabled'",
      [b.member.org.id],
    );
    assert.deepEqual(rows, [{ type: 'subscription.disabled', reason: 'organization_deactivated', actor_label: 'command line' }]);
    assert.equal((await events(reader, '?type=subscription.disabled')).length, 0, "another organization's events are not visible");

    const owner = await createMember(t.db.pool);
    const platformUser = await createMember(t.db.pool, { org: owner.org, role: 'member' });
    const c = await connectWithHook({ member: platformUser });
    await withTransaction(t.db.pool, async (tx) => {
      await actAs(tx, COMMAND_LINE);
      await tx.query('DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2', [owner.org.id, platformUser.user.id]);
    });
    const byMembership = await only(owner, 'subscription.disabled', c.hookId);
    assert.equal(byMembership.reason, 'membership_removed');
  });

  describe('the engine: circuit.opened and circuit.closed once per incident, subscription.disabled delivery_failures', () => {
    const policy: HealthPolicy = { maxInFlight: 10, breakerThreshold: 1, breakerWaitsMs: [0] };

    /** One attempt of each due delivery, answered `status`, recorded as the worker records it. */
    async function attempt(status: number, disableAfterMs = 5 * 86_400_000) {
      const claimed = await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 10_000 });
      assert.ok(claimed.length > 0, 'a delivery was due');
      await recordOutcomes(t.db.pool, { records: claimed.map((c) => answeredOutcome(c, status, new Date())), disableAfterMs, policy });
    }

    async function due(subscriptionId: string) {
      await t.db.pool.query("UPDATE webhook_deliveries SET next_attempt_at = now() WHERE subscription_id = $1 AND status = 'pending'", [
        subscriptionId,
      ]);
    }

    test('opened once, however often it opens again after failed probes; closed recovered by a healthy answer', async () => {
      const { member, hookId } = await connectWithHook();
      await completeCall(t, member);
      await attempt(500);
      const opened = await only(member, 'circuit.opened');
      assert.deepEqual(opened.actor, { type: 'system', id: null, label: 'worker' });
      assert.deepEqual(opened.subject, { type: 'subscription', id: hookId });
      for (let probe = 0; probe < 2; probe++) {
        await due(hookId);
        await attempt(503);
      }
      const { rows } = await t.db.pool.query('SELECT circuit_state, circuit_opens FROM webhook_subscriptions WHERE id = $1', [hookId]);
      assert.deepEqual(rows, [{ circuit_state: 'open', circuit_opens: 3 }], 'the circuit opened again twice');
      assert.equal((await events(member, '?type=circuit.opened')).length, 1, 'still one incident');
      await due(hookId);
      await attempt(200);
      const closed = await only(member, 'circuit.closed');
      assert.equal(closed.reason, 'recovered');
      assert.equal(closed.details.incident, opened.id);
      assert.equal(closed.details.opens, 3);
    });

    test('closed reset by re-enabling; subscription.disabled delivery_failures; subscription.enabled', async () => {
      const { member, hookId } = await connectWithHook();
      await completeCall(t, member);
      await attempt(500, 0);
      const disabled = await only(member, 'subscription.disabled', hookId);
      assert.equal(disabled.reason, 'delivery_failures');
      assert.deepEqual(disabled.actor, { type: 'system', id: null, label: 'worker' });
      const res = await t.app.inject({ method: 'POST', url: `/webhooks/${hookId}/enable`, headers: { 'x-user-token': member.token } });
      assert.equal(res.statusCode, 200, res.body);
      const enabled = await only(member, 'subscription.enabled');
      assert.deepEqual(enabled.actor, { type: 'user', id: member.user.id, label: member.email });
      const closed = await only(member, 'circuit.closed');
      assert.equal(closed.reason, 'reset');
      assert.deepEqual(closed.actor, enabled.actor);
    });

    test('a subscription disabled for delivery_failures whose access then ends is disabled again, with the new reason', async () => {
      const { member, client, hookId } = await connectWithHook();
      await completeCall(t, member);
      await attempt(500, 0);
      const actor = { type: 'user' as const, id: member.user.id, label: member.email };
      assert.equal(await revokeConnectedApp(t.app.db, NO_CACHES, member.org.id, client.client_id, actor), true);
      const disabled = (await events(member, '?type=subscription.disabled')).filter((e) => e.subject.id === hookId);
      assert.deepEqual(
        disabled.map((e) => [e.reason, e.actor.type]),
        [
          ['grant_revoked', 'user'],
          ['delivery_failures', 'system'],
        ],
      );
    });

    test('closed reset by subscribing again', async () => {
      const connection = await connectPlatform(t);
      const hookUrl = `${target.url}/again`;
      const hook = await subscribeHook(t, connection, { hookUrl });
      await completeCall(t, connection.member);
      await attempt(500);
      await subscribeHook(t, connection, { hookUrl });
      const closed = await only(connection.member, 'circuit.closed', hook.id);
      assert.equal(closed.reason, 'reset');
      assert.equal(closed.actor.type, 'client');
      assert.equal((await events(connection.member, '?type=subscription.created')).length, 1, 'subscribing again creates nothing');
    });
  });

  test('deliveries.recovered (details count) and delivery.redelivered (subject the delivery)', async () => {
    const { member, hookId } = await connectWithHook();
    target.respond(() => ({ status: 400 }));
    const worker = await startTestWorker(t);
    let deliveryId: string;
    try {
      await completeCall(t, member);
      await completeCall(t, member);
      const rows = await settled(t, hookId, 2, 20_000);
      deliveryId = rows[0]!.id;
    } finally {
      await worker.stop();
      target.respond(() => ({ status: 200 }));
    }
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const recover = await t.app.inject({
      method: 'POST',
      url: `/webhooks/${hookId}/recover`,
      headers: { 'x-user-token': member.token },
      payload: { since },
    });
    assert.equal(recover.statusCode, 202, recover.body);
    const recovered = await only(member, 'deliveries.recovered');
    assert.equal(recovered.details.count, 2);
    assert.deepEqual(recovered.subject, { type: 'subscription', id: hookId });

    const redeliver = await t.app.inject({
      method: 'POST',
      url: `/webhooks/deliveries/${deliveryId}/redeliver`,
      headers: { 'x-user-token': member.token },
    });
    assert.equal(redeliver.statusCode, 202, redeliver.body);
    const redelivered = await only(member, 'delivery.redelivered');
    assert.deepEqual(redelivered.subject, { type: 'delivery', id: deliveryId });
    assert.equal(redelivered.details.subscription_id, hookId);
  });

  test('a rolled-back change leaves no event: re-enabling past the subscription limit', async () => {
    const limited = await startTestApp({ db: t.db, env: { ...WEBHOOK_TEST_ENV, WEBHOOK_MAX_SUBSCRIPTIONS: '1' } });
    try {
      const connection = await connectPlatform(limited);
      const first = await subscribeHook(limited, connection, { hookUrl: `${target.url}/first` });
      await limited.app.inject({ method: 'DELETE', url: `/webhooks/${first.id}`, headers: { 'x-user-token': connection.member.token } });
      const hook = await subscribeHook(limited, connection, { hookUrl: `${target.url}/limited` });
      await limited.db.pool.query(
        "UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now(), disabled_reason = 'delivery_failures' WHERE id = $1",
        [hook.id],
      );
      await subscribeHook(limited, connection, { hookUrl: `${target.url}/second` });
      const before = await events(connection.member);
      const res = await limited.app.inject({
        method: 'POST',
        url: `/webhooks/${hook.id}/enable`,
        headers: { 'x-user-token': connection.member.token },
      });
      assert.equal(res.statusCode, 409, res.body);
      const afterwards = await events(connection.member);
      assert.deepEqual(afterwards, before, 'the refused enable wrote no event');
      assert.equal(afterwards.filter((e) => e.type === 'subscription.enabled').length, 0);
    } finally {
      await limited.close();
    }
  });

  test('POST /calls writes no audit event', async () => {
    const { member } = await connectWithHook();
    const before = (await t.db.pool.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n;
    await completeCall(t, member);
    await t.app.inject({ method: 'POST', url: '/calls', headers: { 'x-user-token': member.token }, payload: {} });
    const afterwards = (await t.db.pool.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n;
    assert.equal(afterwards, before);
  });
});

describe('GET /audit-events: who may read, pages and filters', () => {
  let t: TestApp;
  let owner: Member;
  let ids: string[];
  before(async () => {
    t = await startTestApp();
    owner = await createMember(t.db.pool);
    ids = [];
    for (let i = 0; i < 7; i++) {
      const { rows } = await t.db.pool.query(
        `SELECT app_audit_event($1, $2, 'system', NULL, 'worker', 'subscription', gen_random_uuid()::text, $3, '{}') AS id`,
        [owner.org.id, i % 2 === 0 ? 'circuit.opened' : 'circuit.closed', i % 2 === 0 ? null : 'recovered'],
      );
      ids.push(rows[0].id);
    }
  });
  after(() => t.close());

  const get = (member: Member, query = '') => t.app.inject({ url: `/audit-events${query}`, headers: { 'x-user-token': member.token } });

  test('owners and admins read it; a plain member gets 403 AUDIT_FORBIDDEN_ROLE; no token 401', async () => {
    assert.equal((await get(owner)).statusCode, 200);
    const admin = await createMember(t.db.pool, { org: owner.org, role: 'admin' });
    assert.equal((await get(admin)).json().length, 7);
    const member = await createMember(t.db.pool, { org: owner.org, role: 'member' });
    const res = await get(member);
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'AUDIT_FORBIDDEN_ROLE');
    assert.equal((await t.app.inject({ url: '/audit-events' })).statusCode, 401);
  });

  test('newest first, paged with limit and cursor, Link rel="next" until the last page', async () => {
    const first = await get(owner, '?limit=3');
    assert.deepEqual(
      first.json().map((e: EventJson) => e.id),
      ids.slice(-3).reverse(),
    );
    const link = first.headers.link as string;
    assert.match(link, /rel="next"/);
    const next = new URL(/<([^>]+)>/.exec(link)![1]!);
    const second = await get(owner, next.search);
    assert.deepEqual(
      second.json().map((e: EventJson) => e.id),
      ids.slice(1, 4).reverse(),
    );
    const last = await get(owner, `?limit=3&cursor=${ids[1]}`);
    assert.deepEqual(
      last.json().map((e: EventJson) => e.id),
      [ids[0]],
    );
    assert.equal(last.headers.link, undefined);
    assert.equal((await get(owner)).json().length, 7, 'default limit 50');
  });

  test('filters: type (one, or several by commas) and since (inclusive)', async () => {
    const opened = (await get(owner, '?type=circuit.opened')).json() as EventJson[];
    assert.equal(opened.length, 4);
    assert.ok(opened.every((e) => e.type === 'circuit.opened'));
    assert.equal((await get(owner, '?type=circuit.opened,circuit.closed')).json().length, 7);
    const all = (await get(owner)).json() as EventJson[];
    const pivot = all[2]!;
    const since = (await get(owner, `?since=${encodeURIComponent(pivot.occurred_at)}`)).json() as EventJson[];
    assert.ok(
      since.some((e) => e.id === pivot.id),
      'inclusive',
    );
    assert.ok(since.every((e) => e.occurred_at >= pivot.occurred_at));
  });

  test('bad values are 400 naming the field', async () => {
    for (const [query, field] of [
      ['?type=circuit.melted', 'type'],
      ['?type=circuit.opened,', 'type'],
      ['?since=yesterday', 'since'],
      ['?since=0000-01-01T00:00:00Z', 'since'],
      ['?since=9999-12-31T23:59:60Z', 'since'],
      ['?since=-271821-04-20T00:00:00Z', 'since'],
      ['?limit=101', 'limit'],
      ['?limit=0', 'limit'],
      ['?cursor=nope', 'cursor'],
      [`?cursor=${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`, 'cursor'],
    ] as const) {
      const res = await get(owner, query);
      assert.equal(res.statusCode, 400, query);
      assert.ok(
        (res.json().errors as { field: string }[]).some((e) => e.field === field),
        `${query}: ${res.body}`,
      );
    }
  });

  test("another organization's owner sees none of these events, and cannot page from one of them", async () => {
    const other = await createMember(t.db.pool);
    assert.deepEqual((await get(other)).json(), []);
    const res = await get(other, `?cursor=${ids[3]}`);
    assert.equal(res.statusCode, 400);
    assert.deepEqual(
      (res.json().errors as { field: string }[]).map((e) => e.field),
      ['cursor'],
    );
  });

  test('append-only for the request role: no UPDATE or DELETE', async () => {
    const { rows } = await t.db.pool.query(
      `SELECT has_table_privilege('switchboard_request', 'audit_events', 'UPDATE') AS u,
              has_table_privilege('switchboard_request', 'audit_events', 'DELETE') AS d,
              has_table_privilege('switchboard_request', 'audit_events', 'INSERT') AS i,
              has_table_privilege('switchboard_request', 'audit_events', 'SELECT') AS s`,
    );
    assert.deepEqual(rows, [{ u: false, d: false, i: true, s: true }]);
  });
});

// The `details` each audit event type promises (docs/interface.md, "Audit
// log"), read through GET /audit-events after the change made as a user, an
// app or the worker makes it; and nothing written for deliveries that succeed
// or are retried while the worker runs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { HealthPolicy } from '../../src/webhooks/worker/endpoint-health.ts';
import { recordOutcomes } from '../../src/webhooks/worker/record.queries.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { createClient, obtainCode, tokenRequest } from '../helpers/oauth.ts';
import {
  answeredOutcome,
  claimDueDeliveries,
  completeCall,
  connectPlatform,
  deliveriesOf,
  settled,
  startTestWorker,
  subscribeHook,
  WEBHOOK_TEST_ENV,
  type Connection,
} from '../helpers/webhooks.ts';

interface EventJson {
  id: string;
  type: string;
  occurred_at: string;
  actor: { type: string; id: string | null; label: string };
  subject: { type: string; id: string };
  reason: string | null;
  details: Record<string, unknown>;
}

describe('audit log: the details of each event type', () => {
  let t: TestApp;
  let target: HttpsTarget;
  before(async () => {
    t = await startTestApp({ listen: true, env: WEBHOOK_TEST_ENV });
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

  async function connectWithHook(): Promise<Connection & { hookId: string; hookUrl: string }> {
    const connection = await connectPlatform(t);
    const hookUrl = `${target.url}/hooks/${Math.random().toString(36).slice(2)}`;
    const hook = await subscribeHook(t, connection, { hookUrl });
    return { ...connection, hookId: hook.id, hookUrl };
  }

  /** One attempt of each due delivery, answered `status`, recorded as the worker records it. */
  async function attempt(policy: HealthPolicy, status: number, disableAfterMs = 5 * 86_400_000) {
    const claimed = await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 10_000 });
    assert.ok(claimed.length > 0, 'a delivery was due');
    await recordOutcomes(t.db.pool, { records: claimed.map((c) => answeredOutcome(c, status, new Date())), disableAfterMs, policy });
  }

  test('grant.created: details.scopes are the scopes the user approved', async () => {
    const member = await createMember(t.db.pool);
    const client = await createClient(t.db.pool, { name: 'Scoped Platform', scopes: ['calls:read', 'calls:write'] });
    const { code, verifier } = await obtainCode(t.url, { client, member, params: { scope: 'calls:read' } });
    const res = await tokenRequest(t.app, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier!,
      redirect_uri: client.redirect_uris[0]!,
      client_id: client.client_id,
      client_secret: client.client_secret,
    });
    assert.equal(res.statusCode, 200, res.body);
    const event = await only(member, 'grant.created');
    assert.deepEqual(event.details.scopes, ['calls:read']);
  });

  test('circuit.opened: consecutive_failures and next_probe_at; circuit.closed: opened_at, when it opened', async () => {
    const policy: HealthPolicy = { maxInFlight: 10, breakerThreshold: 3, breakerWaitsMs: [60_000] };
    const { member, hookId } = await connectWithHook();
    for (let i = 0; i < 3; i++) await completeCall(t, member);
    await attempt(policy, 503);
    const opened = await only(member, 'circuit.opened', hookId);
    const { rows } = await t.db.pool.query<{ consecutive_failures: number; circuit_retry_at: Date; circuit_changed_at: Date }>(
      'SELECT consecutive_failures, circuit_retry_at, circuit_changed_at FROM webhook_subscriptions WHERE id = $1',
      [hookId],
    );
    assert.equal(opened.details.consecutive_failures, 3);
    assert.equal(rows[0]!.consecutive_failures, 3);
    assert.equal(typeof opened.details.next_probe_at, 'string');
    const probeAt = Date.parse(opened.details.next_probe_at as string);
    assert.equal(probeAt, rows[0]!.circuit_retry_at.getTime(), 'next_probe_at is when the probe is due');
    const wait = probeAt - Date.parse(opened.occurred_at);
    assert.ok(wait > 50_000 && wait <= 66_000, `the breaker's wait (60 s ±10 %), got ${wait} ms`);

    await t.db.pool.query("UPDATE webhook_deliveries SET next_attempt_at = now() WHERE subscription_id = $1 AND status = 'pending'", [
      hookId,
    ]);
    await t.db.pool.query('UPDATE webhook_subscriptions SET circuit_retry_at = now() WHERE id = $1', [hookId]);
    await attempt(policy, 200);
    const closed = await only(member, 'circuit.closed', hookId);
    assert.equal(closed.reason, 'recovered');
    assert.equal(typeof closed.details.opened_at, 'string');
    assert.equal(Date.parse(closed.details.opened_at as string), rows[0]!.circuit_changed_at.getTime(), 'when the circuit opened');
    assert.ok(Math.abs(Date.parse(closed.details.opened_at as string) - Date.parse(opened.occurred_at)) < 5000);
  });

  test('subscription.enabled: a subscription disabled for failures whose URL is subscribed again', async () => {
    const policy: HealthPolicy = { maxInFlight: 10, breakerThreshold: 5, breakerWaitsMs: [0] };
    const connection = await connectWithHook();
    await completeCall(t, connection.member);
    await attempt(policy, 500, 0);
    assert.equal((await only(connection.member, 'subscription.disabled', connection.hookId)).reason, 'delivery_failures');
    const again = await subscribeHook(t, connection, { hookUrl: connection.hookUrl });
    assert.equal(again.id, connection.hookId, 'the same subscription');
    const enabled = await only(connection.member, 'subscription.enabled', connection.hookId);
    assert.deepEqual(enabled.actor, { type: 'client', id: connection.client.client_id, label: connection.client.name });
    assert.ok(String(enabled.details.hook_url).startsWith(new URL(connection.hookUrl).origin), JSON.stringify(enabled.details));
    assert.equal(enabled.details.client_id, connection.client.client_id);
  });

  test('deliveries.recovered: details.since; delivery.redelivered: details.call_id', async () => {
    const { member, hookId } = await connectWithHook();
    target.respond(() => ({ status: 400 }));
    const worker = await startTestWorker(t);
    try {
      await completeCall(t, member);
      await settled(t, hookId, 1, 20_000);
    } finally {
      await worker.stop();
      target.respond(() => ({ status: 200 }));
    }
    const [delivery] = await deliveriesOf(t, hookId);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const recover = await t.app.inject({
      method: 'POST',
      url: `/webhooks/${hookId}/recover`,
      headers: { 'x-user-token': member.token },
      payload: { since },
    });
    assert.equal(recover.statusCode, 202, recover.body);
    const recovered = await only(member, 'deliveries.recovered');
    assert.equal(recovered.details.count, 1);
    assert.equal(Date.parse(recovered.details.since as string), Date.parse(since));

    const redeliver = await t.app.inject({
      method: 'POST',
      url: `/webhooks/deliveries/${delivery!.id}/redeliver`,
      headers: { 'x-user-token': member.token },
    });
    assert.equal(redeliver.statusCode, 202, redeliver.body);
    const redelivered = await only(member, 'delivery.redelivered');
    assert.equal(redelivered.details.call_id, delivery!.call_id);
    assert.equal(redelivered.details.subscription_id, hookId);
  });

  test('with the worker running, deliveries that succeed or are retried (an unhealthy answer under the breaker) write nothing', async () => {
    const { member, hookId } = await connectWithHook();
    const before = await events(member);
    // The first attempt of each delivery (its body names the call) answers 503 (retried, the endpoint unhealthy), the next 200.
    const seen = new Set<string>();
    target.respond((request) => {
      const id = request.body;
      if (seen.has(id)) return { status: 200 };
      seen.add(id);
      return { status: 503 };
    });
    const worker = await startTestWorker(t);
    try {
      await completeCall(t, member);
      await completeCall(t, member);
      const rows = await settled(t, hookId, 2, 20_000);
      assert.deepEqual(
        rows.map((r) => [r.status, r.attempts]),
        [
          ['succeeded', 2],
          ['succeeded', 2],
        ],
        'each delivery was retried once, then succeeded',
      );
      const { rows: health } = await t.db.pool.query<{ circuit_state: string }>(
        'SELECT circuit_state FROM webhook_subscriptions WHERE id = $1',
        [hookId],
      );
      assert.equal(health[0]!.circuit_state, 'closed');
    } finally {
      await worker.stop();
      target.respond(() => ({ status: 200 }));
    }
    assert.deepEqual(await events(member), before, 'no audit event for deliveries that succeeded or were retried');
  });
});

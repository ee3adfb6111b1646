// Outcome records of one subscription from several workers at once, some
// failing (opening its circuit, or opening it again after a probe), some
// healthy (closing it): its audit log has one circuit.opened per incident and
// one circuit.closed when it ends, strictly alternating, however the records
// interleave (webhook_subscriptions_audit_update reads OLD and NEW of the row
// each record locked).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { assertRaced, race } from '../helpers/races.ts';
import { answeredOutcome, completeCall, connectPlatform, startWebhookApp, subscribeHook } from '../helpers/webhooks.ts';
import type { HealthPolicy } from '../../src/webhooks/worker/endpoint-health.ts';
import { recordOutcomes } from '../../src/webhooks/worker/record.queries.ts';

describe('circuit events while workers record one subscription at once', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  // Opens on the first failure; the wait is over at once, so the next failure is a failed probe.
  const policy: HealthPolicy = { maxInFlight: 10, breakerThreshold: 1, breakerWaitsMs: [0] };

  test('two failing sides and a healthy one: circuit.opened and circuit.closed alternate, one pair per incident', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/audit-race' });
    for (let i = 0; i < 3; i++) await completeCall(t, org.member);
    const { rows: deliveries } = await t.db.pool.query<{ id: string }>(
      'SELECT id FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY created_at, id',
      [hook.id],
    );
    assert.equal(deliveries.length, 3);

    /** One attempt of the side's delivery under a fresh lease, answered `status`, recorded as the worker records it. */
    const side = (deliveryId: string, status: number) => async (round: number) => {
      const token = randomUUID();
      const attempt = round + 1;
      await t.db.pool.query(
        `INSERT INTO webhook_delivery_leases (delivery_id, organization_id, subscription_id, token, attempt, started_at, expires_at)
         SELECT id, organization_id, subscription_id, $2, $3, now(), now() + interval '1 minute' FROM webhook_deliveries WHERE id = $1
         ON CONFLICT (delivery_id) DO UPDATE SET token = EXCLUDED.token, attempt = EXCLUDED.attempt, expires_at = EXCLUDED.expires_at`,
        [deliveryId, token, attempt],
      );
      await recordOutcomes(t.db.pool, {
        records: [answeredOutcome({ id: deliveryId, lease_token: token, attempt }, status)],
        disableAfterMs: 86_400_000,
        policy,
      });
    };
    const raced = await race(
      { rounds: 60, maxMs: 8000 },
      side(deliveries[0]!.id, 503),
      side(deliveries[1]!.id, 500),
      side(deliveries[2]!.id, 200),
    );
    assertRaced(raced);

    const { rows: events } = await t.db.pool.query<{ type: string; reason: string | null; incident: string | null; id: string }>(
      `SELECT id, type, reason, details->>'incident' AS incident FROM audit_events
        WHERE subject_id = $1 AND type LIKE 'circuit.%' ORDER BY occurred_at, id`,
      [hook.id],
    );
    assert.ok(events.length >= 2, `the circuit opened and closed (${events.length} events)`);
    events.forEach((event, i) => {
      assert.equal(event.type, i % 2 === 0 ? 'circuit.opened' : 'circuit.closed', `event ${i} of ${events.map((e) => e.type).join(', ')}`);
      if (event.type === 'circuit.closed') {
        assert.equal(event.reason, 'recovered');
        assert.equal(event.incident, events[i - 1]!.id, 'closed names the incident it ends');
      }
    });
    const { rows } = await t.db.pool.query<{ circuit_state: string }>('SELECT circuit_state FROM webhook_subscriptions WHERE id = $1', [
      hook.id,
    ]);
    assert.equal(rows[0]!.circuit_state === 'open', events.at(-1)!.type === 'circuit.opened', 'the last event is the state it is in');
  });
});

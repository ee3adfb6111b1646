import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../../helpers/app.ts';
import { throughGate } from '../../helpers/lock-waits.ts';
import { healthOf } from '../../helpers/endpoint-health.ts';
import { answeredOutcome, completeCall, connectPlatform, startWebhookApp, subscribeHook } from '../../helpers/webhooks.ts';
import type { HealthPolicy } from '../../../src/webhooks/worker/endpoint-health.ts';
import type { OutcomeRecord } from '../../../src/webhooks/worker/record.queries.ts';
import { writeOutcomes } from '../../../src/webhooks/worker/recorder.ts';

// Two workers record outcomes of one subscription at the same moment: each
// statement must count from the other's result, never from the row both read
// first (a lost update would lose a failure or a healthy answer). Each round
// proves the two statements overlapped: the test holds the subscription's row
// until both wait for it in PostgreSQL, so both took their snapshot before
// either wrote (throughGate).
describe('outcomes of one subscription recorded by two workers at once', () => {
  let t: TestApp;
  let hook: string;
  // The circuit never opens here, so that every failure is counted and the claim rules stay out of it.
  const policy: HealthPolicy = { maxInFlight: 10, breakerThreshold: 1_000_000, breakerWaitsMs: [60_000] };

  before(async () => {
    t = await startWebhookApp();
    const org = await connectPlatform(t);
    hook = (await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/race' })).id;
    await completeCall(t, org.member);
    await completeCall(t, org.member);
  });
  after(() => t.close());

  /** Both deliveries leased afresh (as two workers' claims would), and one outcome for each. */
  async function twoOutcomes(status: number): Promise<OutcomeRecord[]> {
    const { rows } = await t.db.pool.query<{ id: string; lease_token: string; attempts: number }>(
      `INSERT INTO webhook_delivery_leases AS l (delivery_id, organization_id, subscription_id, token, attempt, started_at, expires_at)
       SELECT id, organization_id, subscription_id, gen_random_uuid(), attempts + 1, now(), now() + interval '1 minute'
         FROM webhook_deliveries WHERE subscription_id = $1
       ON CONFLICT (delivery_id) DO UPDATE SET token = EXCLUDED.token, expires_at = EXCLUDED.expires_at
       RETURNING l.delivery_id AS id, l.token AS lease_token, l.attempt AS attempts`,
      [hook],
    );
    assert.equal(rows.length, 2);
    // A 404: the endpoint works (the delivery is retried all the same).
    return rows.map((row) => answeredOutcome({ id: row.id, lease_token: row.lease_token, attempt: row.attempts }, status));
  }

  /** Both outcomes written at once, let go together once both wait for the subscription's row (the first lock they take). */
  const writeBoth = (a: OutcomeRecord, b: OutcomeRecord) =>
    throughGate(t.db.pool, { lock: 'SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR UPDATE', params: [hook] }, [
      () => writeOutcomes(t.db.pool, [a], { policy }),
      () => writeOutcomes(t.db.pool, [b], { policy }),
    ]);

  test('every failure is counted, and every healthy answer raises the limit, in rounds that each overlap', async () => {
    // Bounded in time: at least 40 rounds, more while under 5 s.
    const started = Date.now();
    let rounds = 0;
    let failures = (await healthOf(t.db.pool, hook)).consecutive_failures;
    while (rounds < 200 && (Date.now() - started < 5000 || rounds < 40)) {
      rounds++;
      if (rounds % 2 === 1) {
        // Two unhealthy attempts at once: two more failures in a row.
        const [a, b] = await twoOutcomes(500);
        const recorded = await writeBoth(a!, b!);
        assert.ok(recorded.flat().every((r) => r.held));
        failures += 2;
        const h = await healthOf(t.db.pool, hook);
        assert.deepEqual([h.consecutive_failures, h.concurrency_limit], [failures, 1], `round ${rounds}`);
      } else {
        // From one at a time, two healthy answers at once: three.
        await t.db.pool.query('UPDATE webhook_subscriptions SET concurrency_limit = 1, consecutive_failures = 0 WHERE id = $1', [hook]);
        const [a, b] = await twoOutcomes(404);
        await writeBoth(a!, b!);
        failures = 0;
        const h = await healthOf(t.db.pool, hook);
        assert.deepEqual([h.consecutive_failures, h.concurrency_limit], [0, 3], `round ${rounds}`);
      }
    }
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_attempts WHERE subscription_id = $1', [hook]);
    assert.equal(rows[0].n, rounds * 2, 'every attempt logged');
  });
});

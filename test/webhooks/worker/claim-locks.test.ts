// What a claim holds while its transaction is open, and who waits for it:
// other claims skip its subscriptions, a grant's stop waits for it, and
// recording an outcome (which updates the subscription's health) never does.
// A recorder that waited for a claim's subscription lock could deadlock with
// it (claim-lock.ts says how).
import { COMMAND_LINE } from '../../../src/audit/audit-actor.ts';
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { PoolClient } from '../../../src/db/pool.ts';
import { NO_CACHES } from '../../../src/cache/caches.ts';
import { revokeConnectedApp } from '../../../src/oauth/connected-apps.service.ts';
import type { HealthPolicy } from '../../../src/webhooks/worker/endpoint-health.ts';
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION } from '../../../src/webhooks/worker/endpoint-health.ts';
import { claimDue, type LeasedDelivery } from '../../../src/webhooks/worker/claim.queries.ts';
import { recordOutcomes } from '../../../src/webhooks/worker/record.queries.ts';
import type { TestApp } from '../../helpers/app.ts';
import { healthOf } from '../../helpers/endpoint-health.ts';
import { waitForBlockedBy } from '../../helpers/races.ts';
import { claimBatch } from '../../../src/webhooks/worker/worker.ts';
import {
  answeredOutcome,
  completeCall,
  connectPlatform,
  deliveriesOf,
  startWebhookApp,
  subscribeHook,
  type Connection,
} from '../../helpers/webhooks.ts';

const policy: HealthPolicy = { maxInFlight: MAX_IN_FLIGHT_PER_SUBSCRIPTION, breakerThreshold: 5, breakerWaitsMs: [60_000] };

describe('a claim in progress', () => {
  let t: TestApp;
  let org: Connection;
  let hook: string;
  let claimer: PoolClient;

  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  beforeEach(async () => {
    org = await connectPlatform(t);
    hook = (await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/claimed' })).id;
    claimer = await t.db.pool.connect();
  });
  afterEach(async () => {
    await claimer.query('ROLLBACK').catch(() => {});
    claimer.release();
  });

  /** Leases due deliveries of the hook in a transaction left open (as a worker's claim is until its COMMIT). */
  async function openClaim(limits: { limit: number; maxInFlight: number } = { limit: 10, maxInFlight: MAX_IN_FLIGHT_PER_SUBSCRIPTION }) {
    await claimer.query('BEGIN');
    const { claimed } = await claimDue(claimer, {
      limit: limits.limit,
      degradedLimit: limits.limit,
      maxSubscriptions: limits.limit,
      maxInFlight: limits.maxInFlight,
      leaseMs: 60_000,
      slowMs: 5_000,
      hints: [hook],
      cursor: null,
      walk: 0,
      degraded: [],
    });
    return claimed;
  }

  /** `promise`, or a failure naming `what` if it has not settled within `ms`. */
  function within<T>(what: string, promise: Promise<T>, ms = 3000): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} still waiting after ${ms} ms`)), ms);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  }

  test('an outcome that changes the endpoint health of its subscription is recorded without waiting for it', async () => {
    await completeCall(t, org.member);
    // The first delivery leased by an earlier claim (committed), the second by the open one.
    const [earlier] = await claimBatchOf(hook);
    await completeCall(t, org.member);
    const claimed = await openClaim();
    assert.equal(claimed.length, 1, 'the open claim leased the second delivery');

    const failure = answeredOutcome(earlier!, 503);
    const [recorded] = await within(
      'recording the outcome',
      recordOutcomes(t.db.pool, { records: [failure], disableAfterMs: 86_400_000, policy }),
    );
    assert.equal(recorded!.held, true);
    const health = await healthOf(t.db.pool, hook);
    assert.deepEqual([health.consecutive_failures, health.concurrency_limit], [1, 1], 'the failure was counted on the subscription row');
    await claimer.query('COMMIT');
  });

  test("another claim skips its subscription and names it as left over; the subscription's deliveries wait for the next claim", async () => {
    await completeCall(t, org.member);
    await completeCall(t, org.member);
    // The open claim takes one of the two: the other stays due for the second claimer.
    assert.equal((await openClaim({ limit: 1, maxInFlight: 1 })).length, 1);
    const second = await claimBatch(t.db.pool, {
      limit: 10,
      leaseMs: 60_000,
      candidates: { hints: [hook], cursor: null, walk: 0, degraded: [] },
    });
    await second.committed;
    assert.deepEqual(
      second.claimed.filter((d) => d.subscription_id === hook),
      [],
      'nothing of the held subscription was leased',
    );
    assert.ok(second.leftOver.includes(hook), 'the held subscription is a hint for the next claim');
    await claimer.query('COMMIT');
    const next = await claimBatch(t.db.pool, {
      limit: 10,
      leaseMs: 60_000,
      candidates: { hints: [hook], cursor: null, walk: 0, degraded: [] },
    });
    await next.committed;
    assert.equal(next.claimed.filter((d) => d.subscription_id === hook).length, 1, 'once it ended, the next claim leased the other');
  });

  test('revoking the grant waits for it, then fails every delivery it leased: no lease outlives the stop', async () => {
    await completeCall(t, org.member);
    const claimed = await openClaim();
    assert.equal(claimed.length, 1);
    const leases = (db: Pick<PoolClient, 'query'>) =>
      db.query<{ delivery_id: string }>('SELECT delivery_id FROM webhook_delivery_leases WHERE delivery_id = $1', [claimed[0]!.id]);
    assert.equal((await leases(claimer)).rowCount, 1, 'the open claim holds a lease on the delivery');
    const { rows } = await claimer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const revoking = revokeConnectedApp(t.db.pool, NO_CACHES, org.member.org.id, org.client.client_id, COMMAND_LINE);
    // The stop waits, in PostgreSQL, for a lock the claim holds.
    await waitForBlockedBy(t.db.pool, rows[0]!.pid);
    await claimer.query('COMMIT');
    assert.equal(await revoking, true);
    assert.equal((await leases(t.db.pool)).rowCount, 0, 'the lease the claim committed did not outlive the stop');
    const deliveries = await deliveriesOf(t, hook);
    assert.deepEqual(
      deliveries.map((d) => d.status),
      ['failed'],
      'the delivery leased before the stop was failed by it',
    );
  });

  /** One committed claim of the hook's due deliveries. */
  async function claimBatchOf(subscriptionId: string): Promise<LeasedDelivery[]> {
    const claim = await claimBatch(t.db.pool, {
      limit: 10,
      leaseMs: 60_000,
      candidates: { hints: [subscriptionId], cursor: null, walk: 0, degraded: [] },
    });
    await claim.committed;
    return claim.claimed;
  }
});

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { TestApp } from '../../helpers/app.ts';
import { connectPlatform, startWebhookApp, subscribeHook } from '../../helpers/webhooks.ts';
import type { LeasedDelivery } from '../../../src/webhooks/worker/claim.queries.ts';
import { claimBatch } from '../../../src/webhooks/worker/worker.ts';

// The claim itself (claimBatch, as the worker calls it), on deliveries
// written straight into the outbox: no worker runs here, and the leases a
// claim takes stay (as if their attempts were running) until a test gives them back.
interface Organization {
  id: string;
  hooks: string[];
}

describe('the claim', () => {
  let t: TestApp;
  let names = 0;

  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());
  beforeEach(() => t.db.pool.query('DELETE FROM webhook_deliveries'));

  /**
   * An organization with `subscriptions` hooks, each with `perHook` due
   * deliveries: hook i's last one due `dueSecondsAgo` − i × `staggerSeconds`
   * seconds ago, each one before it a millisecond earlier. With a stagger, a
   * hook's whole backlog is due before the next hook's first delivery: taking
   * deliveries by age alone would take them all from the first hook.
   */
  async function organization(subscriptions: number, perHook: number, dueSecondsAgo: number, staggerSeconds = 0): Promise<Organization> {
    const org = await connectPlatform(t);
    const hooks: string[] = [];
    const name = ++names;
    for (let i = 0; i < subscriptions; i++) {
      hooks.push((await subscribeHook(t, org, { hookUrl: `https://127.0.0.1:9/org-${name}/hook-${i}` })).id);
    }
    await t.db.pool.query(
      `WITH c AS (
         INSERT INTO calls (organization_id, status, completed_at, summary, duration_seconds)
         SELECT $1, 'completed', now(), 'fair', n FROM generate_series(1, $3::int) n RETURNING id, duration_seconds AS n
       )
       INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, next_attempt_at)
       SELECT $1, s.id, c.id, 'call.completed', '{}',
              now() - ($4::int - (s.i - 1) * $5::int) * interval '1 second' - ($3::int - c.n) * interval '1 millisecond'
         FROM c CROSS JOIN unnest($2::uuid[]) WITH ORDINALITY AS s(id, i)`,
      [org.member.org.id, hooks, perHook, dueSecondsAgo, staggerSeconds],
    );
    // Endpoints that have answered before: in good health unless a test says otherwise.
    await t.db.pool.query('UPDATE webhook_subscriptions SET answered = true WHERE id = ANY($1)', [hooks]);
    return { id: org.member.org.id, hooks };
  }

  async function claim(limit: number, degradedLimit?: number): Promise<LeasedDelivery[]> {
    const { claimed, committed } = await claimBatch(t.db.pool, {
      limit,
      ...(degradedLimit === undefined ? {} : { degradedLimit }),
      leaseMs: 60_000,
    });
    await committed;
    return claimed;
  }
  /** Gives every lease back, as if the attempts had never been made. */
  async function giveBack() {
    await t.db.pool.query('DELETE FROM webhook_delivery_leases');
  }
  const of = (claimed: LeasedDelivery[], org: Organization) => claimed.filter((d) => d.organization_id === org.id);
  /** How many claimed deliveries each subscription got, for the subscriptions that got any. */
  const perSubscription = (claimed: LeasedDelivery[]) => {
    const counts = new Map<string, number>();
    for (const d of claimed) counts.set(d.subscription_id, (counts.get(d.subscription_id) ?? 0) + 1);
    return [...counts.values()];
  };

  test("an organization's one fresh delivery is in a claim of two or four, behind another organization's 500 due over 20 subscriptions", async () => {
    const a = await organization(20, 25, 3600, 60);
    const b = await organization(1, 1, 0);
    const { rows } = await t.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE organization_id = $1 AND status = 'pending' AND next_attempt_at <= now()",
      [a.id],
    );
    assert.equal(rows[0]!.n, 500);

    const four = await claim(4);
    assert.equal(four.length, 4);
    assert.equal(of(four, b).length, 1, "B's delivery is in the claim");
    assert.equal(new Set(of(four, a).map((d) => d.subscription_id)).size, 3, "A's three come from three of its subscriptions");

    await giveBack();
    const two = await claim(2);
    assert.deepEqual([of(two, a).length, of(two, b).length], [1, 1], 'one turn each');
  });

  test("a claim's deliveries are shared out by organization, then within one by subscription", async () => {
    const a = await organization(20, 25, 3600, 60); // a backlog
    const b = await organization(1, 1, 0); // one fresh delivery
    const c = await organization(3, 5, 600, 60); // a few due over three subscriptions

    const claimed = await claim(12);
    assert.equal(claimed.length, 12);
    const counts = { a: of(claimed, a).length, b: of(claimed, b).length, c: of(claimed, c).length };
    assert.equal(counts.b, 1, 'B gets all it has');
    assert.equal(counts.a + counts.c, 11);
    assert.ok(Math.abs(counts.a - counts.c) <= 1, `A and C take turns: ${JSON.stringify(counts)}`);
    assert.ok(
      perSubscription(of(claimed, a)).every((n) => n === 1),
      "none of A's subscriptions gets a second turn while others wait",
    );
    const cTurns = perSubscription(of(claimed, c));
    assert.equal(cTurns.length, 3, "each of C's subscriptions gets a turn");
    assert.ok(Math.max(...cTurns) - Math.min(...cTurns) <= 1, `C's subscriptions take turns: ${cTurns.join(', ')}`);
  });

  test('successive claims alternate between organizations until one has nothing left', async () => {
    const a = await organization(20, 25, 3600, 60);
    const c = await organization(1, 6, 0);
    const batches: { a: number; c: number; aHooks: number }[] = [];
    for (let i = 0; i < 4; i++) {
      const claimed = await claim(4);
      batches.push({
        a: of(claimed, a).length,
        c: of(claimed, c).length,
        aHooks: new Set(of(claimed, a).map((d) => d.subscription_id)).size,
      });
    }
    assert.deepEqual(batches, [
      { a: 2, c: 2, aHooks: 2 },
      { a: 2, c: 2, aHooks: 2 },
      { a: 2, c: 2, aHooks: 2 },
      { a: 4, c: 0, aHooks: 4 },
    ]);
  });

  test('degraded endpoints take at most the degraded share of a claim; the rest goes to healthy ones', async () => {
    const a = await organization(20, 25, 3600, 60);
    const b = await organization(1, 5, 0);
    // Every endpoint of A has failed since its last healthy answer.
    await t.db.pool.query('UPDATE webhook_subscriptions SET consecutive_failures = 1, concurrency_limit = 1 WHERE id = ANY($1)', [a.hooks]);

    const one = await claim(4, 1);
    assert.deepEqual([of(one, a).length, of(one, b).length], [1, 3]);
    assert.ok(
      one.every((d) => d.degraded === (d.organization_id === a.id)),
      'the claim says which attempts hold a degraded slot',
    );
    await giveBack();
    const none = await claim(4, 0);
    assert.deepEqual([of(none, a).length, of(none, b).length], [0, 4]);
    await giveBack();
    const shared = await claim(4, 4);
    assert.deepEqual(
      [of(shared, a).length, of(shared, b).length],
      [2, 2],
      'within its share, a degraded organization still takes its turns',
    );
  });
});

describe("the claim follows each endpoint's health", () => {
  let t: TestApp;

  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());
  // Another test's leases would be the next thing due.
  beforeEach(() => t.db.pool.query('DELETE FROM webhook_deliveries'));

  async function hookWithDue(count: number): Promise<string> {
    const org = await connectPlatform(t);
    const hook = (await subscribeHook(t, org, { hookUrl: `https://127.0.0.1:9/health-${count}-${Date.now()}` })).id;
    await t.db.pool.query(
      `WITH c AS (
         INSERT INTO calls (organization_id, status, completed_at, summary, duration_seconds)
         SELECT $1, 'completed', now(), 'health', 1 FROM generate_series(1, $3::int) RETURNING id
       )
       INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, next_attempt_at)
       SELECT $1, $2, c.id, 'call.completed', '{}', now() - interval '1 minute' FROM c`,
      [org.member.org.id, hook, count],
    );
    return hook;
  }
  async function claim(limit = 10) {
    const { claimed, committed } = await claimBatch(t.db.pool, { limit, leaseMs: 60_000 });
    return { claimed, nextDueAt: (await committed).nextDueAt };
  }

  test("a subscription's concurrency limit caps its attempts in flight", async () => {
    const hook = await hookWithDue(8);
    await t.db.pool.query('UPDATE webhook_subscriptions SET concurrency_limit = 3, consecutive_failures = 1 WHERE id = $1', [hook]);
    assert.equal((await claim()).claimed.length, 3);
    assert.equal((await claim()).claimed.length, 0, 'three in flight: none more');
    await t.db.pool.query('UPDATE webhook_subscriptions SET concurrency_limit = NULL, consecutive_failures = 0 WHERE id = $1', [hook]);
    assert.equal((await claim()).claimed.length, 5, 'no limit of its own: the cap of ten');
  });

  test('an endpoint that has never answered is degraded (it takes a degraded slot) until its first answer in time', async () => {
    const hook = await hookWithDue(3);
    const { claimed } = await claimBatch(t.db.pool, { limit: 10, degradedLimit: 1, leaseMs: 60_000 });
    assert.deepEqual(
      claimed.map((d) => d.degraded),
      [true],
      'one attempt, in the degraded share',
    );
    const { claimed: none } = await claimBatch(t.db.pool, { limit: 10, degradedLimit: 0, leaseMs: 60_000 });
    assert.equal(none.length, 0, 'no degraded slot free: nothing');

    await t.db.pool.query('UPDATE webhook_subscriptions SET answered = true WHERE id = $1', [hook]);
    const { claimed: healthy } = await claimBatch(t.db.pool, { limit: 10, degradedLimit: 0, leaseMs: 60_000 });
    assert.deepEqual(
      healthy.map((d) => d.degraded),
      [false, false],
      'answered once: healthy slots',
    );
  });

  test('an open circuit: nothing before its wait is over, the worker told to look again then; after it, one probe at a time', async () => {
    const hook = await hookWithDue(5);
    const {
      rows: [opened],
    } = await t.db.pool.query<{ retry_at: Date }>(
      `UPDATE webhook_subscriptions SET circuit_state = 'open', circuit_changed_at = now(), circuit_opens = 1,
              circuit_retry_at = now() + interval '1 hour', consecutive_failures = 5, concurrency_limit = 1
        WHERE id = $1 RETURNING circuit_retry_at AS retry_at`,
      [hook],
    );
    const waiting = await claim();
    assert.equal(waiting.claimed.length, 0);
    assert.equal(waiting.nextDueAt?.getTime(), opened!.retry_at.getTime(), 'due again when the wait is over, not now');

    await t.db.pool.query("UPDATE webhook_subscriptions SET circuit_retry_at = now() - interval '1 second' WHERE id = $1", [hook]);
    const probe = await claim();
    assert.equal(probe.claimed.length, 1, 'one probe');
    assert.equal(probe.claimed[0]!.degraded, true);
    assert.equal((await claim()).claimed.length, 0, 'and no second one while it runs');
  });
});

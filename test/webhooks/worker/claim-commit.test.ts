import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { pino } from 'pino';
import type { TestApp } from '../../helpers/app.ts';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';
import {
  attemptsOf,
  completeCall,
  connectPlatform,
  deliveriesOf,
  settled,
  startTestWorker,
  startWebhookApp,
  subscribeHook,
  waitFor,
} from '../../helpers/webhooks.ts';
import type { PoolClient } from '../../../src/db/pool.ts';
import { claimBatch, type DeliveryWorker } from '../../../src/webhooks/worker/worker.ts';

const COMMIT_GATE = 4_210_010;

// The worker starts a claim's attempts as soon as the leasing statement has
// returned its rows and sends the COMMIT meanwhile (docs/decisions.md, "The
// claim's commit overlaps the first attempts"). These tests make that COMMIT
// fail after the rows came back — a deferred constraint trigger, armed by the
// test, raises an error or terminates the claim's own backend when the claim
// commits — and check the failure side: the attempt sent under it is not
// recorded, the delivery stays pending and is delivered again later with the
// same delivery id, and nothing is lost. The trigger first waits for an
// advisory lock the test holds, so the commit cannot finish (or fail) before
// the test has seen the attempt arrive: no timing involved.
describe('a claim whose commit fails', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let worker: DeliveryWorker;
  const logged: { level: number; msg: string }[] = [];
  /** Holds the advisory lock the armed trigger waits for: the claim's commit stays open until the test lets go. */
  let gate: PoolClient;

  before(async () => {
    t = await startWebhookApp();
    target = await startHttpsTarget();
    gate = await t.db.pool.connect();
    await t.db.pool.query(`
      CREATE TABLE test_claim_commit_fault (mode text NOT NULL CHECK (mode IN ('error', 'terminate')));
      CREATE FUNCTION test_claim_commit_fault() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- Only a lease being taken, only while the test has armed the fault.
        IF NEW.token IS DISTINCT FROM OLD.token
           AND EXISTS (SELECT 1 FROM test_claim_commit_fault) THEN
          PERFORM pg_advisory_xact_lock(${COMMIT_GATE});
          IF EXISTS (SELECT 1 FROM test_claim_commit_fault WHERE mode = 'error') THEN
            RAISE EXCEPTION 'test: the claim''s commit is refused';
          END IF;
          IF EXISTS (SELECT 1 FROM test_claim_commit_fault WHERE mode = 'terminate') THEN
            PERFORM pg_terminate_backend(pg_backend_pid());
          END IF;
        END IF;
        RETURN NULL;
      END $$;
      -- Deferred: it runs when the claim's transaction commits, after the leased rows were returned.
      CREATE CONSTRAINT TRIGGER test_claim_commit_fault AFTER INSERT OR UPDATE ON webhook_delivery_leases
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_claim_commit_fault();
    `);
    const log = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    worker = await startTestWorker(t, { log });
  });
  after(async () => {
    gate.release();
    await worker.stop();
    await target.close();
    await t.close();
  });
  const arm = (mode: 'error' | 'terminate') => t.db.pool.query('INSERT INTO test_claim_commit_fault (mode) VALUES ($1)', [mode]);
  const disarm = () => t.db.pool.query('DELETE FROM test_claim_commit_fault');
  beforeEach(async () => {
    await disarm();
    logged.length = 0;
    target.respond(() => ({ status: 200 }));
  });

  for (const mode of ['error', 'terminate'] as const) {
    const how = mode === 'error' ? 'fails with an error' : 'loses its connection (pg_terminate_backend)';
    test(`the COMMIT ${how}: the attempt sent meanwhile is not recorded; the delivery is sent again with the same id and nothing is lost`, async () => {
      const path = `/commit-${mode}`;
      const org = await connectPlatform(t);
      const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}`, secret: 'commit-secret' });
      await arm(mode);
      await gate.query('SELECT pg_advisory_lock($1)', [COMMIT_GATE]);
      const before = target.requests.length;
      await completeCall(t, org.member);

      // The attempt leaves while the claim's commit is held open, and is answered.
      const sent = (await target.waitForRequests(before + 1))[before];
      assert.equal(sent!.url, path);
      assert.deepEqual(await attemptsOf(t, String(sent!.headers['x-delivery-id'])), [], 'nothing is recorded before the commit');
      // Now the commit goes on, and fails.
      await gate.query('SELECT pg_advisory_unlock($1)', [COMMIT_GATE]);
      // A lost connection is an outage, whose first line is a warning (src/db/availability.ts); a failed COMMIT is an error.
      await waitFor('the worker to report the failed claim', async () => logged.some((line) => line.level >= 40));

      const [pending] = await deliveriesOf(t, hook.id);
      assert.equal(pending!.id, sent!.headers['x-delivery-id']);
      assert.equal(pending!.status, 'pending', 'the delivery is still due');
      assert.equal(pending!.attempts, 0, 'the lease never existed: its attempt number was not taken');
      assert.equal(pending!.lease_token, null);
      assert.deepEqual(await attemptsOf(t, pending!.id), [], 'no attempt is recorded without a committed lease');

      // The fault clears; the worker looks again after its pause and delivers it, same ids.
      await disarm();
      const [delivered] = await settled(t, hook.id, 1);
      assert.equal(delivered!.id, pending!.id);
      assert.equal(delivered!.status, 'succeeded');
      assert.equal(delivered!.attempts, 1);
      assert.deepEqual(await attemptsOf(t, delivered!.id), [{ attempt: 1, status_code: 200, error: null, outcome: 'succeeded' }]);
      const received = target.requests.filter((r) => r.url === path);
      assert.ok(received.length >= 2, 'sent under the refused claim, then again');
      for (const request of received) {
        assert.equal(request.headers['x-delivery-id'], delivered!.id);
        assert.equal(request.headers['webhook-id'], delivered!.id);
        assert.equal(request.headers['x-delivery-attempt'], '1');
      }
    });
  }

  test('claimBatch: the leases are returned before the commit, which then rejects; none of them was taken', async () => {
    await worker.stop();
    try {
      const org = await connectPlatform(t);
      const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/by-hand` });
      await completeCall(t, org.member);
      await arm('error');
      const { claimed, committed } = await claimBatch(t.db.pool, { limit: 10, leaseMs: 60_000 });
      const [leased] = claimed.filter((c) => c.subscription_id === hook.id);
      assert.equal(leased!.attempt, 1, 'the leased row came back before the commit');
      await assert.rejects(committed, /the claim's commit is refused/);
      await disarm();
      const [row] = await deliveriesOf(t, hook.id);
      assert.equal(row!.id, leased!.id);
      assert.deepEqual(
        { status: row!.status, attempts: row!.attempts, lease_token: row!.lease_token },
        { status: 'pending', attempts: 0, lease_token: null },
      );
      const again = await claimBatch(t.db.pool, { limit: 10, leaseMs: 60_000 });
      await again.committed;
      assert.deepEqual(
        again.claimed.filter((c) => c.subscription_id === hook.id).map((c) => [c.id, c.attempt]),
        [[row!.id, 1]],
        'the same delivery, same attempt number',
      );
    } finally {
      await disarm();
      worker = await startTestWorker(t);
    }
  });
});

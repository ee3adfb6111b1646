// Retention deleting the delivery log while the worker writes it. The purge
// deletes attempts older than 30 days (of deliveries still being attempted
// too) and deliveries finished more than 30 days ago, with their attempts,
// in batches, while the worker inserts attempts and updates deliveries of the
// same subscriptions. Invariants: no 5xx, no error-level log line, no
// deadlock; every attempt the worker recorded stays; nothing older than the
// retention is left once the purge has run.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { connectPlatform, subscribeHook, waitFor } from '../helpers/webhooks.ts';
import { assertNoErrorLogs, assertRaced, postCompletedCalls, race, withRaceRig } from '../helpers/races.ts';
import { purgeDeliveryLog } from '../../src/webhooks/worker/retention.ts';

describe('retention while the worker writes the delivery log', () => {
  test('old attempts and finished deliveries are purged, again and again, beside new attempts of the same deliveries', (ctx) =>
    withRaceRig(
      {
        respond: (_request, index) => ({ status: index % 4 === 3 ? 500 : 200, delayMs: index % 3 }),
      },
      async ({ t, target }) => {
        const org = await connectPlatform(t, { scopes: ['calls:read', 'calls:write'] });
        const live = await subscribeHook(t, org, { hookUrl: `${target.url}/live` });
        // A subscription nothing is sent to: its deliveries, written below as finished long ago, are purged whole.
        const archived = await subscribeHook(t, org, { hookUrl: `${target.url}/archived` });
        await t.db.pool.query(
          "UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now(), disabled_reason = 'delivery_failures' WHERE id = $1",
          [archived.id],
        );
        let purged = { attempts: 0, deliveries: 0 };

        const rounds = await race(
          { rounds: 300, maxMs: 5000 },
          // Age some history past retention, then purge: old attempts (also on deliveries the worker is on
          // right now) and the archived subscription's deliveries, finished long ago.
          async (round) => {
            await t.db.pool.query(
              `INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code, outcome)
           SELECT d.organization_id, d.id, d.subscription_id, 1000 + $2::int, now() - interval '40 days', 500, 'retrying'
             FROM webhook_deliveries d WHERE d.subscription_id = $1 ORDER BY d.created_at DESC LIMIT 20`,
              [live.id, round],
            );
            await t.db.pool.query(
              `WITH old AS (
             INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, status, attempts, finished_at)
             SELECT c.organization_id, $1, c.id, 'call.completed', '{}', 'failed', 1, now() - interval '35 days'
               FROM calls c WHERE c.organization_id = $2
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = $1 AND d.call_id = c.id)
              LIMIT 10
             RETURNING organization_id, id, subscription_id
           )
           INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code, outcome)
           SELECT organization_id, id, subscription_id, 1, now() - interval '36 days', 500, 'failed' FROM old`,
              [archived.id, org.member.org.id],
            );
            const removed = await purgeDeliveryLog(t.db.pool);
            purged = { attempts: purged.attempts + removed.attempts, deliveries: purged.deliveries + removed.deliveries };
          },
          (round) => postCompletedCalls(t, org.headers, round, 4),
        );
        ctx.diagnostic(
          `rounds: ${rounds.join(', ')}; purged ${purged.attempts} attempts, ${purged.deliveries} deliveries; requests ${target.requests.length}`,
        );
        assertRaced(rounds);
        assert.ok(purged.attempts > 0 && purged.deliveries > 0, 'the purge removed something each kind');

        // Every delivery the worker finished keeps the attempt that finished it.
        await waitFor(
          'the live deliveries to settle',
          async () =>
            (await t.db.pool.query("SELECT 1 FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'pending'", [live.id]))
              .rowCount === 0,
          15_000,
        );
        const {
          rows: [unlogged],
        } = await t.db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM webhook_deliveries d
        WHERE d.subscription_id = $1 AND d.status <> 'pending'
          AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.attempt = d.attempts
                             AND a.outcome IN ('succeeded', 'failed'))`,
          [live.id],
        );
        assert.equal(unlogged!.n, 0, 'each finished delivery keeps its last attempt');
        await purgeDeliveryLog(t.db.pool);
        const {
          rows: [old],
        } = await t.db.pool.query<{ attempts: number; deliveries: number }>(
          `SELECT (SELECT count(*)::int FROM webhook_attempts WHERE attempted_at < now() - interval '30 days') AS attempts,
              (SELECT count(*)::int FROM webhook_deliveries WHERE status <> 'pending' AND finished_at < now() - interval '30 days') AS deliveries`,
        );
        assert.deepEqual(old, { attempts: 0, deliveries: 0 });
        assertNoErrorLogs(t.logs);
      },
    ));
});

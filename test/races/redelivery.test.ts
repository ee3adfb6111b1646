// Recover and redeliver while the worker records outcomes of the same
// deliveries, and while their subscription is deleted. Recover requeues many
// failed deliveries of one subscription; redeliver one; the worker claims
// them, attempts them and records the outcome under its lease; a deletion
// cascades to them. Invariants: no 5xx, no error-level log line, no deadlock;
// a redelivery answered 202 is attempted again (never swallowed by an
// outcome recorded under an older lease).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';
import { assertNo5xx, assertNoErrorLogs, assertRaced, pause, race, withRaceRig } from '../helpers/races.ts';
import { claimDueDeliveries, completeCall, connectPlatform, startWebhookApp, subscribeHook, waitFor } from '../helpers/webhooks.ts';
import { writeOutcomes } from '../../src/webhooks/worker/recorder.ts';

describe('a redelivery asked for while an attempt still holds a lease that has run out', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  test("is refused as in flight; the attempt's late outcome is not held; once a claim takes over, a redelivery is accepted", async () => {
    const org = await connectPlatform(t);
    await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/stalled' });
    await completeCall(t, org.member);
    const [claimed] = await claimDueDeliveries(t.db.pool, { limit: 1, leaseMs: 60_000 });
    // The worker stalls past its lease; no other claim has taken the delivery over yet.
    await t.db.pool.query("UPDATE webhook_delivery_leases SET expires_at = now() - interval '1 second' WHERE delivery_id = $1", [
      claimed!.id,
    ]);
    const headers = { 'x-user-token': org.member.token };
    const refused = await t.app.inject({ method: 'POST', url: `/webhooks/deliveries/${claimed!.id}/redeliver`, headers });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(refused.json().code, 'WEBHOOK_DELIVERY_IN_FLIGHT');
    // Its outcome arrives late: logged, but the lease it was sent under has run out, so the delivery stays as it is.
    const late = (attempt: typeof claimed) => ({
      deliveryId: attempt!.id,
      leaseToken: attempt!.lease_token,
      attempt: attempt!.attempt,
      attemptedAt: new Date(),
      statusCode: 200,
      latencyMs: 5,
      error: null,
      errorMessage: null,
      responseBody: null,
      outcome: 'succeeded' as const,
      status: 'succeeded' as const,
      nextAttemptAt: null,
      health: 'healthy' as const,
    });
    const [recorded] = await writeOutcomes(t.db.pool, [late(claimed)]);
    assert.equal(recorded!.held, false);
    assert.equal((await t.app.inject({ method: 'POST', url: `/webhooks/deliveries/${claimed!.id}/redeliver`, headers })).statusCode, 409);
    // A claim takes it over, sends it again and records: the delivery is free for a redelivery.
    const [again] = await claimDueDeliveries(t.db.pool, { limit: 1, leaseMs: 60_000 });
    assert.equal(again!.id, claimed!.id);
    assert.equal((await writeOutcomes(t.db.pool, [late(again)]))[0]!.held, true);
    const accepted = await t.app.inject({ method: 'POST', url: `/webhooks/deliveries/${claimed!.id}/redeliver`, headers });
    assert.equal(accepted.statusCode, 202, accepted.body);
    const {
      rows: [row],
    } = await t.db.pool.query(
      'SELECT d.status, l.token AS lease_token FROM webhook_deliveries d LEFT JOIN webhook_delivery_leases l ON l.delivery_id = d.id WHERE d.id = $1',
      [claimed!.id],
    );
    assert.deepEqual(row, { status: 'pending', lease_token: null }, 'the redelivery stands');
  });
});

describe('recover and redeliver while the worker records outcomes and subscriptions are deleted', () => {
  test('every answer is one the API documents; every redelivery accepted is attempted again', (ctx) =>
    withRaceRig(
      {
        // Every attempt fails at once: with one retry 10 ms later, deliveries fail for good within moments, to be recovered.
        env: { WEBHOOK_RETRY_SCHEDULE: '10ms' },
        respond: (_request, index) => ({ status: 500, delayMs: index % 5 }),
      },
      async ({ t, target }) => {
        const member: Member = await createMember(t.db.pool);
        const client = await createClient(t.db.pool, { name: 'Recovering platform', scopes: ['calls:read', 'calls:write'] });
        const tokens = await issueTokens(t.db.pool, {
          client,
          userId: member.user.id,
          organizationId: member.org.id,
          scopes: ['calls:read'],
        });
        const platform = platformHeaders(tokens, client);
        const user = { 'x-user-token': member.token };
        const subscribe = async (hookUrl: string) => {
          const res = await t.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers: platform, payload: { hookUrl } });
          assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
          return res.json().id as string;
        };
        const staying = await subscribe(`${target.url}/staying`);
        const since = new Date(Date.now() - 60_000).toISOString();
        /** Redeliveries answered 202: the delivery and its attempt count then. */
        const accepted: { id: string; attempts: number }[] = [];

        const recover = async (subscriptionId: string, allowed: number[]) => {
          const res = await t.app.inject({ method: 'POST', url: `/webhooks/${subscriptionId}/recover`, headers: user, payload: { since } });
          assertNo5xx('POST /webhooks/{id}/recover', res);
          assert.ok(allowed.includes(res.statusCode), `recover answered ${res.statusCode}: ${res.body}`);
        };
        const redeliver = async (deliveryId: string, allowed: number[]) => {
          const res = await t.app.inject({ method: 'POST', url: `/webhooks/deliveries/${deliveryId}/redeliver`, headers: user });
          assertNo5xx('POST /webhooks/deliveries/{id}/redeliver', res);
          assert.ok(allowed.includes(res.statusCode), `redeliver answered ${res.statusCode}: ${res.body}`);
          return res;
        };
        const deliveryIds = async (subscriptionId: string) =>
          (
            await t.db.pool.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE subscription_id = $1', [subscriptionId])
          ).rows.map((r) => r.id);

        const rounds = await race(
          { rounds: 300, maxMs: 6000 },
          // A subscription of its own each round, recovered and redelivered while it is deleted.
          async (round) => {
            const doomed = await subscribe(`${target.url}/doomed-${round}`);
            await Promise.all(Array.from({ length: 4 }, (_, i) => completeCall(t, member, { summary: `doomed ${round}.${i}` })));
            await waitFor(
              'a failed delivery',
              async () =>
                (await t.db.pool.query("SELECT 1 FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'failed'", [doomed]))
                  .rowCount! > 0,
              5000,
            );
            const ids = await deliveryIds(doomed);
            await Promise.all([
              (async () => {
                for (let i = 0; i < 3; i++) await recover(doomed, [202, 404]);
              })(),
              ...ids.map((id) => redeliver(id, [202, 404, 409])),
              (async () => {
                await pause(round % 7);
                const res = await t.app.inject({ method: 'DELETE', url: `/webhooks/${doomed}`, headers: user });
                assert.equal(res.statusCode, 204, res.body);
              })(),
            ]);
          },
          // The subscription that stays: recovered and its deliveries redelivered over and over.
          async (round) => {
            await completeCall(t, member, { summary: `staying ${round}` });
            await recover(staying, [202]);
            for (const id of (await deliveryIds(staying)).slice(-3)) {
              const res = await redeliver(id, [202, 409]);
              if (res.statusCode === 202) accepted.push({ id, attempts: res.json().attempts });
            }
          },
        );
        ctx.diagnostic(`rounds: ${rounds.join(', ')}; redeliveries accepted: ${accepted.length}`);
        assertRaced(rounds);
        await waitFor(
          'every accepted redelivery attempted again',
          async () => {
            const { rows } = await t.db.pool.query<{ id: string; last: number }>(
              'SELECT delivery_id AS id, max(attempt)::int AS last FROM webhook_attempts WHERE delivery_id = ANY ($1) GROUP BY delivery_id',
              [[...new Set(accepted.map((a) => a.id))]],
            );
            const last = new Map(rows.map((r) => [r.id, r.last]));
            return accepted.every((a) => (last.get(a.id) ?? 0) > a.attempts);
          },
          15_000,
        );
        assert.ok(accepted.length > 0, 'some redeliveries were accepted');
        assertNoErrorLogs(t.logs);
      },
    ));
});

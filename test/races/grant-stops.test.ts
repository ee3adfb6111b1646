// A grant stops standing (revoked, its user or organization deactivated)
// while calls are ingested and delivered. The stop disables the grant's
// subscriptions and fails their pending deliveries (migration 0007) in its
// own transaction, beside the outbox inserting deliveries, claims leasing
// them and the worker recording outcomes. Invariants: no 5xx, no error-level
// log line; once the stop has committed, the subscription is disabled, has
// no pending delivery (none raced in beside the stop), and no attempt is
// made until it is active again.
import { COMMAND_LINE } from '../../src/audit/audit-actor.ts';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders, tokenRequest, type TestClient } from '../helpers/oauth.ts';
import { assertNo5xx, assertNoErrorLogs, assertRaced, pause, race, waitForLockWait, withRaceRig, type RaceRig } from '../helpers/races.ts';
import { revokeConnectedApp } from '../../src/oauth/connected-apps.service.ts';
import { setOrganizationActive } from '../../src/organizations/organizations.queries.ts';
import { setUserActiveByEmail } from '../../src/organizations/users.queries.ts';
import { NO_CACHES } from '../../src/cache/caches.ts';

describe('subscriptions stopped with their grant while calls are ingested and delivered', () => {
  let rig: RaceRig;
  /** Every fifth answer a 500: failures lock the subscription for its failing streak. */
  const racing = (body: () => Promise<void>) =>
    withRaceRig({ respond: (_request, index) => ({ status: index % 5 === 4 ? 500 : 200, delayMs: index % 4 }) }, (started) => {
      rig = started;
      return body();
    });

  interface Tenant {
    owner: Member;
    /** Another member, whose x-user-token posts the calls (it outlives the owner's deactivation). */
    caller: Member;
    client: TestClient;
    hookUrl: string;
  }

  async function tenant(name: string): Promise<Tenant> {
    const owner = await createMember(rig.t.db.pool);
    const caller = await createMember(rig.t.db.pool, { org: owner.org, role: 'member' });
    const client = await createClient(rig.t.db.pool, { name: 'Racing platform', scopes: ['calls:read', 'calls:write'] });
    return { owner, caller, client, hookUrl: `${rig.target.url}/${name}` };
  }

  /** A grant of the owner and the hook subscribed (again) under it: the same subscription, active, bound to this grant. */
  async function connect(x: Tenant) {
    const tokens = await issueTokens(rig.t.db.pool, {
      client: x.client,
      userId: x.owner.user.id,
      organizationId: x.owner.org.id,
      scopes: ['calls:read'],
    });
    const res = await rig.t.app.inject({
      method: 'POST',
      url: '/webhooks/subscribe',
      headers: platformHeaders(tokens, x.client),
      payload: { hookUrl: x.hookUrl },
    });
    assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
    return { tokens, subscriptionId: res.json().id as string };
  }

  /** Calls of the tenant's organization, four at once; `allowed` are the statuses a call may get (201, or 401 while the organization is off). */
  function calls(x: Tenant, allowed: number[] = [201]) {
    return async (round: number) => {
      const answers = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          rig.t.app.inject({
            method: 'POST',
            url: '/calls',
            headers: { 'x-user-token': x.caller.token },
            payload: { summary: `round ${round} call ${i}`, duration_seconds: i },
          }),
        ),
      );
      for (const res of answers) {
        assertNo5xx('POST /calls', res);
        assert.ok(allowed.includes(res.statusCode), `POST /calls answered ${res.statusCode}: ${res.body}`);
      }
    };
  }

  /** Right after the stop committed: disabled for `reason`, nothing pending. */
  async function assertStopped(subscriptionId: string, reason: string) {
    const {
      rows: [subscription],
    } = await rig.t.db.pool.query('SELECT status, disabled_reason FROM webhook_subscriptions WHERE id = $1', [subscriptionId]);
    assert.deepEqual(subscription, { status: 'disabled', disabled_reason: reason });
    const {
      rows: [pending],
    } = await rig.t.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'pending'",
      [subscriptionId],
    );
    assert.equal(pending!.n, 0, 'no delivery left pending (none raced in beside the stop)');
  }

  /** No attempt started between a stop's commit and the next connection's request. */
  async function assertNoAttemptsWhileStopped(subscriptionId: string, stopped: { from: number; to: number }[]) {
    const { rows } = await rig.t.db.pool.query<{ at: Date }>(
      `SELECT a.attempted_at AS at FROM webhook_attempts a WHERE a.subscription_id = $1`,
      [subscriptionId],
    );
    const during = rows.filter((row) => stopped.some((w) => row.at.getTime() > w.from && row.at.getTime() < w.to));
    assert.deepEqual(during, [], 'no attempt while the grant did not stand');
    assert.ok(rows.length > 0, 'deliveries were attempted between the stops');
  }

  test('revoking a connected app with two grants locks their subscriptions in id order, as recording outcomes waits for them', () =>
    racing(async () => {
      const x = await tenant('two-grants');
      const first = await connect(x);
      x.hookUrl = `${rig.target.url}/two-grants-second`;
      const second = await connect(x);
      // The first grant's subscription gets the higher id: grant by grant, it would be locked first.
      const high = 'ffffffff-ffff-4fff-bfff-ffffffffffff';
      const low = '00000000-0000-4000-8000-000000000000';
      await rig.t.db.pool.query('UPDATE webhook_subscriptions SET id = $2 WHERE id = $1', [first.subscriptionId, high]);
      await rig.t.db.pool.query('UPDATE webhook_subscriptions SET id = $2 WHERE id = $1', [second.subscriptionId, low]);
      // What recordOutcomes does for a batch with attempts of both: FOR KEY SHARE in id order, the low one first.
      const recorder = await rig.t.db.pool.connect();
      try {
        await recorder.query('BEGIN');
        await recorder.query('SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR KEY SHARE', [low]);
        const revoking = revokeConnectedApp(rig.t.db.pool, NO_CACHES, x.owner.org.id, x.client.client_id, COMMAND_LINE);
        await waitForLockWait(rig.t.db.pool);
        await recorder.query('SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR KEY SHARE', [high]);
        await recorder.query('COMMIT');
        assert.equal(await revoking, true);
      } finally {
        recorder.release();
      }
      await assertStopped(high, 'grant_revoked');
      await assertStopped(low, 'grant_revoked');
    }));

  /** A grant standing with its hook active, and how to stop it. */
  interface Standing {
    subscriptionId: string;
    stop(): Promise<void>;
  }

  async function enable(x: Tenant, subscriptionId: string) {
    const res = await rig.t.app.inject({
      method: 'POST',
      url: `/webhooks/${subscriptionId}/enable`,
      headers: { 'x-user-token': x.caller.token },
    });
    assertNo5xx('POST /webhooks/{id}/enable', res);
    assert.equal(res.statusCode, 200, res.body);
  }

  /** Ways a grant stops standing, each raced round after round against calls being ingested and delivered. */
  const stops: {
    title: string;
    name: string;
    reason: string;
    /** What POST /calls may answer meanwhile. */
    allowed: number[];
    /** Makes the grant stand, the hook active: from scratch in the first round, after the previous round's stop later. */
    stand(x: Tenant, first: boolean, subscriptionId: string): Promise<Standing>;
  }[] = [
    {
      title: "the platform's grant is revoked (RFC 7009, the refresh token) again and again",
      name: 'revoked',
      reason: 'grant_revoked',
      allowed: [201],
      // A new grant each round, the hook subscribed again under it.
      async stand(x) {
        const { tokens, subscriptionId } = await connect(x);
        return {
          subscriptionId,
          async stop() {
            const res = await tokenRequest(
              rig.t.app,
              { token: tokens.refresh_token },
              {
                path: '/oauth/revoke',
                basic: { client_id: x.client.client_id, client_secret: x.client.client_secret },
              },
            );
            assertNo5xx('POST /oauth/revoke', res);
            assert.equal(res.statusCode, 200, res.body);
          },
        };
      },
    },
    {
      title: 'the user who connected the platform is deactivated, reactivated and the hook re-enabled, again and again',
      name: 'user-off',
      reason: 'user_deactivated',
      allowed: [201],
      async stand(x, first, subscriptionId) {
        if (first) subscriptionId = (await connect(x)).subscriptionId;
        else {
          await setUserActiveByEmail(rig.t.db.pool, x.owner.email, true);
          await enable(x, subscriptionId);
        }
        return { subscriptionId, stop: () => setUserActiveByEmail(rig.t.db.pool, x.owner.email, false).then(() => {}) };
      },
    },
    {
      title: 'the organization is deactivated, reactivated and the hook re-enabled, again and again',
      name: 'org-off',
      reason: 'organization_deactivated',
      // While the organization is off its x-user-tokens are refused (401).
      allowed: [201, 401],
      async stand(x, first, subscriptionId) {
        if (first) subscriptionId = (await connect(x)).subscriptionId;
        else {
          await setOrganizationActive(rig.t.db.pool, x.owner.org.id, true);
          await enable(x, subscriptionId);
        }
        return { subscriptionId, stop: () => setOrganizationActive(rig.t.db.pool, x.owner.org.id, false).then(() => {}) };
      },
    },
  ];

  for (const stop of stops) {
    test(stop.title, (ctx) =>
      racing(async () => {
        const x = await tenant(stop.name);
        const stopped: { from: number; to: number }[] = [];
        let subscriptionId = '';
        const rounds = await race(
          { rounds: 300, maxMs: 5000 },
          async (round) => {
            if (stopped.length) stopped.at(-1)!.to = Date.now();
            const standing = await stop.stand(x, round === 0, subscriptionId);
            subscriptionId = standing.subscriptionId;
            await pause(round % 13);
            await standing.stop();
            stopped.push({ from: Date.now(), to: Infinity });
            await assertStopped(subscriptionId, stop.reason);
          },
          calls(x, stop.allowed),
        );
        ctx.diagnostic(`rounds: ${rounds.join(', ')}; requests received: ${rig.target.requests.length}`);
        assertRaced(rounds);
        await assertNoAttemptsWhileStopped(subscriptionId, stopped);
        assertNoErrorLogs(rig.t.logs);
      }),
    );
  }
});

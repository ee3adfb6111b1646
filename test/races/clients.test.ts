// An OAuth client is deleted, or its secret rotated, while its platform
// ingests calls and its hooks are delivered. Deleting the client deletes its
// grants, tokens and subscriptions (with their deliveries and attempts) by
// cascade, beside the outbox inserting deliveries for those subscriptions,
// claims leasing them and the worker recording outcomes. Invariants: no 5xx,
// no error-level log line, every call answered 201 stored; once the deletion
// has committed nothing of the client is left and its token is refused; once
// a rotation has committed the old secret is refused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders, tokenRequest } from '../helpers/oauth.ts';
import { assertNo5xx, assertNoErrorLogs, assertRaced, pause, race, waitForBlockedBy, withRaceRig, type RaceRig } from '../helpers/races.ts';
import { deleteClient, rotateClientSecret } from '../../src/oauth/clients.service.ts';

describe('OAuth clients deleted or re-keyed while their platforms ingest and receive calls', () => {
  let rig: RaceRig;
  let member: Member;
  /** Every fifth answer a 500: failures lock the subscription for its failing streak. */
  const racing = (body: () => Promise<void>) =>
    withRaceRig(
      {
        respond: (_request, index) => ({ status: index % 5 === 4 ? 500 : 200, delayMs: index % 4 }),
        // The refresh race sends thousands of token requests a minute from one address.
        env: { TOKEN_RATE_LIMIT: '100000/min' },
      },
      async (started) => {
        rig = started;
        member = await createMember(rig.t.db.pool);
        await body();
      },
    );

  async function stored(ids: string[]) {
    const { rows } = await rig.t.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM calls WHERE id = ANY ($1)', [ids]);
    return rows[0]!.n;
  }

  test('a client with two hooks is deleted while its platform and the organization complete calls', (ctx) =>
    racing(async () => {
      const calls: string[] = [];
      let current: { headers: Record<string, string> } | undefined;
      let slowestDelete = 0;
      /** The platform's own calls: stored while its client lived, refused once it was gone. */
      const platformCalls = { stored: 0, refused: 0 };
      const rounds = await race(
        // A deletion waits for the claims that hold its subscriptions: on a loaded machine a round takes seconds.
        { rounds: 300, maxMs: 5000, hardMaxMs: 60_000 },
        async (round) => {
          const client = await createClient(rig.t.db.pool, { name: `Doomed ${round}`, scopes: ['calls:read', 'calls:write'] });
          const tokens = await issueTokens(rig.t.db.pool, {
            client,
            userId: member.user.id,
            organizationId: member.org.id,
            scopes: ['calls:read', 'calls:write'],
          });
          const headers = platformHeaders(tokens, client);
          const hooks: string[] = [];
          for (const path of ['a', 'b']) {
            const res = await rig.t.app.inject({
              method: 'POST',
              url: '/webhooks/subscribe',
              headers,
              payload: { hookUrl: `${rig.target.url}/${round}/${path}` },
            });
            assert.equal(res.statusCode, 201, res.body);
            hooks.push(res.json().id);
          }
          current = { headers };
          await pause(round % 13);
          const deleteStarted = Date.now();
          assert.equal(await deleteClient(rig.t.db.pool, client.client_id), true);
          slowestDelete = Math.max(slowestDelete, Date.now() - deleteStarted);
          const {
            rows: [left],
          } = await rig.t.db.pool.query<{ subscriptions: number; deliveries: number; grants: number }>(
            `SELECT (SELECT count(*)::int FROM webhook_subscriptions WHERE client_id = $1) AS subscriptions,
                  (SELECT count(*)::int FROM webhook_deliveries WHERE subscription_id = ANY ($2)) AS deliveries,
                  (SELECT count(*)::int FROM oauth_grants WHERE id = $3) AS grants`,
            [client.client_id, hooks, tokens.grant_id],
          );
          assert.deepEqual(left, { subscriptions: 0, deliveries: 0, grants: 0 });
          const refused = await rig.t.app.inject({ method: 'GET', url: '/calls/recent', headers });
          assert.equal(refused.statusCode, 401, refused.body);
        },
        async (round) => {
          const platform = current;
          const answers = await Promise.all([
            ...Array.from({ length: 3 }, (_, i) =>
              rig.t.app.inject({
                method: 'POST',
                url: '/calls',
                headers: { 'x-user-token': member.token },
                payload: { summary: `r${round} user ${i}`, duration_seconds: i },
              }),
            ),
            ...(platform
              ? [
                  rig.t.app.inject({
                    method: 'POST',
                    url: '/calls',
                    headers: platform.headers,
                    payload: { summary: `r${round} platform`, duration_seconds: 1 },
                  }),
                ]
              : []),
          ]);
          answers.forEach((res, i) => {
            assertNo5xx('POST /calls', res);
            // The platform's own request may arrive after its client is gone.
            assert.ok(res.statusCode === 201 || (i === 3 && res.statusCode === 401), `POST /calls answered ${res.statusCode}: ${res.body}`);
            if (res.statusCode === 201) calls.push(res.json().id);
            if (i === 3) platformCalls[res.statusCode === 201 ? 'stored' : 'refused']++;
          });
        },
      );
      // Deliveries to the hooks of clients that were deleted (a round's hooks live for its round only).
      const doomedDeliveries = rig.target.requests.filter((r) => /^\/\d+\/[ab]$/.test(r.url)).length;
      ctx.diagnostic(
        `rounds: ${rounds.join(', ')}; requests received: ${rig.target.requests.length}, ${doomedDeliveries} to doomed hooks; ` +
          `platform calls stored ${platformCalls.stored}, refused ${platformCalls.refused}; slowest deletion: ${slowestDelete} ms`,
      );
      assertRaced(rounds);
      assert.ok(platformCalls.stored > 0, "the platform's calls were stored while its client lived");
      assert.ok(doomedDeliveries > 0, 'the worker delivered to hooks of clients being deleted');
      assert.equal(await stored(calls), calls.length, 'every call answered 201 is stored');
      assertNoErrorLogs(rig.t.logs);
    }));

  test('a client is deleted while its platform rotates refresh tokens of several connections', (ctx) =>
    racing(async () => {
      let refreshed = 0;
      let refused = 0;
      /** Rounds in which a refresh under way was refused by the deletion (rather than all finishing first). */
      let racedRounds = 0;
      const rounds = await race(
        { rounds: 300, maxMs: 5000 },
        async (round) => {
          const client = await createClient(rig.t.db.pool, { name: `Refreshing ${round}`, scopes: ['calls:read'] });
          const connections = await Promise.all(
            Array.from({ length: 3 }, async () => {
              const other = await createMember(rig.t.db.pool, { org: member.org });
              return issueTokens(rig.t.db.pool, { client, userId: other.user.id, organizationId: member.org.id, scopes: ['calls:read'] });
            }),
          );
          /** Each connection's newest refresh token. */
          const latest = connections.map((tokens) => tokens.refresh_token);
          let firstRefreshed!: () => void;
          const refreshedOnce = new Promise<void>((resolve) => (firstRefreshed = resolve));
          let refusedMidway = false;
          const refreshing = connections.map(async (_tokens, c) => {
            for (let i = 0; i < 20; i++) {
              const res = await tokenRequest(rig.t.app, {
                grant_type: 'refresh_token',
                refresh_token: latest[c]!,
                client_id: client.client_id,
                client_secret: client.client_secret,
              });
              assertNo5xx('POST /oauth/token', res);
              if (res.statusCode !== 200) {
                // The client is gone: its credentials or its grant are refused.
                assert.ok(res.statusCode === 400 || res.statusCode === 401, res.body);
                refused++;
                refusedMidway = true;
                return;
              }
              refreshed++;
              latest[c] = res.json().refresh_token;
              firstRefreshed();
            }
          });
          const allDone = Promise.all(refreshing);
          // Deleted once the refreshes are under way (one has been answered), at a different moment each round.
          await Promise.race([refreshedOnce, allDone]);
          await pause(round % 13);
          assert.equal(await deleteClient(rig.t.db.pool, client.client_id), true);
          await allDone;
          if (refusedMidway) racedRounds++;
          // Once the deletion has committed, whatever each connection holds last is refused.
          for (const refreshToken of latest) {
            const res = await tokenRequest(rig.t.app, {
              grant_type: 'refresh_token',
              refresh_token: refreshToken,
              client_id: client.client_id,
              client_secret: client.client_secret,
            });
            assert.ok(
              res.statusCode === 400 || res.statusCode === 401,
              `a refresh after the deletion answered ${res.statusCode}: ${res.body}`,
            );
          }
        },
        async (round) => {
          const res = await rig.t.app.inject({
            method: 'POST',
            url: '/calls',
            headers: { 'x-user-token': member.token },
            payload: { summary: `r${round}`, duration_seconds: 1 },
          });
          assertNo5xx('POST /calls', res);
          assert.equal(res.statusCode, 201, res.body);
        },
      );
      ctx.diagnostic(`rounds: ${rounds.join(', ')}; refreshed ${refreshed}, refused ${refused}; refused midway in ${racedRounds} rounds`);
      assertRaced(rounds);
      assert.ok(refreshed > 0, 'refreshes were answered before the deletions');
      assert.ok(racedRounds > 0, 'some deletion came while its connections were still refreshing');
      assertNoErrorLogs(rig.t.logs);
    }));

  test('deleting a client locks its subscriptions in id order, the order recording outcomes waits for them in', (ctx) =>
    racing(async () => {
      const client = await createClient(rig.t.db.pool, { name: 'Ordered', scopes: ['calls:read'] });
      const tokens = await issueTokens(rig.t.db.pool, {
        client,
        userId: member.user.id,
        organizationId: member.org.id,
        scopes: ['calls:read'],
      });
      for (const path of ['first', 'second']) {
        const res = await rig.t.app.inject({
          method: 'POST',
          url: '/webhooks/subscribe',
          headers: platformHeaders(tokens, client),
          payload: { hookUrl: `${rig.target.url}/ordered-${path}` },
        });
        assert.equal(res.statusCode, 201, res.body);
      }
      // The subscription stored first gets the higher id: a cascade deletes it first (index order is storage order).
      const high = 'ffffffff-ffff-4fff-bfff-ffffffffffff';
      const low = '00000000-0000-4000-8000-000000000000';
      await rig.t.db.pool.query(
        `UPDATE webhook_subscriptions SET id = CASE WHEN callback_url LIKE '%ordered-first' THEN $2::uuid ELSE $3::uuid END
                                WHERE client_id = $1`,
        [client.client_id, high, low],
      );
      // What recordOutcomes does for a batch with attempts of both: FOR KEY SHARE in id order, the low one first.
      const recorder = await rig.t.db.pool.connect();
      try {
        await recorder.query('BEGIN');
        const { rows } = await recorder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await recorder.query('SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR KEY SHARE', [low]);
        const deleting = deleteClient(rig.t.db.pool, client.client_id);
        // The deletion waits for the recorder's lock (not merely any lock wait, such as the worker's, in the database).
        await waitForBlockedBy(rig.t.db.pool, rows[0]!.pid);
        await recorder.query('SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR KEY SHARE', [high]);
        await recorder.query('COMMIT');
        assert.equal(await deleting, true);
      } finally {
        recorder.release();
      }
      ctx.diagnostic('no deadlock');
    }));

  test("a client's secret is rotated while its platform completes and reads calls", (ctx) =>
    racing(async () => {
      const client = await createClient(rig.t.db.pool, { name: 'Re-keyed', scopes: ['calls:read', 'calls:write'] });
      const tokens = await issueTokens(rig.t.db.pool, {
        client,
        userId: member.user.id,
        organizationId: member.org.id,
        scopes: ['calls:read', 'calls:write'],
      });
      const subscribe = await rig.t.app.inject({
        method: 'POST',
        url: '/webhooks/subscribe',
        headers: platformHeaders(tokens, client),
        payload: { hookUrl: `${rig.target.url}/re-keyed` },
      });
      assert.equal(subscribe.statusCode, 201, subscribe.body);
      let secret = client.client_secret;
      /** Secrets that were replaced, with when their replacement committed. */
      const retired: { secret: string; at: number }[] = [];
      const calls: string[] = [];
      /** Requests with a secret replaced before they were sent (each refused). */
      let refusedRetired = 0;
      /** Requests answered 200 or 201 with a secret a rotation made (not the client's first). */
      let acceptedRotated = 0;
      const rounds = await race(
        { rounds: 300, maxMs: 5000 },
        async (round) => {
          await pause(round % 7);
          const rotated = await rotateClientSecret(rig.t.db.pool, client.client_id);
          retired.push({ secret, at: Date.now() });
          secret = rotated!.client_secret;
        },
        async (round) => {
          const used = [secret, ...retired.slice(-1).map((r) => r.secret)];
          const sentAt = Date.now();
          const answers = await Promise.all(
            used.flatMap((s) => {
              const headers = platformHeaders(tokens, { client_id: client.client_id, client_secret: s });
              return [
                rig.t.app.inject({
                  method: 'POST',
                  url: '/calls',
                  headers,
                  payload: { summary: `round ${round}`, duration_seconds: round },
                }),
                rig.t.app.inject({ method: 'GET', url: '/calls/recent', headers }),
              ];
            }),
          );
          answers.forEach((res, i) => {
            assertNo5xx(i % 2 ? 'GET /calls/recent' : 'POST /calls', res);
            assert.ok([200, 201, 401].includes(res.statusCode), `answered ${res.statusCode}: ${res.body}`);
            const usedSecret = used[Math.floor(i / 2)]!;
            const retiredAt = retired.find((r) => r.secret === usedSecret)?.at;
            if (retiredAt !== undefined && retiredAt < sentAt) {
              assert.equal(res.statusCode, 401, 'a secret replaced before the request was sent is refused');
              refusedRetired++;
            }
            if (res.statusCode === 201) calls.push(res.json().id);
            if (res.statusCode < 300 && usedSecret !== client.client_secret) acceptedRotated++;
          });
        },
      );
      ctx.diagnostic(
        `rounds: ${rounds.join(', ')}; calls stored: ${calls.length}; secrets made by a rotation accepted ${acceptedRotated} times, ` +
          `replaced secrets refused ${refusedRetired} times`,
      );
      assertRaced(rounds);
      assert.ok(acceptedRotated > 0, 'secrets made by a rotation were accepted');
      assert.ok(refusedRetired > 0, 'requests with a replaced secret were sent, and refused');
      assert.equal(await stored(calls), calls.length, 'every call answered 201 is stored');
      assertNoErrorLogs(rig.t.logs);
    }));
});

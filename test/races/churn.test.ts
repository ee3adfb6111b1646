// Webhook subscriptions coming and going under load, in miniature of the
// churn measured on Switchboard: over real HTTP, against an app with its
// credential caches and its delivery worker, for about 20 seconds,
// - a platform subscribes a hook and unsubscribes it again every ~300 ms,
// - calls are completed over POST /calls without pause (several at once),
// - /calls/recent and /locations are read,
// - a location is created and deleted every ~50 ms,
// - the platform rotates its refresh token every 500 ms,
// while the worker delivers to real HTTPS receivers on 127.0.0.1 and another
// subscription stays throughout. Then: no 5xx, no error-level log line, no
// deadlock; every call answered 201 exists; the subscription that stayed
// received every delivery owed to it (one per call, deduplicated by
// X-Delivery-Id).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMember } from '../helpers/fixtures.ts';
import { startHttpsTarget } from '../helpers/https-target.ts';
import { createClient, issueTokens } from '../helpers/oauth.ts';
import { assertNoErrorLogs, counterTotal, pause, withRaceRig } from '../helpers/races.ts';
import { waitFor } from '../helpers/webhooks.ts';

const DURATION_MS = 20_000;

describe('churn: subscriptions come and go while calls, reads, locations and token rotation go on', () => {
  test('nothing fails, every call is kept, the subscription that stayed gets every call', (ctx) =>
    withRaceRig(
      {
        listen: true,
        caches: true,
        env: { RATE_LIMIT: '1000000/min', TOKEN_RATE_LIMIT: '1000000/min' },
        respond: (_request, index) => ({ status: 200, delayMs: index % 3 }),
      },
      async ({ t, target: staysTarget }) => {
        const comesAndGoesTarget = await startHttpsTarget((_request, index) => ({ status: 200, delayMs: index % 5 }));
        try {
          const member = await createMember(t.db.pool);
          const client = await createClient(t.db.pool, { name: 'Churning platform', scopes: ['calls:read', 'calls:write'] });
          const issued = await issueTokens(t.db.pool, {
            client,
            userId: member.user.id,
            organizationId: member.org.id,
            scopes: ['calls:read', 'calls:write'],
          });
          let tokens = { access_token: issued.access_token, refresh_token: issued.refresh_token };
          const platform = () => ({
            authorization: `Bearer ${tokens.access_token}`,
            'x-client-id': client.client_id,
            'x-client-secret': client.client_secret,
          });
          const user = { 'x-user-token': member.token };

          /** Every answer, by route: status → count. */
          const answers = new Map<string, Map<number, number>>();
          const failures: string[] = [];
          async function send(
            route: string,
            path: string,
            init: { method: string; headers: Record<string, string>; body?: unknown; form?: Record<string, string> },
          ) {
            const headers: Record<string, string> = { ...init.headers };
            let body: string | undefined;
            if (init.form) {
              headers['content-type'] = 'application/x-www-form-urlencoded';
              body = new URLSearchParams(init.form).toString();
            } else if (init.body !== undefined) {
              headers['content-type'] = 'application/json';
              body = JSON.stringify(init.body);
            }
            const res = await fetch(`${t.url}${path}`, { method: init.method, headers, ...(body !== undefined ? { body } : {}) });
            const text = await res.text();
            const byStatus = answers.get(route) ?? new Map<number, number>();
            byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
            answers.set(route, byStatus);
            if (res.status >= 500) failures.push(`${route} ${res.status}: ${text}`);
            return { status: res.status, json: () => JSON.parse(text) };
          }

          const staying = await send('subscribe', '/webhooks/subscribe', {
            method: 'POST',
            headers: platform(),
            body: { hookUrl: `${staysTarget.url}/stays` },
          });
          assert.equal(staying.status, 201);
          const comesAndGoes = `${comesAndGoesTarget.url}/comes-and-goes`;
          const calls: string[] = [];
          const end = Date.now() + DURATION_MS;
          let failed = false;
          /** Repeats `work` every `everyMs` (back to back when it takes longer) until the end; every loop stops at the first failure. */
          const until = async (everyMs: number, work: () => Promise<void>) => {
            while (Date.now() < end && !failed) {
              const started = Date.now();
              try {
                await work();
              } catch (error) {
                failed = true;
                throw error;
              }
              await pause(Math.max(0, everyMs - (Date.now() - started)));
            }
          };

          await Promise.all([
            // The platform subscribes the hook, and ~150 ms later unsubscribes it: every ~300 ms.
            until(300, async () => {
              const on = await send('subscribe', '/webhooks/subscribe', {
                method: 'POST',
                headers: platform(),
                body: { hookUrl: comesAndGoes },
              });
              assert.ok(on.status === 201 || on.status === 200, `subscribe answered ${on.status}`);
              await pause(150);
              const off = await send('unsubscribe', '/webhooks/subscribe', {
                method: 'DELETE',
                headers: platform(),
                body: { hookUrl: comesAndGoes },
              });
              assert.equal(off.status, 200);
            }),
            // Completed calls, four senders without pause: three as the organization's user, one as the platform.
            ...[user, user, user, null].map((headers) =>
              until(0, async () => {
                const res = await send('POST /calls', '/calls', {
                  method: 'POST',
                  headers: headers ?? platform(),
                  body: { summary: 'Booked a visit', duration_seconds: 42 },
                });
                assert.equal(res.status, 201);
                calls.push(res.json().id);
              }),
            ),
            // Reads.
            until(20, async () => {
              const [recent, locations] = await Promise.all([
                send('GET /calls/recent', '/calls/recent', { method: 'GET', headers: platform() }),
                send('GET /locations', '/locations', { method: 'GET', headers: user }),
              ]);
              assert.equal(recent.status, 200);
              assert.equal(locations.status, 200);
            }),
            // A location created and deleted every ~50 ms.
            until(50, async () => {
              const created = await send('POST /locations', '/locations', {
                method: 'POST',
                headers: user,
                body: { name: 'Pop-up stand' },
              });
              assert.equal(created.status, 201);
              const deleted = await send('DELETE /locations/{id}', `/locations/${created.json().id}`, { method: 'DELETE', headers: user });
              assert.equal(deleted.status, 204);
            }),
            // The refresh token rotated every 500 ms.
            until(500, async () => {
              const res = await send('POST /oauth/token', '/oauth/token', {
                method: 'POST',
                headers: {},
                form: {
                  grant_type: 'refresh_token',
                  refresh_token: tokens.refresh_token,
                  client_id: client.client_id,
                  client_secret: client.client_secret,
                },
              });
              assert.equal(res.status, 200);
              const body = res.json();
              tokens = { access_token: body.access_token, refresh_token: body.refresh_token };
            }),
          ]);

          const summary = [...answers].map(([route, byStatus]) => `${route} ${[...byStatus].map(([s, n]) => `${n}×${s}`).join(' ')}`);
          ctx.diagnostic(summary.join('; '));
          assert.deepEqual(failures, [], 'no 5xx');

          const {
            rows: [stored],
          } = await t.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM calls WHERE id = ANY ($1)', [calls]);
          assert.equal(stored!.n, calls.length, 'every call answered 201 exists');

          // The subscription that stayed is owed one delivery per call.
          const owed = new Set(calls);
          const received = () => {
            const byDelivery = new Map<string, string>();
            for (const request of staysTarget.requests)
              byDelivery.set(String(request.headers['x-delivery-id']), JSON.parse(request.body).id);
            return new Set(byDelivery.values());
          };
          try {
            await waitFor(
              'every delivery owed to the subscription that stayed',
              async () => {
                const got = received();
                return [...owed].every((id) => got.has(id));
              },
              60_000,
            );
          } catch (error) {
            const { rows } = await t.db.pool.query<{ status: string; n: number }>(
              'SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 GROUP BY 1',
              [staying.json().id],
            );
            const missing = [...owed].filter((id) => !received().has(id)).length;
            throw new Error(`${(error as Error).message}: ${missing} of ${owed.size} not received; deliveries ${JSON.stringify(rows)}`);
          }
          const deliveryIds = new Set(staysTarget.requests.map((r) => String(r.headers['x-delivery-id'])));
          assert.equal(deliveryIds.size, owed.size, 'one delivery per call');
          ctx.diagnostic(
            `calls ${calls.length}; stays received ${staysTarget.requests.length} requests (${deliveryIds.size} deliveries); ` +
              `comes-and-goes received ${comesAndGoesTarget.requests.length}; outcomes dropped ` +
              `${await counterTotal(t.app.metrics.registry, 'switchboard_webhook_outcomes_dropped_total')}`,
          );
          assert.ok(comesAndGoesTarget.requests.length > 0, 'the hook that came and went was delivered to while it was there');
          assertNoErrorLogs(t.logs);
        } finally {
          await comesAndGoesTarget.close();
        }
      },
    ));
});

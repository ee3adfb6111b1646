// The circuit breaker and concurrency limit through the subscription view
// (GET /webhooks, GET /webhooks/{id}, POST /webhooks/{id}/enable), and the
// fresh start that subscribing again and re-enabling give an endpoint's
// health. The states are written with SQL on the owner connection, as the
// delivery worker's recorder would leave them (no worker runs here).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { connectPlatform, startWebhookApp, subscribeHook, type Connection } from '../helpers/webhooks.ts';

interface HealthRow {
  circuit_state: string;
  circuit_changed_at: Date | null;
  circuit_retry_at: Date | null;
  circuit_opens: number;
  consecutive_failures: number;
  slow: boolean;
  concurrency_limit: number | null;
}

describe("a subscription's circuit in the API", () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  const health = async (id: string) =>
    (
      await t.db.pool.query<HealthRow>(
        `SELECT circuit_state, circuit_changed_at, circuit_retry_at, circuit_opens, consecutive_failures, slow, concurrency_limit
         FROM webhook_subscriptions WHERE id = $1`,
        [id],
      )
    ).rows[0]!;

  /** Opens the circuit as the recorder does after a run of failures; `retryIn` negative: the wait is over (probing). */
  const trip = (id: string, retryIn: string, extra = '') =>
    t.db.pool.query(
      `UPDATE webhook_subscriptions
        SET circuit_state = 'open', circuit_changed_at = now() - interval '10 minutes', circuit_retry_at = now() + $2::interval,
            circuit_opens = 2, consecutive_failures = 7, slow = true, concurrency_limit = 1 ${extra}
      WHERE id = $1`,
      [id, retryIn],
    );

  const view = async (org: Connection, id: string) => {
    const one = await t.app.inject({ url: `/webhooks/${id}`, headers: { 'x-user-token': org.member.token } });
    assert.equal(one.statusCode, 200, one.body);
    for (const headers of [{ 'x-user-token': org.member.token }, org.headers]) {
      const listed = (await t.app.inject({ url: '/webhooks', headers })).json().find((s: { id: string }) => s.id === id);
      assert.deepEqual(listed, one.json(), 'the list shows the same view as GET /webhooks/{id}');
    }
    return one.json();
  };

  test('a new subscription: closed, never opened, no failures, the full concurrency limit', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/new' });
    assert.deepEqual((await view(org, hook.id)).circuit, {
      state: 'closed',
      since: null,
      next_probe_at: null,
      consecutive_failures: 0,
      concurrency_limit: 10,
    });
  });

  test('open while the wait lasts, probing once it is over; closed again it says since when', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/tripped' });

    await trip(hook.id, '5 minutes');
    let row = await health(hook.id);
    assert.deepEqual((await view(org, hook.id)).circuit, {
      state: 'open',
      since: row.circuit_changed_at!.toISOString(),
      next_probe_at: row.circuit_retry_at!.toISOString(),
      consecutive_failures: 7,
      concurrency_limit: 1,
    });

    await t.db.pool.query(
      "UPDATE webhook_subscriptions SET circuit_retry_at = now() - interval '1 second', concurrency_limit = 3 WHERE id = $1",
      [hook.id],
    );
    row = await health(hook.id);
    assert.deepEqual((await view(org, hook.id)).circuit, {
      state: 'probing',
      since: row.circuit_changed_at!.toISOString(),
      next_probe_at: row.circuit_retry_at!.toISOString(),
      consecutive_failures: 7,
      concurrency_limit: 3,
    });

    // What the recorder leaves after a healthy probe: closed, now; the limit climbing back.
    await t.db.pool.query(
      `UPDATE webhook_subscriptions SET circuit_state = 'closed', circuit_changed_at = now(), circuit_retry_at = NULL,
              circuit_opens = 0, consecutive_failures = 0, concurrency_limit = 2 WHERE id = $1`,
      [hook.id],
    );
    row = await health(hook.id);
    assert.deepEqual((await view(org, hook.id)).circuit, {
      state: 'closed',
      since: row.circuit_changed_at!.toISOString(),
      next_probe_at: null,
      consecutive_failures: 0,
      concurrency_limit: 2,
    });
  });

  test('subscribing again resets the endpoint health: closed now, no failures, one attempt at a time', async () => {
    const org = await connectPlatform(t);
    const hookUrl = 'https://127.0.0.1:9/subscribe-again';
    const hook = await subscribeHook(t, org, { hookUrl });
    await trip(hook.id, '1 hour');
    const tripped = await health(hook.id);

    const again = await t.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers: org.headers, payload: { hookUrl } });
    assert.equal(again.statusCode, 200);
    assert.deepEqual(
      Object.keys(again.json()).sort(),
      ['callback_url', 'event', 'filters', 'id'],
      'the subscribe answer keeps its three fields and filters',
    );
    const row = await health(hook.id);
    assert.equal(row.circuit_state, 'closed');
    assert.equal(row.circuit_retry_at, null);
    assert.equal(row.circuit_opens, 0);
    assert.equal(row.consecutive_failures, 0);
    assert.equal(row.slow, false);
    assert.equal(row.concurrency_limit, 1);
    assert.ok(row.circuit_changed_at! > tripped.circuit_changed_at!, 'it closed when subscribed again');
    assert.deepEqual((await view(org, hook.id)).circuit, {
      state: 'closed',
      since: row.circuit_changed_at!.toISOString(),
      next_probe_at: null,
      consecutive_failures: 0,
      concurrency_limit: 1,
    });

    // A closed circuit keeps its time: it did not change state.
    await subscribeHook(t, org, { hookUrl });
    assert.deepEqual((await health(hook.id)).circuit_changed_at, row.circuit_changed_at);
    const fresh = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/never-opened' });
    await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/never-opened' });
    assert.equal((await health(fresh.id)).circuit_changed_at, null);
  });

  test('re-enabling a disabled subscription resets the endpoint health and answers with it; enabling an active one changes nothing', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/re-enable' });
    await trip(
      hook.id,
      '1 hour',
      `, status = 'disabled', disabled_at = now(), disabled_reason = 'delivery_failures',
                                     failing_since = now() - interval '5 days'`,
    );
    const tripped = await health(hook.id);

    const enabled = await t.app.inject({
      method: 'POST',
      url: `/webhooks/${hook.id}/enable`,
      headers: { 'x-user-token': org.member.token },
    });
    assert.equal(enabled.statusCode, 200, enabled.body);
    const row = await health(hook.id);
    assert.deepEqual(
      { ...row, circuit_changed_at: undefined },
      {
        circuit_state: 'closed',
        circuit_changed_at: undefined,
        circuit_retry_at: null,
        circuit_opens: 0,
        consecutive_failures: 0,
        slow: false,
        concurrency_limit: 1,
      },
    );
    assert.ok(row.circuit_changed_at! > tripped.circuit_changed_at!);
    assert.equal(enabled.json().status, 'active');
    assert.deepEqual(enabled.json().circuit, {
      state: 'closed',
      since: row.circuit_changed_at!.toISOString(),
      next_probe_at: null,
      consecutive_failures: 0,
      concurrency_limit: 1,
    });

    // Active, with its circuit open again: enable is a no-op, the breaker keeps counting.
    await trip(hook.id, '1 hour');
    const before = await health(hook.id);
    const noop = await t.app.inject({ method: 'POST', url: `/webhooks/${hook.id}/enable`, headers: org.headers });
    assert.equal(noop.statusCode, 200, noop.body);
    assert.deepEqual(await health(hook.id), before);
    assert.equal(noop.json().circuit.state, 'open');
  });
});

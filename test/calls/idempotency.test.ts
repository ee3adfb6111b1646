// Idempotency-Key on POST /calls and POST /calls/{id}/complete
// (src/calls/idempotency.ts): one write per key and caller, the first
// answer given again to a retry, 422 for a key reused with another request,
// 409 with Retry-After while the first is still being processed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { writingTransactions } from '../helpers/calls.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { connectPlatform, startWebhookApp, subscribeHook, type Connection } from '../helpers/webhooks.ts';
import { housekeepingJobs } from '../../src/background.ts';
import { writeCompletedCall, type NewCompletedCall } from '../../src/calls/completed-call-batches.ts';
import { fingerprint, purgeExpiredIdempotencyKeys } from '../../src/calls/idempotency.ts';
import { KeyHeld } from '../../src/calls/idempotency.queries.ts';

describe('Idempotency-Key on calls ingest', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  const post = (app: TestApp, member: Member, url: string, payload: unknown, key?: string) =>
    app.app.inject({
      method: 'POST',
      url,
      payload: payload as object,
      headers: { 'x-user-token': member.token, ...(key === undefined ? {} : { 'idempotency-key': key }) },
    });

  async function count(sql: string, params: unknown[]): Promise<number> {
    return (await t.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${sql}) s`, params)).rows[0]!.n;
  }
  const callsOf = (member: Member) => count('SELECT 1 FROM calls WHERE organization_id = $1', [member.org.id]);
  const deliveriesOf = (member: Member) => count('SELECT 1 FROM webhook_deliveries WHERE organization_id = $1', [member.org.id]);

  /** An organization with two active subscriptions (deliveries stay pending: no worker runs in this app). */
  async function subscribed(): Promise<Connection> {
    const org = await connectPlatform(t);
    for (const path of ['/one', '/two']) await subscribeHook(t, org, { hookUrl: `https://127.0.0.1:9${path}` });
    return org;
  }

  test('POST /calls: the same key and body again answers the first status and body, and records nothing more', async () => {
    const org = await subscribed();
    const key = randomUUID();
    const body = { summary: 'Booked a boiler service', duration_seconds: 312 };
    const first = await post(t, org.member, '/calls', body, key);
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    // The same fields in another order and spacing are the same request.
    const again = await t.app.inject({
      method: 'POST',
      url: '/calls',
      headers: { 'x-user-token': org.member.token, 'idempotency-key': key, 'content-type': 'application/json' },
      payload: '{ "duration_seconds": 312,  "summary": "Booked a boiler service" }',
    });
    assert.equal(again.statusCode, 201);
    assert.equal(again.body, first.body, 'byte for byte the first answer');
    assert.equal(again.headers.location, first.headers.location);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    // The draft's quoted form (a Structured Field string) names the same key.
    const quoted = await post(t, org.member, '/calls', body, `"${key}"`);
    assert.equal(quoted.statusCode, 201);
    assert.equal(quoted.body, first.body);
    assert.equal(await callsOf(org.member), 1);
    assert.equal(await deliveriesOf(org.member), 2, 'one delivery per subscription');
  });

  test('POST /calls of an in-progress call: replayed as first answered, even after the call was completed', async () => {
    const member = await createMember(t.db.pool);
    const key = 'in-progress-1';
    const first = await post(t, member, '/calls', {}, key);
    assert.equal(first.statusCode, 201);
    assert.equal(first.json().status, 'in_progress');
    const done = await post(t, member, `/calls/${first.json().id}/complete`, { summary: 'Done', duration_seconds: 9 });
    assert.equal(done.statusCode, 200);
    const again = await post(t, member, '/calls', { agent_id: null }, key);
    assert.equal(again.statusCode, 201);
    assert.equal(again.body, first.body, 'the stored answer, not the call as it is now');
    assert.equal(await callsOf(member), 1);
  });

  test('POST /calls/{id}/complete: a retry gets the first 200 again, not CALL_ALREADY_COMPLETED; one set of deliveries', async () => {
    const org = await subscribed();
    const call = (await post(t, org.member, '/calls', {})).json();
    const body = { summary: 'Asked for a quote', duration_seconds: 95 };
    const first = await post(t, org.member, `/calls/${call.id}/complete`, body, 'complete-1');
    assert.equal(first.statusCode, 200);
    const again = await post(t, org.member, `/calls/${call.id}/complete`, body, 'complete-1');
    assert.equal(again.statusCode, 200);
    assert.equal(again.body, first.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const unkeyed = await post(t, org.member, `/calls/${call.id}/complete`, body);
    assert.equal(unkeyed.statusCode, 409, 'without the key it is a second completion');
    assert.equal(unkeyed.json().code, 'CALL_ALREADY_COMPLETED');
    assert.equal(await deliveriesOf(org.member), 2);
  });

  test('group commit: a batch holding a key already taken leaves that call out (it alone finds the key held); the others and their keys are stored', async () => {
    const member = await createMember(t.db.pool);
    const organizationId = member.org.id;
    assert.equal((await post(t, member, '/calls', { summary: 'held', duration_seconds: 1 }, 'held-key')).statusCode, 201);
    const claim = (key: string, summary: string, duration: number) => ({
      caller: `user:${member.user.id}`,
      key,
      fingerprint: fingerprint('POST /calls', [null, summary, duration]),
      status: 201,
    });
    const calls: NewCompletedCall[] = [
      { agentId: null, summary: 'first, alone', durationSeconds: 1 },
      { agentId: null, summary: 'keyed', durationSeconds: 2, idempotency: claim('new-key', 'keyed', 2) },
      { agentId: null, summary: 'held', durationSeconds: 1, idempotency: claim('held-key', 'held', 1) },
      { agentId: null, summary: 'unkeyed', durationSeconds: 3 },
    ];
    // A turn first: the held key's write loop ends, so the first of these starts a new one (and goes alone).
    await new Promise((resolve) => setImmediate(resolve));
    const results = await Promise.allSettled(calls.map((call) => writeCompletedCall(t.app.db, organizationId, call)));
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.ok(
      (results[2] as PromiseRejectedResult).reason instanceof KeyHeld,
      'the held one, left out of the batch, alone finds its key held',
    );
    const [firstBy, keyedBy, unkeyedBy] = await writingTransactions(
      t.db.pool,
      results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.id] : [])),
    );
    assert.equal(keyedBy, unkeyedBy, 'the batch of three wrote two in one transaction');
    assert.notEqual(firstBy, keyedBy, 'the first went alone');
    const keyed = (results[1] as PromiseFulfilledResult<{ id: string }>).value;
    const { rows } = await t.db.pool.query(
      "SELECT call_id, response_status, fingerprint FROM idempotency_keys WHERE organization_id = $1 AND key = 'new-key'",
      [organizationId],
    );
    assert.deepEqual(rows, [{ call_id: keyed.id, response_status: 201, fingerprint: calls[1]!.idempotency!.fingerprint }]);
    assert.equal(await callsOf(member), 4, "the held key's first call and the three written now");
  });

  test('the same key with another body, or on another endpoint, is a 422 problem naming the rule; nothing is written', async () => {
    const org = await subscribed();
    const key = randomUUID();
    const first = await post(t, org.member, '/calls', { summary: 'First', duration_seconds: 1 }, key);
    assert.equal(first.statusCode, 201);
    const inProgress = (await post(t, org.member, '/calls', {})).json();
    const refused = [
      await post(t, org.member, '/calls', { summary: 'First', duration_seconds: 2 }, key),
      await post(t, org.member, '/calls', {}, key),
      await post(t, org.member, `/calls/${inProgress.id}/complete`, { summary: 'First', duration_seconds: 1 }, key),
    ];
    for (const res of refused) {
      assert.equal(res.statusCode, 422, res.body);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      const problem = res.json();
      assert.equal(problem.type, '/problems/idempotency-key-reused');
      assert.equal(problem.code, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(problem.title, 'Unprocessable Content');
      assert.match(problem.detail, /Idempotency-Key was already used with a different request body/);
    }
    assert.equal(await callsOf(org.member), 2, 'the keyed call and the in-progress one');
    assert.equal(
      (await t.app.inject({ url: `/calls/${inProgress.id}`, headers: { 'x-user-token': org.member.token } })).json().status,
      'in_progress',
    );
    assert.equal(await deliveriesOf(org.member), 2);
  });

  /** Holds a lock the request's statement needs, so the request stays in progress until released. */
  async function holding(sql: string, params: unknown[]) {
    const client = await t.db.pool.connect();
    await client.query('BEGIN');
    await client.query(sql, params);
    return async () => {
      await client.query('COMMIT');
      client.release();
    };
  }

  /** A duplicate must be answered at once, not wait for the first. */
  function soon<T>(answer: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('not answered within 5 s while the first request was in progress')), 5_000);
    });
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  }

  async function waitUntilBlocked(pattern: string) {
    for (let i = 0; i < 400; i++) {
      const { rows } = await t.db.pool.query(
        "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1",
        [pattern],
      );
      if (rows.length) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('the first request never reached its lock');
  }

  test('a duplicate while the first is in progress is 409 with Retry-After; afterwards the first answer is replayed', async () => {
    const member = await createMember(t.db.pool);
    const body = { summary: 'Slow one', duration_seconds: 7 };
    // The call's foreign key takes a KEY SHARE lock on the organization: FOR UPDATE holds it back.
    const release = await holding('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [member.org.id]);
    const first = post(t, member, '/calls', body, 'slow-key');
    try {
      await waitUntilBlocked('%INSERT INTO%calls%');
      const duplicate = await soon(post(t, member, '/calls', body, 'slow-key'));
      assert.equal(duplicate.statusCode, 409);
      assert.equal(duplicate.headers['retry-after'], '1');
      assert.equal(duplicate.json().code, 'IDEMPOTENCY_KEY_IN_PROGRESS');
      assert.equal(duplicate.json().type, '/problems/idempotency-key-in-progress');
      const otherBody = await soon(post(t, member, '/calls', { summary: 'Other', duration_seconds: 1 }, 'slow-key'));
      assert.equal(otherBody.statusCode, 409, 'in progress whatever the body: the first may still fail and free the key');
    } finally {
      await release();
    }
    const answered = await first;
    assert.equal(answered.statusCode, 201);
    const later = await post(t, member, '/calls', body, 'slow-key');
    assert.equal(later.statusCode, 201);
    assert.equal(later.body, answered.body);
    assert.equal(await callsOf(member), 1);
  });

  test('the same for POST /calls/{id}/complete', async () => {
    const member = await createMember(t.db.pool);
    const call = (await post(t, member, '/calls', {})).json();
    const body = { summary: 'Completed slowly', duration_seconds: 3 };
    const release = await holding('SELECT 1 FROM calls WHERE id = $1 FOR UPDATE', [call.id]);
    const first = post(t, member, `/calls/${call.id}/complete`, body, 'slow-complete');
    try {
      await waitUntilBlocked('%UPDATE calls%');
      const duplicate = await soon(post(t, member, `/calls/${call.id}/complete`, body, 'slow-complete'));
      assert.equal(duplicate.statusCode, 409);
      assert.equal(duplicate.headers['retry-after'], '1');
      assert.equal(duplicate.json().code, 'IDEMPOTENCY_KEY_IN_PROGRESS');
    } finally {
      await release();
    }
    assert.equal((await first).statusCode, 200);
    assert.equal((await post(t, member, `/calls/${call.id}/complete`, body, 'slow-complete')).body, (await first).body);
  });

  test('keys belong to the organization: another organization uses the same key independently', async () => {
    const a = await createMember(t.db.pool);
    const b = await createMember(t.db.pool);
    const body = { summary: 'Same words', duration_seconds: 4 };
    const fromA = await post(t, a, '/calls', body, 'shared-key');
    const fromB = await post(t, b, '/calls', body, 'shared-key');
    assert.equal(fromA.statusCode, 201);
    assert.equal(fromB.statusCode, 201);
    assert.notEqual(fromA.json().id, fromB.json().id);
    assert.equal(fromB.json().organization_id, b.org.id);
    assert.equal(fromB.headers['idempotent-replayed'], undefined);
    // Another body under B's key is B's business only.
    assert.equal((await post(t, b, '/calls', { summary: 'Other', duration_seconds: 1 }, 'shared-key')).statusCode, 422);
    assert.equal((await post(t, a, '/calls', body, 'shared-key')).body, fromA.body);
    assert.equal(await callsOf(a), 1);
    assert.equal(await callsOf(b), 1);
  });

  /** POST with a platform connection's three headers. */
  const postAs = (connection: Connection, url: string, payload: unknown, key: string) =>
    t.app.inject({ method: 'POST', url, headers: { ...connection.headers, 'idempotency-key': key }, payload: payload as object });

  test("keys belong to their caller: a second OAuth client of the organization with the user's key and body gets a call of its own, never the user's", async () => {
    const user = await createMember(t.db.pool);
    const first = await post(t, user, '/calls', {}, 'order-1');
    assert.equal(first.statusCode, 201);
    // The review's attacker: another app of the organization, allowed only to write calls (it may not read them).
    const app = await connectPlatform(t, {
      member: await createMember(t.db.pool, { org: user.org, role: 'member' }),
      scopes: ['calls:write'],
    });
    assert.equal((await t.app.inject({ url: '/calls', headers: app.headers })).statusCode, 403, 'it may not read calls');
    const theirs = await postAs(app, '/calls', {}, 'order-1');
    assert.equal(theirs.statusCode, 201, theirs.body);
    assert.equal(theirs.headers['idempotent-replayed'], undefined, "not a replay of the user's call");
    assert.notEqual(theirs.json().id, first.json().id);
    // Another body under a key the user holds is no reuse either: nothing tells the app the key is in use.
    assert.equal((await post(t, user, '/calls', { summary: 'The real order', duration_seconds: 9 }, 'order-2')).statusCode, 201);
    const probe = await postAs(app, '/calls', { summary: 'Probe', duration_seconds: 1 }, 'order-2');
    assert.equal(probe.statusCode, 201, probe.body);
    assert.equal(probe.headers['idempotent-replayed'], undefined);
    // And a key the app takes first does not make the user's request fail.
    assert.equal((await postAs(app, '/calls', { summary: 'Squatted', duration_seconds: 1 }, 'order-3')).statusCode, 201);
    const userLater = await post(t, user, '/calls', { summary: 'The next order', duration_seconds: 4 }, 'order-3');
    assert.equal(userLater.statusCode, 201, userLater.body);
    assert.equal(userLater.json().summary, 'The next order');
    // Each caller's retry replays its own answer, as before.
    const userAgain = await post(t, user, '/calls', {}, 'order-1');
    assert.equal(userAgain.body, first.body);
    assert.equal(userAgain.headers['idempotent-replayed'], 'true');
    const appAgain = await postAs(app, '/calls', {}, 'order-1');
    assert.equal(appAgain.body, theirs.body);
    assert.equal(appAgain.headers['idempotent-replayed'], 'true');
    // The same key on completion: the app completes its own call, and the user's key for completing is the user's.
    const done = { summary: 'Done', duration_seconds: 5 };
    const appDone = await postAs(app, `/calls/${theirs.json().id}/complete`, done, 'finish');
    assert.equal(appDone.statusCode, 200);
    const userDone = await post(t, user, `/calls/${first.json().id}/complete`, done, 'finish');
    assert.equal(userDone.statusCode, 200, userDone.body);
    assert.equal(userDone.json().id, first.json().id);
    assert.equal(await callsOf(user), 6, 'order-1, order-2 and order-3 of each caller');
  });

  test('a second app of the same user is a second caller; the same connection is one caller', async () => {
    const user = await createMember(t.db.pool);
    const one = await connectPlatform(t, { member: user, scopes: ['calls:write'] });
    const two = await connectPlatform(t, { member: user, scopes: ['calls:write'] });
    const body = { summary: 'Same request', duration_seconds: 2 };
    const fromOne = await postAs(one, '/calls', body, 'k-1');
    const fromTwo = await postAs(two, '/calls', body, 'k-1');
    const fromUser = await post(t, user, '/calls', body, 'k-1');
    assert.deepEqual(
      [fromOne, fromTwo, fromUser].map((r) => [r.statusCode, r.headers['idempotent-replayed']]),
      [
        [201, undefined],
        [201, undefined],
        [201, undefined],
      ],
    );
    assert.equal(new Set([fromOne, fromTwo, fromUser].map((r) => r.json().id)).size, 3);
    assert.equal((await postAs(one, '/calls', body, 'k-1')).body, fromOne.body);
    assert.equal(await callsOf(user), 3);
  });

  test('two users of one organization with the same key and body make two calls; each replays its own', async () => {
    const first = await createMember(t.db.pool);
    const second = await createMember(t.db.pool, { org: first.org, role: 'member' });
    const body = { summary: 'Booked a visit', duration_seconds: 30 };
    const a = await post(t, first, '/calls', body, 'visit-7');
    const b = await post(t, second, '/calls', body, 'visit-7');
    assert.equal(b.statusCode, 201);
    assert.equal(b.headers['idempotent-replayed'], undefined);
    assert.notEqual(b.json().id, a.json().id);
    assert.equal((await post(t, second, '/calls', { summary: 'Other', duration_seconds: 1 }, 'visit-7')).statusCode, 422);
    assert.equal((await post(t, first, '/calls', body, 'visit-7')).body, a.body);
    assert.equal((await post(t, second, '/calls', body, 'visit-7')).body, b.body);
    assert.equal(await callsOf(first), 2);
  });

  test('a failed request does not take the key: after a 400 or 404 the key works for the corrected request', async () => {
    const member = await createMember(t.db.pool);
    const badAgent = await post(t, member, '/calls', { agent_id: randomUUID(), summary: 'x', duration_seconds: 1 }, 'fix-me');
    assert.equal(badAgent.statusCode, 400);
    assert.equal(badAgent.json().errors[0].field, 'agent_id');
    const halfBody = await post(t, member, '/calls', { summary: 'x' }, 'fix-me');
    assert.equal(halfBody.statusCode, 400);
    const missing = await post(t, member, `/calls/${randomUUID()}/complete`, { summary: 'x', duration_seconds: 1 }, 'fix-me');
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().code, 'CALL_NOT_FOUND');
    const fixed = await post(t, member, '/calls', { summary: 'x', duration_seconds: 1 }, 'fix-me');
    assert.equal(fixed.statusCode, 201);
    assert.equal(await callsOf(member), 1);
    // A completion refused as a conflict keeps nothing either.
    const call = (await post(t, member, '/calls', { summary: 'y', duration_seconds: 1 })).json();
    const conflict = await post(t, member, `/calls/${call.id}/complete`, { summary: 'z', duration_seconds: 1 }, 'conflict-key');
    assert.equal(conflict.statusCode, 409);
    assert.equal(conflict.json().code, 'CALL_ALREADY_COMPLETED');
    assert.equal(await count('SELECT 1 FROM idempotency_keys WHERE organization_id = $1', [member.org.id]), 1, 'only fix-me');
  });

  test('a malformed key is a 400 problem naming the header', async () => {
    const member = await createMember(t.db.pool);
    for (const key of ['', 'k'.repeat(256), 'caf\u00e9', '"unterminated', '"bad \\q escape"', '""']) {
      const res = await post(t, member, '/calls', {}, key);
      assert.equal(res.statusCode, 400, JSON.stringify(key));
      assert.equal(res.json().code, 'REQUEST_VALIDATION');
      assert.deepEqual(
        res.json().errors.map((e: { field: string }) => e.field),
        ['idempotency-key'],
        JSON.stringify(key),
      );
      assert.match(res.json().errors[0].message, /1 to 255 printable ASCII/);
    }
    for (const key of ['k'.repeat(255), '"a \\"quoted\\" key"', 'with inner spaces', '!']) {
      assert.equal((await post(t, member, '/calls', {}, key)).statusCode, 201, JSON.stringify(key));
    }
    assert.equal(await callsOf(member), 4);
  });

  test('a key older than 24 hours is taken by the next request; housekeeping removes expired keys hourly', async () => {
    const member = await createMember(t.db.pool);
    const body = { summary: 'Old', duration_seconds: 2 };
    const old = await post(t, member, '/calls', body, 'expiring');
    await post(t, member, '/calls', body, 'fresh');
    await t.db.pool.query(
      "UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 minute' WHERE organization_id = $1 AND key = 'expiring'",
      [member.org.id],
    );
    const reused = await post(t, member, '/calls', { summary: 'New request', duration_seconds: 5 }, 'expiring');
    assert.equal(reused.statusCode, 201, 'an expired key is no longer held');
    assert.notEqual(reused.json().id, old.json().id);
    assert.equal((await post(t, member, '/calls', { summary: 'New request', duration_seconds: 5 }, 'expiring')).body, reused.body);

    await t.db.pool.query(
      "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE organization_id = $1 AND key = 'expiring'",
      [member.org.id],
    );
    const removed = await purgeExpiredIdempotencyKeys(t.db.pool);
    assert.ok(removed >= 1);
    const { rows } = await t.db.pool.query('SELECT key FROM idempotency_keys WHERE organization_id = $1 ORDER BY key', [member.org.id]);
    assert.deepEqual(
      rows.map((r) => r.key),
      ['fresh'],
    );
    assert.equal(await callsOf(member), 3, 'the calls stay; only the keys go');

    assert.ok(
      housekeepingJobs({ pool: t.db.pool, config: t.config }).some((job) => job.name === 'idempotency-keys-cleanup'),
      'the hourly maintenance runs it',
    );
  });
});

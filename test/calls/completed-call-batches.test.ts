import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { connectPlatform, startWebhookApp, subscribeHook, type Connection } from '../helpers/webhooks.ts';
import { callCompletedEvent, storedCall, writingTransactions } from '../helpers/calls.ts';
import { createCall } from '../../src/calls/calls.service.ts';
import type { CallView } from '../../src/calls/call.ts';
import { createAgent } from '../../src/calls/agents.service.ts';
import { writeCompletedCall, type NewCompletedCall } from '../../src/calls/completed-call-batches.ts';
import { ValidationProblem } from '../../src/http/problem-details.plugin.ts';
import { createPool } from '../../src/db/pool.ts';
import { createLocation } from '../../src/locations/locations.service.ts';
import { NO_CACHES } from '../../src/cache/caches.ts';

// Group commit of POST /calls (completed): calls of one organization arriving
// while a write is on its way are committed together, and each request still
// gets the answer it would get alone.
describe('completed calls committed together', () => {
  let t: TestApp;
  let org: Connection;
  let hookId: string;

  before(async () => {
    t = await startWebhookApp();
    org = await connectPlatform(t);
    // No worker runs here: deliveries stay pending, to be counted.
    hookId = (await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/batched' })).id;
  });
  after(() => t.close());

  const organizationId = () => org.member.org.id;

  const write = (call: NewCompletedCall) => writeCompletedCall(t.app.db, organizationId(), call);

  async function deliveryBody(callId: string) {
    const { rows } = await t.db.pool.query<{ body: string }>(
      'SELECT body FROM webhook_deliveries WHERE subscription_id = $1 AND call_id = $2',
      [hookId, callId],
    );
    return rows.map((r) => r.body);
  }

  test('the first call is written at once; those arriving meanwhile share one transaction, each with its delivery', async () => {
    const calls = Array.from({ length: 10 }, (_, i) => ({ agentId: null, summary: `batched call ${i} "quoted" é`, durationSeconds: i }));
    const written = await Promise.all(calls.map(write));

    written.forEach((call, i) => {
      assert.equal(call.summary, calls[i]!.summary, 'each request gets its own call back');
      assert.equal(call.duration_seconds, i);
      assert.equal(call.status, 'completed');
      assert.equal(call.organization_id, organizationId());
    });
    assert.equal(new Set(written.map((c) => c.id)).size, 10);
    const [firstBy, ...batchBy] = await writingTransactions(
      t.db.pool,
      written.map((c) => c.id),
    );
    const batch = new Set(batchBy);
    assert.equal(batch.size, 1, 'the nine that waited share one transaction');
    assert.ok(!batch.has(firstBy), 'the first went alone');
    for (const call of written) {
      const stored = await storedCall(t.db.pool, call.id);
      assert.deepEqual(await deliveryBody(call.id), [JSON.stringify(callCompletedEvent(stored!))]);
    }
  });

  /**
   * A call naming an `field` the organization does not have, first alone (refused) and then between three neighbours
   * written together, the second of them naming `known`: the stranger gets exactly the answer it got alone, and the
   * three neighbours are stored. Returns them, in order.
   */
  async function strangerBesideNeighbours(field: 'agent_id' | 'location_id', known: string): Promise<CallView[]> {
    const stranger = randomUUID();
    const alone = await createCall(t.app.db, organizationId(), { [field]: stranger, summary: 'x', duration_seconds: 1 }).then(
      () => assert.fail(`an unknown ${field} is refused`),
      (error: unknown) => error,
    );
    assert.ok(alone instanceof ValidationProblem);

    const inputs = [
      { summary: 'first', duration_seconds: 1 },
      { [field]: known, summary: 'known', duration_seconds: 2 },
      { [field]: stranger, summary: 'stranger', duration_seconds: 3 },
      { summary: 'last', duration_seconds: 4 },
    ];
    const results = await Promise.allSettled(inputs.map((input) => createCall(t.app.db, organizationId(), input)));
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    const refused = (results[2] as PromiseRejectedResult).reason;
    assert.ok(refused instanceof ValidationProblem);
    assert.deepEqual(refused.fieldErrors, (alone as ValidationProblem).fieldErrors);
    return results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  }

  test("a call whose agent is not the organization's gets the single-call answer; its neighbours are stored", async () => {
    const agent = await createAgent(t.app.db, organizationId(), 'Ada');
    const stored = await strangerBesideNeighbours('agent_id', agent.id);
    assert.equal(stored[1]!.agent_id, agent.id);
    for (const call of stored) assert.equal((await deliveryBody(call.id)).length, 1);
  });

  test("a call whose location is not the organization's gets the single-call answer; a neighbour's location is named", async () => {
    const office = await createLocation(t.db.pool, NO_CACHES, organizationId(), { name: 'Harbour Office' } as never);
    const stored = await strangerBesideNeighbours('location_id', office.id);
    const atOffice = stored[1]!;
    assert.equal(atOffice.location_id, office.id);
    assert.equal(atOffice.location_name, 'Harbour Office');
    const [, ...batchBy] = await writingTransactions(
      t.db.pool,
      stored.map((call) => call.id),
    );
    assert.equal(new Set(batchBy).size, 1, 'the two that waited were written by one batch');
    const row = await storedCall(t.db.pool, atOffice.id);
    assert.deepEqual(await deliveryBody(atOffice.id), [JSON.stringify(callCompletedEvent(row!))]);
  });

  test('a batch the database refuses is written again one call at a time: only the bad call fails, as it would alone', async () => {
    // PostgreSQL text cannot hold NUL (the HTTP layer refuses it earlier; the writer must cope anyway).
    const bad = { agentId: null, summary: 'nul \u0000 inside', durationSeconds: 1 };
    const aloneError = await write(bad).then(
      () => assert.fail('refused'),
      (error: { code?: string }) => error,
    );
    const calls = [
      { agentId: null, summary: 'one', durationSeconds: 1 },
      { agentId: null, summary: 'two', durationSeconds: 2 },
      bad,
      { agentId: null, summary: 'three', durationSeconds: 3 },
    ];
    const results = await Promise.allSettled(calls.map(write));
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal(((results[2] as PromiseRejectedResult).reason as { code?: string }).code, aloneError.code);
    const writers = await writingTransactions(
      t.db.pool,
      results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.id] : [])),
    );
    assert.equal(new Set(writers).size, 3, 'the first alone, then the refused batch one call at a time: three transactions');
    for (const r of results) {
      if (r.status === 'fulfilled') assert.equal((await deliveryBody(r.value.id)).length, 1);
    }
  });

  test('over HTTP, concurrent POST /calls get the statuses and bodies each gets alone', async () => {
    const headers = { 'x-user-token': org.member.token };
    const strangerAgent = randomUUID();
    const badAlone = await t.app.inject({
      method: 'POST',
      url: '/calls',
      headers,
      payload: { agent_id: strangerAgent, summary: 's', duration_seconds: 1 },
    });
    assert.equal(badAlone.statusCode, 400);
    const payloads = Array.from({ length: 12 }, (_, i) =>
      i === 5 ? { agent_id: strangerAgent, summary: 's', duration_seconds: 1 } : { summary: `concurrent ${i}`, duration_seconds: i },
    );
    const answers = await Promise.all(payloads.map((payload) => t.app.inject({ method: 'POST', url: '/calls', headers, payload })));
    answers.forEach((answer, i) => {
      if (i === 5) {
        assert.equal(answer.statusCode, 400);
        assert.deepEqual(answer.json(), badAlone.json());
        return;
      }
      assert.equal(answer.statusCode, 201);
      const call = answer.json();
      assert.equal(answer.headers.location, `/calls/${call.id}`);
      assert.equal(call.summary, `concurrent ${i}`);
      assert.equal(call.status, 'completed');
    });
  });

  test('the batch statement runs on its generic plan, planned once per connection, not once per batch', async () => {
    // One connection, so that its prepared statements can be read afterwards.
    const pool = createPool(t.db.url, 1);
    try {
      for (let round = 0; round < 8; round++) {
        await Promise.all(
          Array.from({ length: 4 }, (_, i) =>
            writeCompletedCall(pool, organizationId(), { agentId: null, summary: `planned ${round}.${i}`, durationSeconds: i }),
          ),
        );
      }
      const { rows } = await pool.query<{ generic_plans: number; custom_plans: number }>(
        `SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement LIKE '%FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[]%'`,
      );
      assert.equal(rows.length, 1, 'the batch statement is prepared on the connection');
      // PostgreSQL's default makes a custom plan for at least the first five executions, and
      // for this statement forever (each custom plan costs less than the generic one).
      assert.equal(rows[0]!.custom_plans, 0, 'no batch was planned for its own values');
      assert.ok(rows[0]!.generic_plans >= 8, `every batch ran the generic plan (${rows[0]!.generic_plans})`);
    } finally {
      await pool.end();
    }
  });
});

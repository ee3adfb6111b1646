// The call.completed event has one source, app_call_event
// (migration 0041), and one description in TypeScript, CallCompletedEventSchema
// (the type CallCompletedEvent is derived from it). These tests run the SQL
// function on real rows and hold its output to the schema: the same keys in
// the same order, each value of the schema's JSON type and format. They also
// hold the webhook body the outbox stores and the /calls/recent answer to that
// one function.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CallCompletedEventSchema } from '../../src/calls/calls.schemas.ts';
import { validatorCompiler } from '../../src/http/validation.ts';
import type { TestApp } from '../helpers/app.ts';
import { withOrg } from '../../src/db/with-org.ts';
import { completeCall, connectPlatform, startWebhookApp, subscribeHook } from '../helpers/webhooks.ts';

const EVENT_OF_ROW = 'app_call_event(c)';

/** The validator the app uses for request bodies: strict types, formats checked. */
const matchesSchema = validatorCompiler({ schema: CallCompletedEventSchema, method: 'POST', url: '/', httpPart: 'body' }) as ((
  value: unknown,
) => boolean) & { errors?: unknown };

describe('the call.completed event', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  async function eventsOf(organizationId: string): Promise<{ event: string; created_at: Date }[]> {
    // In the organization's transaction, as the product runs it (app.base_url set: the call's url).
    const { rows } = await withOrg(t.db.pool, organizationId, (db) =>
      db.query<{ event: string; created_at: Date }>(
        `SELECT ${EVENT_OF_ROW} AS event, c.created_at FROM calls c
          WHERE c.organization_id = $1 AND c.status = 'completed' ORDER BY c.created_at DESC, c.id DESC`,
        [organizationId],
      ),
    );
    return rows;
  }

  test("the SQL function writes the schema's keys, in order, with the schema's JSON types", async () => {
    const org = await connectPlatform(t);
    const {
      rows: [agent],
    } = await t.db.pool.query<{ id: string }>(`INSERT INTO agents (organization_id, name) VALUES ($1, 'Ada') RETURNING id`, [
      org.member.org.id,
    ]);
    const summaries = ['plain', 'quote " backslash \\ tab \t newline \n \u0001', 'ünïcödé ☎ 😀 \u2028'];
    for (const summary of summaries) await completeCall(t, org.member, { summary, duration_seconds: 2_147_483_647 });
    await completeCall(t, org.member, { summary: 'with an agent', duration_seconds: 0, agent_id: agent!.id });
    const location = await t.app.inject({
      method: 'POST',
      url: '/locations',
      headers: { 'x-user-token': org.member.token },
      payload: { name: 'Leeds "North"' },
    });
    await completeCall(t, org.member, {
      summary: 'every detail',
      duration_seconds: 5,
      agent_id: agent!.id,
      direction: 'inbound',
      from_number: '+44 20 7946 0123',
      to_number: '+1 (415) 555-0199',
      location_id: location.json().id,
      recording_url: 'https://recordings.example/a?b=c&d="e"',
      transcript: 'Hello ☎ "quoted" \n',
      metadata: { crm_ref: 'A-1 "x"', 'spaced key': 'ü' },
    });
    // Microseconds, which the event truncates to milliseconds.
    await t.db.pool.query(`UPDATE calls SET created_at = '2026-01-02T03:04:05.678999Z' WHERE organization_id = $1 AND summary = 'plain'`, [
      org.member.org.id,
    ]);

    const rows = await eventsOf(org.member.org.id);
    assert.equal(rows.length, summaries.length + 2);
    const keys = Object.keys(CallCompletedEventSchema.properties);
    for (const { event, created_at } of rows) {
      const parsed = JSON.parse(event) as Record<string, unknown>;
      assert.deepEqual(Object.keys(parsed), keys);
      assert.ok(matchesSchema(parsed), `${event}: ${JSON.stringify(matchesSchema.errors)}`);
      // Compact JSON, escaped as JSON.stringify escapes: the bytes a receiver signs and parses.
      assert.equal(JSON.stringify(parsed), event);
      assert.equal(parsed.created_at, created_at.toISOString());
    }
    const parsed = rows.map(({ event }) => JSON.parse(event) as { summary: string; agent_id: string | null; created_at: string });
    assert.deepEqual(parsed.map((e) => e.summary).sort(), [...summaries, 'every detail', 'with an agent'].sort());
    assert.deepEqual(
      parsed.filter((e) => e.agent_id !== null).map((e) => e.agent_id),
      [agent!.id, agent!.id],
    );
    const full = JSON.parse(rows.find((r) => r.event.includes('every detail'))!.event);
    assert.deepEqual(
      { ...full, id: undefined, created_at: undefined, organization_id: undefined },
      {
        id: undefined,
        organization_id: undefined,
        created_at: undefined,
        summary: 'every detail',
        duration_seconds: 5,
        agent_id: agent!.id,
        direction: 'inbound',
        from_number: '+442079460123',
        to_number: '+14155550199',
        agent_name: 'Ada',
        location_id: location.json().id,
        location_name: 'Leeds "North"',
        recording_url: 'https://recordings.example/a?b=c&d="e"',
        transcript: 'Hello ☎ "quoted" \n',
        metadata: { crm_ref: 'A-1 "x"', 'spaced key': 'ü' },
        url: `${t.config.baseUrl}/ui/calls/${full.id}`,
      },
    );
    assert.ok(parsed.some((e) => e.created_at === '2026-01-02T03:04:05.678Z'));
  });

  test('the outbox stores the event as the webhook body, and /calls/recent lists the same events', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/event-shape' });
    const calls = [
      await completeCall(t, org.member, { summary: 'first', duration_seconds: 1 }),
      await completeCall(t, org.member, { summary: 'second "quoted"', duration_seconds: 2 }),
    ];
    // Completing an in-progress call is the outbox's other statement.
    const created = await t.app.inject({ method: 'POST', url: '/calls', headers: { 'x-user-token': org.member.token }, payload: {} });
    const completed = await t.app.inject({
      method: 'POST',
      url: `/calls/${created.json().id}/complete`,
      headers: { 'x-user-token': org.member.token },
      payload: { summary: 'third', duration_seconds: 3 },
    });
    assert.equal(completed.statusCode, 200);

    const { rows: bodies } = await withOrg(t.db.pool, org.member.org.id, (db) =>
      db.query<{ body: string; event: string }>(
        `SELECT d.body, ${EVENT_OF_ROW} AS event FROM webhook_deliveries d JOIN calls c ON c.id = d.call_id WHERE d.subscription_id = $1`,
        [hook.id],
      ),
    );
    assert.equal(bodies.length, calls.length + 1);
    for (const { body, event } of bodies) assert.equal(body, event);

    const recent = await t.app.inject({ url: '/calls/recent', headers: org.headers });
    assert.equal(recent.statusCode, 200);
    assert.equal(recent.body, `[${(await eventsOf(org.member.org.id)).map((r) => r.event).join(',')}]`);
  });
});

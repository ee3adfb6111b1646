// Filters on a call.completed subscription (docs/interface.md §4.2): a call
// reaches only the subscriptions whose filters all match, decided in the
// outbox statement; /calls/recent with the same filters lists the same calls
// in the same shape; filters belong to one (organization, client, URL).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CallCompletedEventSchema } from '../../src/calls/calls.schemas.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';
import { signedInAgent } from '../helpers/web.ts';
import { connectPlatform, deliveriesOf, startDeliveryRig, type Connection, type DeliveryRig } from '../helpers/webhooks.ts';

describe('subscription filters', () => {
  let rig: DeliveryRig;
  before(async () => {
    rig = await startDeliveryRig({ listen: true });
  });
  after(() => rig.close());

  async function subscribe(org: Connection, hookUrl: string, filters?: object) {
    const res = await rig.t.app.inject({
      method: 'POST',
      url: '/webhooks/subscribe',
      headers: org.headers,
      payload: { hookUrl, ...(filters === undefined ? {} : { filters }) },
    });
    return res;
  }

  async function setUp() {
    const org = await connectPlatform(rig.t);
    const headers = { 'x-user-token': org.member.token };
    const agent = await rig.t.db.pool.query<{ id: string }>(`INSERT INTO agents (organization_id, name) VALUES ($1, 'Ada') RETURNING id`, [
      org.member.org.id,
    ]);
    const location = await rig.t.app.inject({ method: 'POST', url: '/locations', headers, payload: { name: 'Leeds' } });
    return { org, headers, agentId: agent.rows[0]!.id, locationId: location.json().id as string };
  }

  test('a call with every field set reaches only the matching subscriptions, with the full body; /calls/recent agrees', async () => {
    const { org, headers, agentId, locationId } = await setUp();
    const url = (name: string) => `${rig.target.url}/${name}`;
    const filtersByHook: Record<string, object> = {
      none: {},
      inbound: { direction: 'inbound' },
      outbound: { direction: 'outbound' },
      leeds: { location_id: locationId },
      ada: { agent_id: agentId },
      long: { min_duration_seconds: 60 },
      short: { min_duration_seconds: 30 },
      all: { direction: 'inbound', location_id: locationId, agent_id: agentId, min_duration_seconds: 30 },
    };
    const ids: Record<string, string> = {};
    for (const [name, filters] of Object.entries(filtersByHook)) {
      const res = await subscribe(org, url(name), name === 'none' ? undefined : filters);
      assert.equal(res.statusCode, 201);
      assert.deepEqual(res.json().filters, filters);
      ids[name] = res.json().id;
    }
    const full = {
      summary: 'Booked',
      duration_seconds: 45,
      agent_id: agentId,
      location_id: locationId,
      direction: 'inbound',
      from_number: '+44 20 7946 0123',
      to_number: '+14155550199',
      recording_url: 'https://rec.example/1',
      transcript: 'hello',
      metadata: { ref: 'R1' },
    };
    const call = (await rig.t.app.inject({ method: 'POST', url: '/calls', headers, payload: full })).json();
    // A second call matching only the unfiltered hook and "outbound".
    await rig.t.app.inject({
      method: 'POST',
      url: '/calls',
      headers,
      payload: { summary: 'x', duration_seconds: 1, direction: 'outbound' },
    });

    const matched = ['none', 'inbound', 'leeds', 'ada', 'short', 'all'];
    const requests = await rig.target.waitForRequests(matched.length + 2);
    await new Promise((r) => setTimeout(r, 300));
    // A slow answer on a loaded machine may be retried: each hook is counted once.
    const got = new Set(rig.target.requests.filter((r) => JSON.parse(r.body).id === call.id).map((r) => r.url.slice(1)));
    assert.deepEqual([...got].sort(), [...matched].sort());
    for (const name of ['outbound', 'long']) {
      assert.deepEqual(
        (await deliveriesOf(rig.t, ids[name]!)).filter((d) => d.call_id === call.id),
        [],
        `${name}: no delivery written`,
      );
    }
    const body = JSON.parse(requests.find((r) => JSON.parse(r.body).id === call.id)!.body);
    assert.deepEqual(Object.keys(body), Object.keys(CallCompletedEventSchema.properties));
    assert.equal(body.from_number, '+442079460123');
    assert.equal(body.agent_name, 'Ada');
    assert.equal(body.location_name, 'Leeds');
    assert.deepEqual(body.metadata, { ref: 'R1' });

    // performList: the same filters as query parameters give the same calls, in the same shape.
    for (const [name, filters] of Object.entries(filtersByHook)) {
      const query = new URLSearchParams(Object.entries(filters).map(([k, v]) => [k, String(v)]));
      const recent = await rig.t.app.inject({ url: `/calls/recent?${query}`, headers: org.headers });
      assert.equal(recent.statusCode, 200);
      const delivered = (await deliveriesOf(rig.t, ids[name]!)).map((d) => d.call_id).sort();
      assert.deepEqual(
        recent
          .json()
          .map((c: { id: string }) => c.id)
          .sort(),
        delivered,
        name,
      );
      const sent = rig.target.requests.find((r) => r.url === `/${name}` && JSON.parse(r.body).id === call.id);
      if (sent)
        assert.deepEqual(
          recent.json().find((c: { id: string }) => c.id === call.id),
          JSON.parse(sent.body),
        );
    }
  });

  test("the subscription's page shows its filters; one without shows every call", async () => {
    const { org } = await setUp();
    const filtered = (await subscribe(org, `${rig.target.url}/page-a`, { direction: 'inbound', min_duration_seconds: 30 })).json();
    const plain = (await subscribe(org, `${rig.target.url}/page-b`)).json();
    const agent = await signedInAgent(rig.t.url, org.member.email);
    assert.match((await agent.get(`/ui/webhooks/${filtered.id}`)).body, /<dt>Filters<\/dt><dd>inbound calls only; at least 30 s<\/dd>/);
    assert.match((await agent.get(`/ui/webhooks/${plain.id}`)).body, /<dt>Filters<\/dt><dd>Every call<\/dd>/);
  });

  test('a call without a direction never matches a direction filter', async () => {
    const { org, headers } = await setUp();
    const hook = (await subscribe(org, `${rig.target.url}/dir-only`, { direction: 'inbound' })).json();
    await rig.t.app.inject({ method: 'POST', url: '/calls', headers, payload: { summary: 'no way', duration_seconds: 1 } });
    assert.deepEqual(await deliveriesOf(rig.t, hook.id), []);
    assert.deepEqual((await rig.t.app.inject({ url: '/calls/recent?direction=inbound', headers: org.headers })).json(), []);
  });

  test('subscribing again: with filters replaces, without keeps, {} clears; another client keeps its own', async () => {
    const { org, locationId } = await setUp();
    const hookUrl = `${rig.target.url}/again`;
    await subscribe(org, hookUrl, { direction: 'inbound' });
    assert.deepEqual((await subscribe(org, hookUrl, { location_id: locationId })).json().filters, { location_id: locationId });
    assert.deepEqual((await subscribe(org, hookUrl)).json().filters, { location_id: locationId });
    const other = await createClient(rig.t.db.pool, { name: 'Other' });
    const tokens = await issueTokens(rig.t.db.pool, { client: other, userId: org.member.user.id, organizationId: org.member.org.id });
    const otherHeaders = platformHeaders(tokens, other);
    const theirs = await rig.t.app.inject({
      method: 'POST',
      url: '/webhooks/subscribe',
      headers: otherHeaders,
      payload: { hookUrl, filters: { direction: 'outbound' } },
    });
    assert.deepEqual(theirs.json().filters, { direction: 'outbound' });
    assert.deepEqual((await subscribe(org, hookUrl, {})).json().filters, {});
    const listed = await rig.t.app.inject({ url: '/webhooks', headers: otherHeaders });
    assert.deepEqual(
      listed.json().map((s: { filters: object }) => s.filters),
      [{ direction: 'outbound' }],
    );
  });

  test('an unknown filter key, or a location or agent of another organization, is a 400 naming it', async () => {
    const { org } = await setUp();
    const stranger = await setUp();
    for (const [filters, field] of [
      [{ colour: 'red' }, 'filters.colour'],
      [{ direction: 'up' }, 'filters.direction'],
      [{ min_duration_seconds: -1 }, 'filters.min_duration_seconds'],
      [{ location_id: stranger.locationId }, 'filters.location_id'],
      [{ agent_id: stranger.agentId }, 'filters.agent_id'],
      [{ agent_id: randomUUID() }, 'filters.agent_id'],
    ] as const) {
      const res = await subscribe(org, `${rig.target.url}/bad`, filters);
      assert.equal(res.statusCode, 400, JSON.stringify(filters));
      assert.equal(res.json().errors[0].field, field);
    }
    const { rows } = await rig.t.db.pool.query('SELECT 1 FROM webhook_subscriptions WHERE organization_id = $1', [org.member.org.id]);
    assert.equal(rows.length, 0);
  });

  test('a filter on a location deleted later matches nothing', async () => {
    const { org, headers, locationId } = await setUp();
    const hook = (await subscribe(org, `${rig.target.url}/gone`, { location_id: locationId })).json();
    await rig.t.app.inject({ method: 'DELETE', url: `/locations/${locationId}`, headers });
    await rig.t.app.inject({ method: 'POST', url: '/calls', headers, payload: { summary: 's', duration_seconds: 1 } });
    assert.deepEqual(await deliveriesOf(rig.t, hook.id), []);
  });
});

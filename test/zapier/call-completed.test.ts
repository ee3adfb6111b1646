// @own-test-process: zapier-platform-core's tester replaces http.request and https.request for the whole process
// (create-http-patch.js), with a version that drops a third argument (url, options, callback).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { insertAgent } from '../../src/calls/agents.queries.ts';
import { withOrg } from '../../src/db/with-org.ts';
import type { TestApp } from '../helpers/app.ts';
import { createMember, PASSWORD, type Member } from '../helpers/fixtures.ts';
import type { HttpsTarget } from '../helpers/https-target.ts';
import { createClient, platformHeaders, type TestClient } from '../helpers/oauth.ts';
import { completeCall, startDeliveryRig, type DeliveryRig } from '../helpers/webhooks.ts';
import { App, connectAccount, invoke, useSwitchboard, ZAPIER_REDIRECT_URI } from '../helpers/zapier.ts';

const trigger = App.triggers.call_completed.operation;
const SAMPLE_FIELDS = Object.keys(trigger.sample).sort();

type AuthData = { access_token: string; refresh_token: string };
type Subscription = { id: string; event: string; callback_url: string };

// The Call Completed trigger through zapier-platform-core against a real
// Switchboard (real PostgreSQL, delivery worker) and a real HTTPS target
// standing in for hooks.zapier.com.
describe('Zapier Call Completed trigger against Switchboard', () => {
  let t: TestApp;
  let client: TestClient;
  let target: HttpsTarget;
  let rig: DeliveryRig;

  before(async () => {
    rig = await startDeliveryRig({ listen: true });
    ({ t, target } = rig);
    client = await createClient(t.db.pool, { name: 'Zapier', redirectUris: [ZAPIER_REDIRECT_URI] });
    useSwitchboard(t.url, client);
  });
  after(() => rig.close());

  /** An organization with an agent, connected to the Zapier app through the real OAuth flow. */
  async function connectedOrganization(): Promise<{ member: Member; authData: AuthData; agentId: string }> {
    const member = await createMember(t.db.pool);
    const agent = await withOrg(t.db.pool, member.org.id, (db) => insertAgent(db, 'Front desk'));
    const authData = await connectAccount(t.url, { email: member.email, password: PASSWORD });
    return { member, authData, agentId: agent.id };
  }

  function hookUrl(): string {
    return `${target.url}/hooks/standard/${randomBytes(4).toString('hex')}/${randomBytes(8).toString('hex')}/`;
  }

  async function subscriptionsOf(authData: AuthData): Promise<Subscription[]> {
    const res = await fetch(`${t.url}/webhooks`, { headers: platformHeaders(authData, client) });
    assert.equal(res.status, 200);
    return (await res.json()) as Subscription[];
  }

  test('performList is empty for an organization without completed calls', async () => {
    const { authData } = await connectedOrganization();
    assert.deepEqual(await invoke(trigger.performList, { authData }), []);
  });

  test('performList returns the recent completed calls, newest first, in the shape of the sample and of a delivery', async () => {
    const { member, authData, agentId } = await connectedOrganization();
    const first = await completeCall(t, member, { summary: 'Quote for a new boiler', duration_seconds: 95, agent_id: agentId });
    const second = await completeCall(t, member, { summary: 'Rescheduled to Friday', duration_seconds: 40, agent_id: agentId });
    const other = await connectedOrganization();
    await completeCall(t, other.member, { summary: 'Another organization', duration_seconds: 5 });

    const calls = await invoke<Record<string, unknown>[]>(trigger.performList, { authData });
    assert.deepEqual(
      calls.map((c) => c.id),
      [second.id, first.id],
    );
    for (const call of calls) assert.deepEqual(Object.keys(call).sort(), SAMPLE_FIELDS);
    assert.deepEqual(calls[1], {
      id: first.id,
      organization_id: member.org.id,
      created_at: first.created_at,
      summary: 'Quote for a new boiler',
      duration_seconds: 95,
      agent_id: agentId,
      direction: null,
      from_number: null,
      to_number: null,
      agent_name: 'Front desk',
      location_id: null,
      location_name: null,
      recording_url: null,
      transcript: null,
      metadata: {},
      url: `${t.url}/ui/calls/${first.id}`,
    });
  });

  test('subscribe, a completed call is delivered to the target URL, perform turns it into the Zap input, unsubscribe', async () => {
    const { member, authData, agentId } = await connectedOrganization();
    const targetUrl = hookUrl();

    const subscribeData = await invoke<Subscription>(trigger.performSubscribe, { authData, targetUrl });
    assert.deepEqual(Object.keys(subscribeData).sort(), ['callback_url', 'event', 'filters', 'id']);
    assert.equal(subscribeData.event, 'call.completed');
    assert.equal(subscribeData.callback_url, targetUrl);
    assert.deepEqual(
      (await subscriptionsOf(authData)).map((s) => s.id),
      [subscribeData.id],
    );

    const before = target.requests.length;
    const call = await completeCall(t, member, { summary: 'Booked a visit for Tuesday', duration_seconds: 73, agent_id: agentId });
    const [delivery] = (await target.waitForRequests(before + 1)).slice(before);
    assert.equal(delivery!.method, 'POST');
    assert.equal(delivery!.url, new URL(targetUrl).pathname);
    assert.equal(delivery!.headers['x-event'], 'call.completed');
    assert.match(String(delivery!.headers['content-type']), /^application\/json/);
    const body = JSON.parse(delivery!.body) as Record<string, unknown>;
    const expected = {
      id: call.id,
      organization_id: member.org.id,
      created_at: call.created_at,
      summary: 'Booked a visit for Tuesday',
      duration_seconds: 73,
      agent_id: agentId,
      direction: null,
      from_number: null,
      to_number: null,
      agent_name: 'Front desk',
      location_id: null,
      location_name: null,
      recording_url: null,
      transcript: null,
      metadata: {},
      url: `${t.url}/ui/calls/${call.id}`,
    };
    assert.deepEqual(body, expected);

    // The platform parses the delivery and runs perform with it.
    const results = await invoke<Record<string, unknown>[]>(trigger.perform, { authData, subscribeData, cleanedRequest: body });
    assert.deepEqual(results, [expected]);
    // A live event has the fields the sample promises.
    assert.deepEqual(Object.keys(results[0]!).sort(), SAMPLE_FIELDS);

    const removed = await invoke(trigger.performUnsubscribe, { authData, subscribeData, targetUrl });
    assert.deepEqual(removed, { success: true });
    assert.deepEqual(await subscriptionsOf(authData), []);
    // Completing a call now writes no delivery for that URL (deliveries are written in the completing transaction).
    const later = await completeCall(t, member, { summary: 'After unsubscribing', duration_seconds: 3 });
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE call_id = $1', [later.id]);
    assert.equal(rows[0].n, 0);
  });

  test('perform accepts the wrapped form of a parsed request ({content: call})', async () => {
    const call = {
      id: 'c1',
      organization_id: 'o1',
      created_at: '2026-01-01T00:00:00.000Z',
      summary: 's',
      duration_seconds: 1,
      agent_id: null,
    };
    assert.deepEqual(await invoke(trigger.perform, { cleanedRequest: { method: 'POST', headers: {}, querystring: {}, content: call } }), [
      call,
    ]);
  });

  test('performUnsubscribe falls back to bundle.targetUrl when subscribeData has no callback_url', async () => {
    const { authData } = await connectedOrganization();
    const targetUrl = hookUrl();
    await invoke(trigger.performSubscribe, { authData, targetUrl });
    assert.deepEqual(await invoke(trigger.performUnsubscribe, { authData, subscribeData: {}, targetUrl }), { success: true });
    assert.deepEqual(await subscriptionsOf(authData), []);
  });

  test('subscribing the same URL twice keeps one subscription', async () => {
    const { authData } = await connectedOrganization();
    const targetUrl = hookUrl();
    const a = await invoke<Subscription>(trigger.performSubscribe, { authData, targetUrl });
    const b = await invoke<Subscription>(trigger.performSubscribe, { authData, targetUrl });
    assert.equal(b.id, a.id);
    assert.equal((await subscriptionsOf(authData)).length, 1);
  });

  test('a target URL Switchboard refuses is a readable error naming hookUrl', async () => {
    const { authData } = await connectedOrganization();
    await assert.rejects(invoke(trigger.performSubscribe, { authData, targetUrl: 'http://hooks.example.com/plain-http' }), (err: Error) => {
      const detail = JSON.parse(err.message) as { message: string; status: number };
      assert.equal(detail.status, 400);
      assert.match(detail.message, /hookUrl/);
      return true;
    });
  });

  test('a refused access token on a trigger request asks the platform to refresh', async () => {
    const { authData } = await connectedOrganization();
    await fetch(`${t.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: authData.access_token, client_id: client.client_id, client_secret: client.client_secret }),
    });
    await assert.rejects(invoke(trigger.performList, { authData }), (err: Error) => err.name === 'RefreshAuthError');
    // After the refresh the platform retries with the new token.
    const refreshed = await invoke<AuthData>(App.authentication.oauth2Config.refreshAccessToken, { authData });
    assert.deepEqual(await invoke(trigger.performList, { authData: refreshed }), []);
  });
});

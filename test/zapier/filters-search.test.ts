// @own-test-process: zapier-platform-core's tester replaces http.request and https.request for the whole process
// (create-http-patch.js), with a version that drops a third argument (url, options, callback).
// The Zapier app's filters, dropdowns and Find Call search, through
// zapier-platform-core against a real Switchboard: subscribe sends the
// trigger's fields as filters, performList sends them to /calls/recent, the
// hidden triggers list locations and agents, and the search finds a call by
// number (or answers [] for "not found").
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { insertAgent } from '../../src/calls/agents.queries.ts';
import { withOrg } from '../../src/db/with-org.ts';
import type { TestApp } from '../helpers/app.ts';
import { createMember, PASSWORD } from '../helpers/fixtures.ts';
import { createClient, type TestClient } from '../helpers/oauth.ts';
import { completeCall, deliveriesOf, startDeliveryRig, type DeliveryRig } from '../helpers/webhooks.ts';
import { App, connectAccount, invoke, useSwitchboard, ZAPIER_REDIRECT_URI } from '../helpers/zapier.ts';

const app = App as unknown as {
  triggers: Record<
    string,
    { operation: Record<string, (...a: never[]) => unknown> & { inputFields?: { key: string; dynamic?: string }[] } }
  >;
  searches: Record<string, { operation: { perform: (...a: never[]) => unknown } }>;
};
const trigger = app.triggers.call_completed!.operation;

describe('Zapier filters, dropdowns and Find Call against Switchboard', () => {
  let t: TestApp;
  let rig: DeliveryRig;
  let client: TestClient;
  before(async () => {
    rig = await startDeliveryRig({ listen: true });
    t = rig.t;
    client = await createClient(t.db.pool, {
      name: 'Zapier',
      redirectUris: [ZAPIER_REDIRECT_URI],
      scopes: ['calls:read', 'locations:read'],
    });
    useSwitchboard(t.url, client);
  });
  after(() => rig.close());

  async function connected() {
    const member = await createMember(t.db.pool);
    const agent = await withOrg(t.db.pool, member.org.id, (db) => insertAgent(db, 'Front desk'));
    const location = await t.app.inject({
      method: 'POST',
      url: '/locations',
      headers: { 'x-user-token': member.token },
      payload: { name: 'Leeds' },
    });
    const authData = await connectAccount(t.url, { email: member.email, password: PASSWORD });
    return { member, authData, agentId: agent.id, locationId: location.json().id as string };
  }

  test('the trigger asks for a location and an agent by dropdown, never a bare id', () => {
    const dynamic = Object.fromEntries((trigger.inputFields ?? []).map((f) => [f.key, f.dynamic]));
    assert.deepEqual(dynamic, {
      direction: undefined,
      location_id: 'location_list.id.name',
      agent_id: 'agent_list.id.name',
      min_duration_seconds: undefined,
    });
  });

  test('both dropdowns list the organization by name', async () => {
    const { authData, agentId, locationId } = await connected();
    assert.deepEqual(await invoke(app.triggers.location_list!.operation.perform as never, { authData }), [
      { id: locationId, name: 'Leeds' },
    ]);
    assert.deepEqual(await invoke(app.triggers.agent_list!.operation.perform as never, { authData }), [
      { id: agentId, name: 'Front desk' },
    ]);
  });

  test('subscribe sends the fields as filters; performList sends them to /calls/recent and gets what the hook gets', async () => {
    const { member, authData, locationId } = await connected();
    const inputData = { direction: 'inbound', location_id: locationId, agent_id: '', min_duration_seconds: '30' };
    const targetUrl = `${rig.target.url}/hooks/${randomBytes(6).toString('hex')}/`;
    const subscribeData = await invoke<{ id: string; filters: object }>(trigger.performSubscribe as never, {
      authData,
      targetUrl,
      inputData,
    });
    assert.deepEqual(subscribeData.filters, { direction: 'inbound', location_id: locationId, min_duration_seconds: 30 });

    const hit = await completeCall(t, member, { direction: 'inbound', location_id: locationId, duration_seconds: 31 });
    await completeCall(t, member, { direction: 'inbound', location_id: locationId, duration_seconds: 5 });
    await completeCall(t, member, { direction: 'outbound', location_id: locationId, duration_seconds: 60 });
    const listed = await invoke<{ id: string }[]>(trigger.performList as never, { authData, inputData });
    assert.deepEqual(
      listed.map((c) => c.id),
      [hit.id],
    );
    assert.deepEqual(
      (await deliveriesOf(t, subscribeData.id)).map((d) => d.call_id),
      [hit.id],
    );
  });

  test('Find Call finds the newest call by a number in any spelling; nothing found is []', async () => {
    const { member, authData, agentId } = await connected();
    const older = await completeCall(t, member, { from_number: '+442079460123', agent_id: agentId });
    const newer = await completeCall(t, member, { to_number: '+44 20 7946 0123' });
    const search = app.searches.find_call!.operation.perform as never;
    const found = await invoke<{ id: string; to_number: string }[]>(search, { authData, inputData: { number: '+44-20-7946-0123' } });
    assert.deepEqual(
      found.map((c) => c.id),
      [newer.id, older.id],
    );
    const byAgent = await invoke<{ id: string }[]>(search, { authData, inputData: { number: '+442079460123', agent_id: agentId } });
    assert.deepEqual(
      byAgent.map((c) => c.id),
      [older.id],
    );
    assert.deepEqual(await invoke(search, { authData, inputData: { number: '+14155550199' } }), []);
  });
});

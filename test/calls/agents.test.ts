// Agents over HTTP (docs/interface.md §12): GET /agents for a user or a
// platform with calls:read (the Zapier app's agent dropdown); POST and PATCH
// for owners and admins only; a rename changes no call that already completed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { connectPlatform } from '../helpers/webhooks.ts';

describe('agents', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const send = (token: string, method: 'POST' | 'PATCH' | 'GET', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: { 'x-user-token': token }, ...(payload ? { payload } : {}) });

  test('an owner creates and renames; everyone reads the list by name, a platform with calls:read too', async () => {
    const org = await connectPlatform(t);
    const owner = org.member.token;
    const created = await send(owner, 'POST', '/agents', { name: '  Zoe  ' });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(Object.keys(created.json()).sort(), ['id', 'name']);
    assert.equal(created.json().name, 'Zoe');
    await send(owner, 'POST', '/agents', { name: 'Ada' });
    const call = await send(owner, 'POST', '/calls', { agent_id: created.json().id, summary: 's', duration_seconds: 1 });

    const renamed = await send(owner, 'PATCH', `/agents/${created.json().id}`, { name: 'Zoe B' });
    assert.equal(renamed.statusCode, 200);
    assert.equal(renamed.json().name, 'Zoe B');
    assert.equal((await send(owner, 'GET', `/calls/${call.json().id}`)).json().agent_name, 'Zoe', 'the call keeps its name');

    const platform = await t.app.inject({ url: '/agents', headers: org.headers });
    assert.equal(platform.statusCode, 200);
    assert.deepEqual(
      platform.json().map((a: { name: string }) => a.name),
      ['Ada', 'Zoe B'],
    );
    assert.deepEqual((await send(owner, 'GET', '/agents')).json(), platform.json());
  });

  test('a member may read but not write: 403 AGENTS_FORBIDDEN_ROLE; an admin may', async () => {
    const owner = await createMember(t.db.pool);
    const member = await createMember(t.db.pool, { org: owner.org, role: 'member' });
    const admin = await createMember(t.db.pool, { org: owner.org, role: 'admin' });
    const agent = (await send(owner.token, 'POST', '/agents', { name: 'Kept' })).json();
    for (const res of [
      await send(member.token, 'POST', '/agents', { name: 'No' }),
      await send(member.token, 'PATCH', `/agents/${agent.id}`, { name: 'No' }),
    ]) {
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().code, 'AGENTS_FORBIDDEN_ROLE');
    }
    assert.equal((await send(member.token, 'GET', '/agents')).json().length, 1);
    assert.equal((await send(admin.token, 'PATCH', `/agents/${agent.id}`, { name: 'Yes' })).statusCode, 200);
  });

  test('bad names are 400 naming name; an unknown or foreign agent is 404; a platform cannot write', async () => {
    const org = await connectPlatform(t, { scopes: ['calls:read', 'calls:write'] });
    const owner = org.member.token;
    for (const body of [{ name: '' }, { name: '   ' }, { name: 'x'.repeat(201) }, { name: 3 }, {}]) {
      const res = await send(owner, 'POST', '/agents', body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal(res.json().errors[0].field, 'name');
    }
    const stranger = await createMember(t.db.pool);
    const theirs = (await send(stranger.token, 'POST', '/agents', { name: 'Theirs' })).json();
    for (const id of [randomUUID(), theirs.id]) {
      const res = await send(owner, 'PATCH', `/agents/${id}`, { name: 'Mine now' });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().code, 'AGENT_NOT_FOUND');
    }
    const platformWrite = await t.app.inject({ method: 'POST', url: '/agents', headers: org.headers, payload: { name: 'Bot' } });
    assert.equal(platformWrite.statusCode, 401);
  });
});

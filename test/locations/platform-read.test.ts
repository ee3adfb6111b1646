// GET /locations for an OAuth client (the Zapier app's location dropdown):
// the three platform headers with locations:read read the token's
// organization's list; another scope is 403; writes keep needing a user; the
// consent page names the new scopes in words.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, PASSWORD } from '../helpers/fixtures.ts';
import { authorizationPath, createClient, issueTokens, platformHeaders, type TestClient } from '../helpers/oauth.ts';
import { asUser } from '../helpers/token-client.ts';
import { hiddenInputs, UserAgent } from '../helpers/user-agent.ts';

describe('locations: read by an OAuth client with locations:read', () => {
  let t: TestApp;
  let client: TestClient;
  before(async () => {
    t = await startTestApp({ listen: true });
    client = await createClient(t.db.pool, {
      name: 'Dropdown Platform',
      redirectUris: ['https://platform.example/cb'],
      scopes: ['calls:read', 'locations:read', 'locations:write'],
    });
  });
  after(() => t.close());

  async function connected(scopes: string[]) {
    const member = await createMember(t.db.pool);
    const tokens = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id, scopes });
    return { member, headers: platformHeaders(tokens, client) };
  }

  test("the three headers with locations:read list the token's organization's locations, as a user sees them", async () => {
    const { member, headers } = await connected(['calls:read', 'locations:read']);
    const user = asUser(t.app, member.token);
    await user.post('/locations', { name: 'Leeds', is_primary: true });
    await user.post('/locations', { name: 'Bristol' });
    const other = await createMember(t.db.pool);
    await asUser(t.app, other.token).post('/locations', { name: 'Not yours' });

    const res = await t.app.inject({ url: '/locations', headers });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      res.json().map((l: { name: string }) => l.name),
      ['Leeds', 'Bristol'],
    );
    assert.deepEqual(res.json(), (await user.get('/locations')).json());
  });

  test('a token without locations:read is 403 insufficient_scope; a wrong client secret is 401', async () => {
    const { headers } = await connected(['calls:read']);
    const res = await t.app.inject({ url: '/locations', headers });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'OAUTH_INSUFFICIENT_SCOPE');
    assert.match(String(res.headers['www-authenticate']), /scope="locations:read"/);

    const granted = await connected(['locations:read']);
    const wrong = await t.app.inject({ url: '/locations', headers: { ...granted.headers, 'x-client-secret': 'sbs_wrong' } });
    assert.equal(wrong.statusCode, 401);
  });

  test('writes keep needing a user: the platform headers, even with locations:write, cannot create a location', async () => {
    const { member, headers } = await connected(['locations:read', 'locations:write']);
    const res = await t.app.inject({ method: 'POST', url: '/locations', headers, payload: { name: 'Sneaky' } });
    assert.equal(res.statusCode, 401);
    const { rows } = await t.db.pool.query('SELECT 1 FROM locations WHERE organization_id = $1', [member.org.id]);
    assert.equal(rows.length, 0);
  });

  test('the consent page describes locations:read and locations:write in words', async () => {
    const member = await createMember(t.db.pool);
    const agent = new UserAgent(t.url);
    const login = await agent.get('/login');
    await agent.post('/login', { ...hiddenInputs(login.body, '/login'), email: member.email, password: PASSWORD });
    const consent = await agent.get(
      authorizationPath({ response_type: 'code', client_id: client.client_id, state: 's', scope: 'locations:read locations:write' }),
    );
    assert.equal(consent.status, 200);
    assert.match(consent.body, /See your organization’s locations <code>locations:read<\/code>/);
    assert.match(consent.body, /Create and change your organization’s locations <code>locations:write<\/code>/);
  });
});

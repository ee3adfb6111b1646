// The signed-in pages at the HTTP level: sign-in required, CSRF on every form
// post, another organization's ids answered with the 404 page, escaping.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { resolveSession } from '../../src/auth/sessions.service.ts';
import { createLocation } from '../../src/locations/locations.service.ts';
import { createServiceArea } from '../../src/service-areas/service-areas.service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, createOrg, PASSWORD, type Member } from '../helpers/fixtures.ts';
import { hiddenInputs, UserAgent } from '../helpers/user-agent.ts';
import { csrfToken, fieldError, signedInAgent } from '../helpers/web.ts';
import { NO_CACHES } from '../../src/cache/caches.ts';

describe('web pages: access, CSRF and organization boundaries', () => {
  let t: TestApp;
  let mine: Member;
  let theirs: Member;
  before(async () => {
    t = await startTestApp({ listen: true });
    mine = await createMember(t.db.pool);
    theirs = await createMember(t.db.pool);
  });
  after(() => t.close());

  async function snapshot() {
    const locations = await t.db.pool.query('SELECT * FROM locations ORDER BY id');
    const areas = await t.db.pool.query('SELECT * FROM service_areas ORDER BY id');
    return { locations: locations.rows, areas: areas.rows };
  }

  test('the home page sends a visitor to sign in, and shows a signed-in user the dashboard; /ui leads home', async () => {
    const visitor = await new UserAgent(t.url).get('/');
    assert.equal(visitor.status, 302);
    assert.equal(visitor.location, '/login');
    const agent = await signedInAgent(t.url, mine.email);
    const home = await agent.get('/');
    assert.equal(home.status, 200);
    assert.match(home.body, /Calls per day/);
    const ui = await agent.get('/ui');
    assert.equal(ui.status, 302);
    assert.equal(ui.location, '/');
  });

  test('signing in again in the same browser ends the session it replaces', async () => {
    const agent = await signedInAgent(t.url, mine.email);
    const first = agent.cookies.get('sb_session')!;
    assert.ok(await resolveSession(t.db.pool, NO_CACHES, first));
    const again = await agent.post('/login', { csrf: await csrfToken(agent), email: mine.email, password: PASSWORD });
    assert.equal(again.status, 303);
    const second = agent.cookies.get('sb_session')!;
    assert.notEqual(second, first);
    assert.equal(await resolveSession(t.db.pool, NO_CACHES, first), undefined, 'the replaced session no longer works');
    assert.ok(await resolveSession(t.db.pool, NO_CACHES, second));
  });

  test('the login page shares the sign-in throttle: ten failures block the email, then even the right password waits', async () => {
    const member = await createMember(t.db.pool);
    const agent = new UserAgent(t.url);
    const form = async (password: string) => {
      const page = await agent.get('/login');
      return agent.post('/login', { ...hiddenInputs(page.body, '/login'), email: member.email, password });
    };
    for (let i = 0; i < 10; i++) assert.equal((await form('wrong')).status, 401);
    const blocked = await form(PASSWORD);
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    assert.match(blocked.body, /Too many sign-in attempts/);
  });

  test('signing in from a page returns to that page', async () => {
    const agent = new UserAgent(t.url);
    const page = await agent.get('/ui/service-areas/new');
    assert.equal(page.status, 302);
    assert.equal(page.location, '/login?return_to=%2Fui%2Fservice-areas%2Fnew');
    const login = await agent.get(page.location!);
    const csrf = /name="csrf" value="([^"]+)"/.exec(login.body)![1]!;
    const res = await agent.post('/login', {
      csrf,
      return_to: '/ui/service-areas/new',
      email: mine.email,
      password: 'correct horse battery staple',
    });
    assert.equal(res.location, '/ui/service-areas/new');
  });

  test('not signed in: every page redirects to the login page, every form post changes nothing', async () => {
    const location = await createLocation(t.db.pool, NO_CACHES, mine.org.id, { name: 'Guarded' });
    const area = await createServiceArea(t.db.pool, mine.org.id, { label: 'Guarded area' });
    const agent = new UserAgent(t.url);
    for (const path of [
      '/ui/locations',
      '/ui/locations/new',
      `/ui/locations/${location.id}/edit`,
      `/ui/locations/${location.id}/delete`,
      '/ui/service-areas',
      '/ui/service-areas/new',
      `/ui/service-areas/${area.id}/edit`,
      `/ui/service-areas/${area.id}/delete`,
      '/connected-apps',
    ]) {
      const res = await agent.get(path);
      assert.equal(res.status, 302, path);
      assert.equal(res.location, `/login?${new URLSearchParams({ return_to: path })}`, path);
    }
    const before = await snapshot();
    for (const path of [
      '/ui/locations',
      `/ui/locations/${location.id}`,
      `/ui/locations/${location.id}/primary`,
      `/ui/locations/${location.id}/delete`,
      '/ui/service-areas',
      `/ui/service-areas/${area.id}`,
      `/ui/service-areas/${area.id}/delete`,
      '/ui/organization',
    ]) {
      const res = await agent.post(path, { name: 'Sneaky', label: 'Sneaky' });
      assert.equal(res.status, 303, path);
      assert.match(res.location ?? '', /^\/login\?return_to=/, path);
    }
    assert.deepEqual(await snapshot(), before);
  });

  test("a form post without this browser's CSRF token is refused and changes nothing", async () => {
    const location = await createLocation(t.db.pool, NO_CACHES, mine.org.id, { name: 'Protected' });
    const area = await createServiceArea(t.db.pool, mine.org.id, { label: 'Protected area' });
    const agent = await signedInAgent(t.url, mine.email);
    const otherBrowser = await signedInAgent(t.url, mine.email);
    const foreignToken = await csrfToken(otherBrowser);
    const second = await createOrg(t.db.pool);
    const before = await snapshot();
    const posts: [string, Record<string, string>][] = [
      ['/ui/locations', { name: 'Forged' }],
      [`/ui/locations/${location.id}`, { name: 'Forged' }],
      [`/ui/locations/${location.id}/primary`, {}],
      [`/ui/locations/${location.id}/delete`, {}],
      ['/ui/service-areas', { label: 'Forged' }],
      [`/ui/service-areas/${area.id}`, { label: 'Forged' }],
      [`/ui/service-areas/${area.id}/delete`, {}],
      ['/ui/organization', { organization_id: second.id }],
    ];
    for (const [path, form] of posts) {
      for (const csrf of [undefined, foreignToken, 'x'.repeat(43)]) {
        const res = await agent.post(path, csrf === undefined ? form : { ...form, csrf });
        assert.equal(res.status, 403, `${path} with ${csrf ? 'a wrong' : 'no'} token`);
        assert.match(res.body, /Form expired/);
      }
    }
    assert.deepEqual(await snapshot(), before);
  });

  test("another organization's location or service area is the 404 page, and stays untouched", async () => {
    const location = await createLocation(t.db.pool, NO_CACHES, theirs.org.id, { name: 'Their secret depot', is_primary: false });
    const area = await createServiceArea(t.db.pool, theirs.org.id, { label: 'Their secret area' });
    const agent = await signedInAgent(t.url, mine.email);
    const csrf = await csrfToken(agent);
    const before = await snapshot();
    const requests: ['GET' | 'POST', string][] = [
      ['GET', `/ui/locations/${location.id}/edit`],
      ['GET', `/ui/locations/${location.id}/delete`],
      ['POST', `/ui/locations/${location.id}`],
      ['POST', `/ui/locations/${location.id}/primary`],
      ['POST', `/ui/locations/${location.id}/delete`],
      ['GET', `/ui/service-areas/${area.id}/edit`],
      ['GET', `/ui/service-areas/${area.id}/delete`],
      ['POST', `/ui/service-areas/${area.id}`],
      ['POST', `/ui/service-areas/${area.id}/delete`],
    ];
    for (const [method, path] of requests) {
      const res = await agent.request(method, path, method === 'POST' ? { csrf, name: 'Taken over', label: 'Taken over' } : undefined);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(res.body, /<h1>Not found<\/h1>/);
      assert.doesNotMatch(res.body, /secret/);
      assert.match(res.body, /nav class="sections"/, 'the navigation stays');
    }
    assert.deepEqual(await snapshot(), before);
    const list = await agent.get('/ui/locations');
    assert.doesNotMatch(list.body, /Their secret/);
  });

  test('an unknown or malformed id is the 404 page', async () => {
    const agent = await signedInAgent(t.url, mine.email);
    for (const path of [`/ui/locations/${randomUUID()}/edit`, '/ui/locations/not-a-uuid/edit', '/ui/service-areas/1/delete']) {
      const res = await agent.get(path);
      assert.equal(res.status, 404, path);
      assert.match(res.body, /<h1>Not found<\/h1>/);
    }
  });

  test("a service area cannot be linked to another organization's location", async () => {
    const foreign = await createLocation(t.db.pool, NO_CACHES, theirs.org.id, { name: 'Foreign' });
    const mineArea = await createServiceArea(t.db.pool, mine.org.id, { label: 'Mine' });
    const agent = await signedInAgent(t.url, mine.email);
    const csrf = await csrfToken(agent);
    const before = await snapshot();
    const created = await agent.post('/ui/service-areas', { csrf, label: 'Linked', location_id: foreign.id });
    assert.equal(created.status, 400);
    assert.equal(fieldError(created.body, 'location_id'), 'The location is not a location of this organization.');
    const updated = await agent.post(`/ui/service-areas/${mineArea.id}`, { csrf, label: 'Mine', location_id: foreign.id });
    assert.equal(updated.status, 400);
    assert.equal(fieldError(updated.body, 'location_id'), 'The location is not a location of this organization.');
    assert.deepEqual(await snapshot(), before);
  });

  test('switching to an organization the user is not a member of is refused; the session keeps its organization', async () => {
    const agent = await signedInAgent(t.url, mine.email);
    const csrf = await csrfToken(agent);
    const res = await agent.post('/ui/organization', { csrf, organization_id: theirs.org.id, return_to: '/ui/locations' });
    assert.equal(res.status, 403);
    const session = await resolveSession(t.db.pool, NO_CACHES, agent.cookies.get('sb_session')!);
    assert.equal(session?.organization_id, mine.org.id);
  });

  test('the switcher only returns to paths on this site', async () => {
    const member = await createMember(t.db.pool);
    const agent = await signedInAgent(t.url, member.email);
    const csrf = await csrfToken(agent);
    const res = await agent.post('/ui/organization', { csrf, organization_id: member.org.id, return_to: '//evil.example/' });
    assert.equal(res.status, 303);
    assert.equal(res.location, '/', 'the home page instead');
  });

  test('names are escaped on every page, and pages carry no script', async () => {
    const member = await createMember(t.db.pool);
    const name = '<script>alert(1)</script>"\'&';
    const location = await createLocation(t.db.pool, NO_CACHES, member.org.id, { name, city: '<img src=x onerror=alert(2)>' });
    await createServiceArea(t.db.pool, member.org.id, { label: name, location_id: location.id });
    const agent = await signedInAgent(t.url, member.email);
    for (const path of [
      '/ui/locations',
      `/ui/locations/${location.id}/edit`,
      `/ui/locations/${location.id}/delete`,
      '/ui/service-areas',
      '/ui/service-areas/new',
    ]) {
      const res = await agent.get(path);
      assert.equal(res.status, 200, path);
      assert.doesNotMatch(res.body, /<script|<img/i, path);
      assert.match(res.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;&#39;&amp;/, path);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
    }
  });
});

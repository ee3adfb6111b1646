import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, SCREENSHOT_DIR, SKIP_WITHOUT_BROWSER } from '../helpers/browser.ts';
import { createUser } from '../../src/organizations/organizations.service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, createOrg, PASSWORD } from '../helpers/fixtures.ts';
import { authorizationPath, createClient, pkcePair, type TestClient } from '../helpers/oauth.ts';

// The login and consent pages in a real browser, without JavaScript on our
// side: the platform's callback is a real server on another origin.
describe('login and consent pages in headless Chromium', { skip: SKIP_WITHOUT_BROWSER }, () => {
  let t: TestApp;
  let browser: Browser;
  let platform: http.Server;
  let platformUrl: string;
  let client: TestClient;

  before(async () => {
    platform = http.createServer((request, response) => {
      if (request.url?.startsWith('/framer')) {
        const target = new URL(request.url, 'http://x').searchParams.get('target')!;
        response.setHeader('content-type', 'text/html');
        response.end(`<!doctype html><title>framer</title><iframe id="victim" src="${target}"></iframe>`);
        return;
      }
      response.setHeader('content-type', 'text/plain');
      response.end('callback received');
    });
    await new Promise<void>((resolve) => platform.listen(0, '127.0.0.1', resolve));
    platformUrl = `http://127.0.0.1:${(platform.address() as AddressInfo).port}`;
    t = await startTestApp({ listen: true });
    client = await createClient(t.db.pool, {
      name: 'Acme Automations',
      redirectUris: [`${platformUrl}/callback`],
      scopes: ['calls:read', 'contacts:read'],
    });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    platform?.closeAllConnections();
    await new Promise<void>((resolve) => platform.close(() => resolve()));
  });

  test('sign in, pick an organization, Allow: the platform receives code, state and iss', async () => {
    const member = await createMember(t.db.pool);
    const second = await createOrg(t.db.pool, 'Beta Plumbing');
    await createUser(t.db.pool, { email: member.email, password: PASSWORD, organizationId: second.id, role: 'member' });
    const { challenge } = pkcePair();
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();

    await page.goto(
      t.url +
        authorizationPath({
          response_type: 'code',
          client_id: client.client_id,
          redirect_uri: `${platformUrl}/callback`,
          scope: 'calls:read contacts:read',
          state: 'browser-state',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        }),
    );
    assert.equal(await page.locator('h1').textContent(), 'Sign in to Switchboard');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'switchboard-login.png'), fullPage: true });
    await page.fill('#email', member.email);
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');

    await page.waitForURL(/\/oauth\/authorize\?/);
    assert.match((await page.locator('h1').textContent()) ?? '', /Acme Automations wants to connect/);
    const scopes = await page.locator('ul.scopes li').allTextContents();
    assert.equal(scopes.length, 2);
    assert.match(scopes[0]!, /calls and their summaries/);
    await page.selectOption('#organization_id', second.id);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'switchboard-consent.png'), fullPage: true });

    await page.click('button[value=allow]');
    await page.waitForURL(/\/callback\?/);
    const callback = new URL(page.url());
    assert.match(callback.searchParams.get('code') ?? '', /^sbc_/);
    assert.equal(callback.searchParams.get('state'), 'browser-state');
    assert.equal(callback.searchParams.get('iss'), t.url);
    const { rows } = await t.db.pool.query('SELECT organization_id FROM oauth_grants WHERE user_id = $1', [member.user.id]);
    assert.deepEqual(
      rows.map((r) => r.organization_id),
      [second.id],
    );

    const cookie = (await context.cookies(t.url)).find((c) => c.name === 'sb_session')!;
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    await context.close();
  });

  test('Deny sends the user back with access_denied', async () => {
    const member = await createMember(t.db.pool);
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(t.url + authorizationPath({ response_type: 'code', client_id: client.client_id, state: 'no-thanks' }));
    await page.fill('#email', member.email);
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/oauth\/authorize\?/);
    assert.equal(await page.locator('select#organization_id').count(), 0, 'one organization: no picker');
    assert.equal(await page.locator('input[type=hidden][name=organization_id]').count(), 1);
    await page.click('button[value=deny]');
    await page.waitForURL(/\/callback\?/);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    assert.equal(callback.searchParams.get('state'), 'no-thanks');
    assert.equal(callback.searchParams.get('iss'), t.url);
    await context.close();
  });

  test('an unknown client shows an error page in the browser, with no redirect', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(
      t.url + authorizationPath({ response_type: 'code', client_id: 'unknown', redirect_uri: `${platformUrl}/callback` }),
    );
    assert.equal(response?.status(), 400);
    assert.ok(page.url().startsWith(t.url));
    assert.match((await page.locator('.error').textContent()) ?? '', /registered client/);
    await context.close();
  });

  test('another site cannot frame the consent page', async () => {
    const member = await createMember(t.db.pool);
    const context = await browser.newContext();
    const page = await context.newPage();
    const authorizeUrl = t.url + authorizationPath({ response_type: 'code', client_id: client.client_id, state: 'framed' });
    await page.goto(authorizeUrl);
    await page.fill('#email', member.email);
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/oauth\/authorize\?/);
    assert.equal(await page.locator('button[value=allow]').count(), 1, 'signed in, the page itself renders');

    const blocked = new Promise<boolean>((resolve) => {
      page.on('console', (message) => {
        if (/frame-ancestors|Refused to frame|X-Frame-Options/i.test(message.text())) resolve(true);
      });
      setTimeout(() => resolve(false), 10_000).unref();
    });
    await page.goto(`${platformUrl}/framer?${new URLSearchParams({ target: authorizeUrl })}`);
    assert.equal(await blocked, true, 'Chromium reports the frame as refused');
    // The frame is there, and holds Chromium's error page instead of the consent page.
    const frame = await (await page.locator('iframe#victim').elementHandle())?.contentFrame();
    assert.ok(frame, 'the framing page has its frame');
    assert.ok(!frame.url().startsWith(t.url), `the frame shows ${frame.url()}, not the consent page`);
    assert.equal(await frame.locator('button[value=allow]').count(), 0, 'no consent button inside the frame');
    await context.close();
  });
});

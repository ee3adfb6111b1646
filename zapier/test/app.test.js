'use strict';

// `zapier-platform test` (or `npm test` in this folder) against a live Switchboard.
// Configuration comes from the environment or a .env file beside package.json:
//   BASE_URL, CLIENT_ID, CLIENT_SECRET         the instance and the app's OAuth client
//   ACCESS_TOKEN                                the access token of a connected account (optional)
//   HOOK_URL                                    an https URL to subscribe and unsubscribe (optional)
// Checks that need a value that is not set are skipped, never passed.
const assert = require('node:assert/strict');
const { describe, test } = require('node:test');

// As under `zapier-platform test`: the SDK's output checks (arrays, ids) throw instead of logging.
process.env.NODE_ENV = process.env.NODE_ENV || 'test';
const zapier = require('zapier-platform-core');

zapier.tools.env.inject();

const App = require('../index');
const appTester = zapier.createAppTester(App);
const env = process.env;
const connected = env.BASE_URL && env.CLIENT_ID && env.CLIENT_SECRET && env.ACCESS_TOKEN;
const authData = { access_token: env.ACCESS_TOKEN };

describe('Switchboard Zapier app', () => {
  test('the definition passes the platform schema', async () => {
    const output = await zapier.createAppHandler(App)({ command: 'validate', calledFromCli: true });
    assert.deepEqual(output.results, []);
  });

  test('the authorize URL points at BASE_URL', { skip: !env.BASE_URL && 'BASE_URL is not set' }, async () => {
    const url = new URL(
      await appTester(App.authentication.oauth2Config.authorizeUrl, { inputData: { state: 's', redirect_uri: 'https://zapier.com/x' } }),
    );
    assert.equal(`${url.origin}${url.pathname}`, `${env.BASE_URL.replace(/\/+$/, '')}/oauth/authorize`);
    assert.equal(url.searchParams.get('client_id'), env.CLIENT_ID || '');
  });

  test('the connection test answers with the account email', {
    skip: !connected && 'needs BASE_URL, CLIENT_ID, CLIENT_SECRET, ACCESS_TOKEN',
  }, async () => {
    const result = await appTester(App.authentication.test, { authData });
    assert.match(result.json.email, /@/);
  });

  test('performList returns recent calls with the sample fields', {
    skip: !connected && 'needs BASE_URL, CLIENT_ID, CLIENT_SECRET, ACCESS_TOKEN',
  }, async () => {
    const calls = await appTester(App.triggers.call_completed.operation.performList, { authData });
    assert.ok(Array.isArray(calls));
    const fields = Object.keys(App.triggers.call_completed.operation.sample).sort();
    for (const call of calls) assert.deepEqual(Object.keys(call).sort(), fields);
  });

  test('subscribe and unsubscribe HOOK_URL', {
    skip: !(connected && env.HOOK_URL) && 'needs the connection variables and HOOK_URL',
  }, async () => {
    const op = App.triggers.call_completed.operation;
    const subscribeData = await appTester(op.performSubscribe, { authData, targetUrl: env.HOOK_URL });
    assert.equal(subscribeData.callback_url, env.HOOK_URL);
    assert.deepEqual(await appTester(op.performUnsubscribe, { authData, subscribeData }), { success: true });
  });
});

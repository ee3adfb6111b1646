// @own-test-process: zapier-platform-core's tester replaces http.request and https.request for the whole process
// (create-http-patch.js), with a version that drops a third argument (url, options, callback).
import { CallCompletedEventSchema } from '../../src/calls/calls.schemas.ts';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { App, invoke, useSwitchboard, validateApp, zapier, zapierPackage } from '../helpers/zapier.ts';

const rootPackage = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  devDependencies: Record<string, string>;
};

describe('Zapier app definition', () => {
  test('passes the platform schema validation (the check `zapier validate` runs)', async () => {
    assert.deepEqual(await validateApp(), []);
  });

  test('the validation does catch a broken definition, so the check above can fail', async () => {
    const broken = { ...App, triggers: { call_completed: { ...App.triggers.call_completed, display: { label: 'Call Completed' } } } };
    const errors = (await validateApp(broken)) as { property: string }[];
    assert.ok(
      errors.some((e) => e.property === 'instance.triggers.call_completed.display'),
      JSON.stringify(errors),
    );
  });

  test('declares its own version and the version of the installed platform core', () => {
    assert.equal(App.version, zapierPackage.version);
    assert.equal(App.platformVersion, zapier.version);
    assert.equal(zapierPackage.main, 'index.js');
    // The package the app is published with and the one the tests run are the same release.
    assert.equal(zapierPackage.dependencies['zapier-platform-core'], zapier.version);
    assert.equal(rootPackage.devDependencies['zapier-platform-core'], zapier.version);
  });

  test('authenticates with OAuth 2.0, refreshing automatically, PKCE on, labelled by the userinfo email', () => {
    const auth = App.authentication;
    assert.equal(auth.type, 'oauth2');
    assert.equal(auth.oauth2Config.autoRefresh, true);
    assert.equal(auth.oauth2Config.enablePkce, true);
    assert.equal(typeof auth.oauth2Config.getAccessToken, 'function');
    assert.equal(typeof auth.oauth2Config.refreshAccessToken, 'function');
    assert.equal(typeof auth.test, 'function');
    assert.equal(auth.connectionLabel, '{{json.email}}');
  });

  test('renders the authorize URL from BASE_URL and CLIENT_ID with state, redirect_uri, code and calls:read locations:read', async () => {
    useSwitchboard('https://switchboard.example.com', { client_id: 'sbc_client', client_secret: 'sbs_secret' });
    const url = await invoke<string>(App.authentication.oauth2Config.authorizeUrl, {
      inputData: { state: 'st-4444', redirect_uri: 'https://zapier.com/dashboard/auth/oauth/return/App1CLIAPI/' },
    });
    assert.equal(
      url,
      'https://switchboard.example.com/oauth/authorize?client_id=sbc_client&state=st-4444&redirect_uri=https%3A%2F%2Fzapier.com%2Fdashboard%2Fauth%2Foauth%2Freturn%2FApp1CLIAPI%2F&response_type=code&scope=calls%3Aread%20locations%3Aread',
    );
  });

  test('has one instant trigger, call_completed, whose sample and output fields are the delivery body', () => {
    assert.deepEqual(Object.keys(App.triggers), ['call_completed', 'location_list', 'agent_list']);
    const trigger = App.triggers.call_completed;
    assert.equal(trigger.key, 'call_completed');
    const op = trigger.operation;
    assert.equal(op.type, 'hook');
    for (const name of ['perform', 'performList', 'performSubscribe', 'performUnsubscribe'] as const)
      assert.equal(typeof op[name], 'function', name);
    const fields = Object.keys(CallCompletedEventSchema.properties);
    assert.deepEqual(Object.keys(op.sample), fields);
    assert.deepEqual(
      op.outputFields.map((f) => f.key),
      fields,
    );
    for (const field of op.outputFields as { key: string; label?: string }[]) assert.ok(field.label, `${field.key} has a label`);
    assert.equal(Number.isInteger(op.sample.duration_seconds), true);
    assert.equal(new Date(op.sample.created_at).toISOString(), op.sample.created_at);
  });

  test('perform hands the delivered call to the Zap unchanged', async () => {
    const call = {
      id: '5b0f6d1e-2c3a-4b5c-8d9e-0f1a2b3c4d5e',
      organization_id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
      created_at: '2026-02-01T10:00:00.000Z',
      summary: 'Booked a visit.',
      duration_seconds: 61,
      agent_id: '9f8e7d6c-5b4a-4392-8817-263544536271',
    };
    assert.deepEqual(await invoke(App.triggers.call_completed.operation.perform, { cleanedRequest: call }), [call]);
  });

  test('BASE_URL missing is a clear error, not a request to nowhere', async () => {
    const saved = process.env.BASE_URL;
    delete process.env.BASE_URL;
    try {
      await assert.rejects(
        invoke(App.triggers.call_completed.operation.performList, { authData: { access_token: 'x' } }),
        /BASE_URL is not set/,
      );
    } finally {
      if (saved !== undefined) process.env.BASE_URL = saved;
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Problem } from '../../src/http/problem-details.plugin.ts';
import type { TestApp } from '../helpers/app.ts';
import { connectPlatform, startWebhookApp, type Connection } from '../helpers/webhooks.ts';

describe('subscribe and unsubscribe refuse bad input with 400 naming the field', () => {
  let t: TestApp;
  let publicOnly: TestApp;
  let org: Connection;
  let strictOrg: Connection;
  before(async () => {
    t = await startWebhookApp();
    // Production setting: private targets forbidden. The resolver answers for names, so only literals are used here.
    publicOnly = await startWebhookApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    org = await connectPlatform(t);
    strictOrg = await connectPlatform(publicOnly);
  });
  after(async () => {
    await t.close();
    await publicOnly.close();
  });

  function assertFieldProblem(res: { statusCode: number; headers: Record<string, unknown>; json(): Problem }, field: string) {
    assert.equal(res.statusCode, 400, JSON.stringify(res.json()));
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.ok(
      res.json().errors?.some((e) => e.field === field),
      JSON.stringify(res.json()),
    );
  }

  const hookUrlCases: [string, unknown][] = [
    ['plain http', 'http://127.0.0.1/hook'],
    ['not a URL', 'not a url'],
    ['a relative path', '/hooks/1'],
    ['user-info', 'https://user:pass@127.0.0.1/hook'],
    ['another scheme', 'ftp://127.0.0.1/hook'],
    ['too long', `https://127.0.0.1/${'a'.repeat(2048)}`],
    ['empty', ''],
    ['a number', 42],
  ];
  for (const [name, hookUrl] of hookUrlCases) {
    test(`hookUrl: ${name}`, async () => {
      const res = await t.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers: org.headers, payload: { hookUrl } });
      assertFieldProblem(res, 'hookUrl');
    });
  }

  const privateTargets = [
    'https://127.0.0.1/hook',
    'https://10.0.0.5/hook',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://2130706433/hook',
    'https://0x7f.1/hook',
    'https://0177.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://192.168.1.1/hook',
    'https://localhost/hook',
    'https://[fe80::1]/hook',
    'https://224.0.0.1/hook',
  ];
  for (const hookUrl of privateTargets) {
    test(`with private targets forbidden, ${hookUrl} is refused`, async () => {
      const res = await publicOnly.app.inject({
        method: 'POST',
        url: '/webhooks/subscribe',
        headers: strictOrg.headers,
        payload: { hookUrl },
      });
      assertFieldProblem(res, 'hookUrl');
    });
  }

  test('missing hookUrl', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/webhooks/subscribe',
      headers: org.headers,
      payload: { event: 'call.completed' },
    });
    assertFieldProblem(res, 'hookUrl');
  });

  for (const event of ['call.started', 'CALL.COMPLETED', '', 7]) {
    test(`event ${JSON.stringify(event)} is refused`, async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/webhooks/subscribe',
        headers: org.headers,
        payload: { hookUrl: 'https://127.0.0.1/x', event },
      });
      assertFieldProblem(res, 'event');
    });
  }

  for (const [name, secret] of [
    ['empty', ''],
    ['257 characters', 'a'.repeat(257)],
    ['a newline', 'abc\ndef'],
    ['non-ASCII', 'sécret'],
    ['a leading space', ' abc'],
    ['a trailing space', 'abc '],
    ['a control character', 'ab\u0007c'],
    ['a number', 12345],
  ] as [string, unknown][]) {
    test(`secret with ${name} is refused`, async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/webhooks/subscribe',
        headers: org.headers,
        payload: { hookUrl: 'https://127.0.0.1/x', secret },
      });
      assertFieldProblem(res, 'secret');
    });
  }

  test('a 256-character secret with inner spaces is accepted', async () => {
    const secret = `a${' ~'.repeat(127)}z`;
    assert.equal(secret.length, 256);
    const res = await t.app.inject({
      method: 'POST',
      url: '/webhooks/subscribe',
      headers: org.headers,
      payload: { hookUrl: 'https://127.0.0.1/long', secret },
    });
    assert.equal(res.statusCode, 201);
  });

  test('unknown fields are refused', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/webhooks/subscribe',
      headers: org.headers,
      payload: { hookUrl: 'https://127.0.0.1/x', target: 'y' },
    });
    assertFieldProblem(res, 'target');
  });

  test('unsubscribe refuses a malformed hookUrl and a missing one', async () => {
    for (const payload of [{ hookUrl: 'http://127.0.0.1/x' }, { hookUrl: 'nope' }, {}]) {
      const res = await t.app.inject({ method: 'DELETE', url: '/webhooks/subscribe', headers: org.headers, payload });
      assertFieldProblem(res, 'hookUrl');
    }
  });

  test('unsubscribe checks only the form: a URL whose host is private can still be removed', async () => {
    const res = await publicOnly.app.inject({
      method: 'DELETE',
      url: '/webhooks/subscribe',
      headers: strictOrg.headers,
      payload: { hookUrl: 'https://10.0.0.1/x' },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { success: true });
  });

  test('malformed ids are 400, unknown ones 404', async () => {
    const headers = { 'x-user-token': org.member.token };
    assertFieldProblem(await t.app.inject({ url: '/webhooks/not-a-uuid/deliveries', headers }), 'id');
    const missing = await t.app.inject({
      method: 'POST',
      url: '/webhooks/deliveries/00000000-0000-4000-8000-000000000000/redeliver',
      headers,
    });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().code, 'WEBHOOK_DELIVERY_NOT_FOUND');
    const enable = await t.app.inject({ method: 'POST', url: '/webhooks/00000000-0000-4000-8000-000000000000/enable', headers });
    assert.equal(enable.statusCode, 404);
    assertFieldProblem(await t.app.inject({ url: '/webhooks/00000000-0000-4000-8000-000000000000/deliveries?limit=0', headers }), 'limit');
  });
});

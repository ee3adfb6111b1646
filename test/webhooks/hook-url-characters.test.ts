// Issue 37, item 1: new URL() drops CR, LF and TAB, so a hookUrl that parsed
// could carry lines into the owners' alert e-mails. A hookUrl with a control
// character, a space or a non-ASCII character is a 400 naming the field, and
// what is stored is exactly the string checked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { connectPlatform, startWebhookApp, type Connection } from '../helpers/webhooks.ts';

const INJECTED =
  'https://hooks.example.com/fail/x\r\n\r\nIMPORTANT - Switchboard security notice: confirm your identity at https://evil.example/login\r\n\r\n';

describe('hookUrl characters', () => {
  let t: TestApp;
  let strict: TestApp;
  let org: Connection;
  let strictOrg: Connection;
  before(async () => {
    t = await startWebhookApp();
    strict = await startWebhookApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_ALLOWED_PORTS: '' });
    org = await connectPlatform(t);
    strictOrg = await connectPlatform(strict);
  });
  after(async () => {
    await t.close();
    await strict.close();
  });

  const subscribe = (app: TestApp, c: Connection, hookUrl: string) =>
    app.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers: c.headers, payload: { hookUrl } });

  const refused: [string, RegExp][] = [
    [INJECTED, /^must not contain a control character \(U\+000D at position 33\); percent-encode it$/],
    ['https://hooks.example.com/a\nb', /a control character \(U\+000A/],
    ['https://hooks.example.com/a\tb', /a control character \(U\+0009/],
    ['\thttps://hooks.example.com/a', /a control character \(U\+0009 at position 1\)/],
    ['https://hooks.example.com/a\u0000b', /U\+0000/],
    ['https://hooks.example.com/a\u007fb', /a control character \(U\+007F/],
    ['https://hooks.example.com/a b', /a space \(U\+0020/],
    ['https://hooks.example.com/a ', /a space \(U\+0020/],
    ['https://höoks.example.com/a', /a non-ASCII character \(U\+00F6/],
    ['https://hooks.example.com/a\u2028b', /a non-ASCII character \(U\+2028/],
    ['https://hooks.example.com/a\u0085b', /a non-ASCII character \(U\+0085/],
  ];
  for (const [hookUrl, message] of refused) {
    test(`${JSON.stringify(hookUrl).slice(0, 60)} is a 400 naming hookUrl, and nothing is stored`, async () => {
      const res = await subscribe(t, org, hookUrl);
      assert.equal(res.statusCode, 400);
      const problem = res.json();
      assert.equal(problem.code, 'REQUEST_VALIDATION');
      assert.equal(problem.errors.length, 1);
      assert.equal(problem.errors[0].field, 'hookUrl');
      assert.match(problem.errors[0].message, message);
      const list = await t.app.inject({ method: 'GET', url: '/webhooks', headers: org.headers });
      assert.deepEqual(
        list.json().filter((s: { callback_url: string }) => s.callback_url.startsWith('https://h')),
        [],
      );
    });
  }

  test('the same URL percent-encoded is accepted and stored exactly as given', async () => {
    const hookUrl = 'https://hooks.example.com/fail/x%0D%0A%20IMPORTANT?q=%C3%B6';
    const res = await subscribe(t, org, hookUrl);
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().callback_url, hookUrl);
    const { rows } = await t.db.pool.query('SELECT callback_url FROM webhook_subscriptions WHERE id = $1', [res.json().id]);
    assert.equal(rows[0].callback_url, hookUrl);
  });

  test('https://localhost without WEBHOOK_ALLOW_PRIVATE_TARGETS names the variable that allows it in development', async () => {
    for (const hookUrl of ['https://localhost/hook', 'https://127.0.0.1/hook']) {
      const res = await subscribe(strict, strictOrg, hookUrl);
      assert.equal(res.statusCode, 400);
      const [error] = res.json().errors;
      assert.equal(error.field, 'hookUrl');
      assert.match(error.message, /WEBHOOK_ALLOW_PRIVATE_TARGETS=true/);
    }
  });
});

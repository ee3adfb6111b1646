import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import {
  attemptsOf,
  completeCall,
  connectPlatform,
  deliveriesOf,
  startTestWorker,
  startWebhookApp,
  subscribeHook,
  waitFor,
  type Connection,
} from '../helpers/webhooks.ts';

// Without a port rule a hook URL could name any port, and the delivery log
// (status, error, the answer's first 4 KiB) would probe ports of public hosts.
describe('hook URL ports are limited to WEBHOOK_ALLOWED_PORTS', () => {
  let strict: TestApp;
  let loopback: TestApp;
  let strictOrg: Connection;
  let loopbackOrg: Connection;
  before(async () => {
    // Production defaults: public targets only, ports 443 and 8443.
    strict = await startWebhookApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_ALLOWED_PORTS: '' });
    // Private targets allowed does not lift the port rule.
    loopback = await startWebhookApp({ WEBHOOK_ALLOWED_PORTS: '443,8443' });
    strictOrg = await connectPlatform(strict);
    loopbackOrg = await connectPlatform(loopback);
  });
  after(async () => {
    await strict.close();
    await loopback.close();
  });

  const subscribe = (t: TestApp, org: Connection, hookUrl: string) =>
    t.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers: org.headers, payload: { hookUrl } });

  for (const hookUrl of [
    'https://93.184.215.14:22/probe',
    'https://93.184.215.14:6379/',
    'https://[2606:4700::1]:8080/x',
    'https://93.184.215.14:80/',
  ]) {
    test(`${hookUrl} is refused with 400 WEBHOOK_PORT_NOT_ALLOWED naming hookUrl and the rule`, async () => {
      const res = await subscribe(strict, strictOrg, hookUrl);
      assert.equal(res.statusCode, 400);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      const problem = res.json();
      assert.equal(problem.code, 'WEBHOOK_PORT_NOT_ALLOWED');
      assert.equal(problem.errors.length, 1);
      assert.equal(problem.errors[0].field, 'hookUrl');
      assert.match(
        problem.errors[0].message,
        /^port \d+ is not allowed: webhook targets may use port 443, 8443 \(WEBHOOK_ALLOWED_PORTS\)$/,
      );
    });
  }

  test('with private targets allowed the port rule still holds; 443 (explicit or implied) and 8443 pass', async () => {
    const refused = await subscribe(loopback, loopbackOrg, 'https://127.0.0.1:5432/');
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().code, 'WEBHOOK_PORT_NOT_ALLOWED');
    for (const hookUrl of ['https://127.0.0.1/a', 'https://127.0.0.1:443/b', 'https://127.0.0.1:8443/c']) {
      assert.equal((await subscribe(loopback, loopbackOrg, hookUrl)).statusCode, 201, hookUrl);
    }
  });

  test('a stored subscription whose port is no longer allowed fails its attempts with blocked_port, and nothing is sent', async () => {
    let target: HttpsTarget | undefined;
    const open = await startWebhookApp({ WEBHOOK_ALLOWED_PORTS: '*' });
    try {
      target = await startHttpsTarget();
      const org = await connectPlatform(open);
      const hook = await subscribeHook(open, org, { hookUrl: `${target.url}/hook` });
      // The operator narrows the list after the subscription was made.
      const worker = await startTestWorker(open, { config: { ...open.config, webhookAllowedPorts: [443] } });
      try {
        await completeCall(open, org.member);
        const [delivery] = await waitFor('the delivery to fail', async () => {
          const rows = await deliveriesOf(open, hook.id);
          return rows.length === 1 && rows[0]!.status === 'failed' ? rows : undefined;
        });
        const attempts = await attemptsOf(open, delivery!.id);
        assert.equal(attempts.length, 3, 'the first attempt and the two scheduled retries');
        assert.ok(
          attempts.every((a) => a.error === 'blocked_port' && a.status_code === null),
          JSON.stringify(attempts),
        );
        const log = await open.app.inject({ url: `/webhooks/${hook.id}/deliveries`, headers: { 'x-user-token': org.member.token } });
        assert.match(log.json()[0].error_message, new RegExp(`port ${target.port} is not allowed.*WEBHOOK_ALLOWED_PORTS`));
        assert.equal(target.requests.length, 0);
      } finally {
        await worker.stop();
      }
    } finally {
      await target?.close();
      await open.close();
    }
  });
});

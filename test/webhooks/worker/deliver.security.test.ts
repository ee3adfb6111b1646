// The delivery-time SSRF defence: with private targets forbidden, the address
// actually dialled is checked, whatever the URL looked like.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { closeDeliveryAgents, deliver, type DeliveryOutcome } from '../../../src/webhooks/worker/deliver.ts';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';

const send = (url: string, allowPrivate: boolean) =>
  deliver({
    url,
    body: '{"id":"call-1"}',
    headers: { 'content-type': 'application/json' },
    timeoutMs: 5000,
    allowPrivate,
    allowedPorts: '*',
  });

function errorOf(outcome: DeliveryOutcome): string {
  assert.equal(outcome.kind, 'error', JSON.stringify(outcome));
  return outcome.kind === 'error' ? outcome.error : '';
}

describe('deliver with private targets forbidden', () => {
  let target: HttpsTarget;
  before(async () => {
    target = await startHttpsTarget();
  });
  after(async () => {
    await target.close();
    await closeDeliveryAgents();
  });

  test('blocks a name that resolves to 127.0.0.1 when dialling, and the target receives nothing', async () => {
    const outcome = await send(`https://localhost:${target.port}/hook`, false);
    assert.equal(errorOf(outcome), 'blocked_address');
    assert.match(
      outcome.kind === 'error' ? outcome.message : '',
      /localhost resolves to (127\.0\.0\.1|::1), which is not a public address/,
    );
    assert.equal(target.requests.length, 0);
  });

  const literals = [
    ['an IPv4 loopback literal', (port: number) => `https://127.0.0.1:${port}/hook`],
    ['a decimal IPv4 literal', (port: number) => `https://2130706433:${port}/hook`],
    ['an IPv4-mapped IPv6 literal', (port: number) => `https://[::ffff:127.0.0.1]:${port}/hook`],
    ['the IPv6 loopback', (port: number) => `https://[::1]:${port}/hook`],
    ['the metadata address', () => 'https://169.254.169.254/latest/meta-data/'],
  ] as const;
  for (const [what, url] of literals) {
    test(`blocks ${what}`, async () => {
      assert.equal(errorOf(await send(url(target.port), false)), 'blocked_address');
      assert.equal(target.requests.length, 0);
    });
  }

  test('the same name arrives, over verified TLS, when private targets are allowed', async () => {
    const outcome = await send(`https://localhost:${target.port}/hook`, true);
    assert.equal(outcome.kind, 'response', JSON.stringify(outcome));
    assert.equal(target.requests.length, 1);
    assert.equal(target.requests[0]?.url, '/hook');
  });
});

describe('deliver refuses URLs outside the hookUrl shape, even with private targets allowed', () => {
  let target: HttpsTarget;
  before(async () => {
    target = await startHttpsTarget();
  });
  after(async () => {
    await target.close();
    await closeDeliveryAgents();
  });

  for (const [what, url] of [
    ['plain http', (port: number) => `http://127.0.0.1:${port}/hook`],
    ['user-info', (port: number) => `https://user:pass@127.0.0.1:${port}/hook`],
    ['a relative URL', () => '/hook'],
  ] as const) {
    test(`refuses ${what} as invalid_url`, async () => {
      assert.equal(errorOf(await send(url(target.port), true)), 'invalid_url');
      assert.equal(target.requests.length, 0);
    });
  }
});

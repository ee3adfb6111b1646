// docs/interface.md §6.2: a `whsec_` secret given since the whsec rule keys
// webhook-signature with its decoded base64, so the standardwebhooks library
// verifies with the secret exactly as given; a plain secret, and a
// subscription stored before the rule, keep the secret's own bytes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import type { Problem } from '../../src/http/problem-details.plugin.ts';
import type { RecordedRequest } from '../helpers/https-target.ts';
import { signedInAgent } from '../helpers/web.ts';
import {
  completeCall,
  connectPlatform,
  type Connection,
  type DeliveryRig,
  startDeliveryRig,
  subscribeHook,
  waitFor,
} from '../helpers/webhooks.ts';

const whsec = (bytes: number) => `whsec_${randomBytes(bytes).toString('base64')}`;
/** How a receiver sets the library up for a plain secret: base64 of its UTF-8 bytes. */
const plainVerifier = (secret: string) => new Webhook(Buffer.from(secret, 'utf8').toString('base64'));
const signatureHeaders = (request: RecordedRequest) => ({
  'webhook-id': String(request.headers['webhook-id']),
  'webhook-timestamp': String(request.headers['webhook-timestamp']),
  'webhook-signature': String(request.headers['webhook-signature']),
});

describe('whsec_ secrets (Standard Webhooks form) and plain secrets', () => {
  let rig: DeliveryRig;

  before(async () => {
    rig = await startDeliveryRig({ listen: true });
  });
  after(() => rig.close());

  /** Subscribes `path` with `secret`, completes a call, and returns what the receiver got for it. */
  async function deliveredWith(connection: Connection, path: string, secret: string) {
    const hook = await subscribeHook(rig.t, connection, { hookUrl: `${rig.target.url}${path}`, secret });
    return { hook, request: await deliveredTo(connection, hook.id, path) };
  }

  async function deliveredTo(connection: Connection, hookId: string, path: string) {
    const call = await completeCall(rig.t, connection.member);
    return waitFor(`the call's delivery to ${path} (${hookId})`, async () =>
      rig.target.requests.find((r) => r.url === path && (JSON.parse(r.body) as { id: string }).id === call.id),
    );
  }

  async function view(connection: Connection, id: string) {
    const res = await rig.t.app.inject({ method: 'GET', url: `/webhooks/${id}`, headers: connection.headers });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { has_secret: boolean; secret_format: string | null };
  }

  test('a whsec_ secret: the library verifies a real delivery with the secret exactly as given', async () => {
    const connection = await connectPlatform(rig.t);
    const secret = whsec(32);
    const { hook, request } = await deliveredWith(connection, '/hooks/whsec', secret);
    const payload = new Webhook(secret).verify(request.body, signatureHeaders(request)) as { id: string };
    assert.equal(payload.id, JSON.parse(request.body).id);
    assert.equal(request.headers['x-signature'], secret, 'X-Signature still echoes the secret verbatim');
    assert.throws(() => plainVerifier(secret).verify(request.body, signatureHeaders(request)), WebhookVerificationError);
    assert.throws(() => new Webhook(whsec(32)).verify(request.body, signatureHeaders(request)), WebhookVerificationError);
    assert.deepEqual(await view(connection, hook.id), { ...(await view(connection, hook.id)), has_secret: true, secret_format: 'whsec' });
  });

  test('the smallest and largest keys (24 and 64 bytes) verify too', async () => {
    const connection = await connectPlatform(rig.t);
    for (const [path, secret] of [
      ['/hooks/whsec-24', whsec(24)],
      ['/hooks/whsec-64', whsec(64)],
    ] as const) {
      const { request } = await deliveredWith(connection, path, secret);
      assert.doesNotThrow(() => new Webhook(secret).verify(request.body, signatureHeaders(request)), path);
    }
  });

  test("a plain secret keeps today's rule: the key is the secret's own bytes", async () => {
    const connection = await connectPlatform(rig.t);
    const secret = 'a plain shared secret!~';
    const { hook, request } = await deliveredWith(connection, '/hooks/plain-secret', secret);
    assert.doesNotThrow(() => plainVerifier(secret).verify(request.body, signatureHeaders(request)));
    assert.equal((await view(connection, hook.id)).secret_format, 'plain');
  });

  test("a subscription stored before the whsec rule keeps today's rule, even with a whsec_ secret", async () => {
    const connection = await connectPlatform(rig.t);
    const secret = whsec(32);
    const grant = await rig.t.db.pool.query<{ id: string }>('SELECT id FROM oauth_grants WHERE organization_id = $1', [
      connection.member.org.id,
    ]);
    // Written as 0.1.0 wrote it: no secret_format, so the column's default, the rule every older row has.
    const sealed = createSecretBox(rig.t.config.secretKey!).seal(secret, connection.member.org.id);
    const { rows } = await rig.t.db.pool.query<{ id: string; secret_format: string }>(
      `INSERT INTO webhook_subscriptions (organization_id, client_id, grant_id, event, callback_url, secret_ciphertext)
       VALUES ($1, $2, $3, 'call.completed', $4, $5) RETURNING id, secret_format`,
      [connection.member.org.id, connection.client.client_id, grant.rows[0]!.id, `${rig.target.url}/hooks/older`, sealed],
    );
    assert.equal(rows[0]!.secret_format, 'plain');
    const request = await deliveredTo(connection, rows[0]!.id, '/hooks/older');
    assert.doesNotThrow(() => plainVerifier(secret).verify(request.body, signatureHeaders(request)), 'verifies as before');
    assert.throws(() => new Webhook(secret).verify(request.body, signatureHeaders(request)), WebhookVerificationError);
    assert.equal((await view(connection, rows[0]!.id)).secret_format, 'plain');
  });

  test('subscribing again: without a secret the rule stays; a new secret brings its own rule', async () => {
    const connection = await connectPlatform(rig.t);
    const hookUrl = `${rig.target.url}/hooks/again`;
    const first = await subscribeHook(rig.t, connection, { hookUrl, secret: whsec(32) });
    await subscribeHook(rig.t, connection, { hookUrl });
    assert.equal((await view(connection, first.id)).secret_format, 'whsec');
    const plain = 'now a plain secret';
    await subscribeHook(rig.t, connection, { hookUrl, secret: plain });
    assert.equal((await view(connection, first.id)).secret_format, 'plain');
    const request = await deliveredTo(connection, first.id, '/hooks/again');
    assert.doesNotThrow(() => plainVerifier(plain).verify(request.body, signatureHeaders(request)));
    const secret = whsec(48);
    await subscribeHook(rig.t, connection, { hookUrl, secret });
    assert.equal((await view(connection, first.id)).secret_format, 'whsec');
    const again = await deliveredTo(connection, first.id, '/hooks/again');
    assert.doesNotThrow(() => new Webhook(secret).verify(again.body, signatureHeaders(again)));
  });

  test('without a secret there is no rule to show', async () => {
    const connection = await connectPlatform(rig.t);
    const hook = await subscribeHook(rig.t, connection, { hookUrl: `${rig.target.url}/hooks/unsigned` });
    assert.deepEqual(await view(connection, hook.id), { ...(await view(connection, hook.id)), has_secret: false, secret_format: null });
  });

  test("the subscription's web page says which key webhook-signature uses, and never shows the secret", async () => {
    const connection = await connectPlatform(rig.t);
    const secret = whsec(32);
    const ids = {
      whsec: (await subscribeHook(rig.t, connection, { hookUrl: `${rig.target.url}/hooks/page-whsec`, secret })).id,
      plain: (await subscribeHook(rig.t, connection, { hookUrl: `${rig.target.url}/hooks/page-plain`, secret: 'page secret' })).id,
      none: (await subscribeHook(rig.t, connection, { hookUrl: `${rig.target.url}/hooks/page-none` })).id,
    };
    const agent = await signedInAgent(rig.t.url, connection.member.email);
    const signed = async (id: string) => {
      const page = await agent.get(`/ui/webhooks/${id}`);
      assert.equal(page.status, 200);
      assert.ok(!page.body.includes(secret.slice(6)) && !page.body.includes('page secret'), 'no secret on the page');
      return /<dt>Signed<\/dt><dd>([^<]*)<\/dd>/.exec(page.body)?.[1];
    };
    assert.match((await signed(ids.whsec))!, /decoded whsec_ secret/);
    assert.match((await signed(ids.plain))!, /secret&#39;s own bytes|secret's own bytes/);
    assert.equal(await signed(ids.none), 'No secret given');
  });

  const key = (bytes: number) => randomBytes(bytes).toString('base64');
  for (const [name, secret] of [
    ['nothing after the prefix', 'whsec_'],
    ['characters outside base64', `whsec_${key(24).slice(0, -4)}!!!!`],
    ['URL-safe base64', `whsec_${'-_'.repeat(16)}`],
    ['missing padding', `whsec_${key(25).replace(/=+$/, '')}`],
    ['a space inside', `whsec_${key(12)} ${key(12)}`],
    ['a 23-byte key', `whsec_${key(23)}`],
    ['a 65-byte key', `whsec_${key(65)}`],
  ] as const) {
    test(`a whsec_ secret with ${name} is a 400 naming secret, and nothing is stored`, async () => {
      const connection = await connectPlatform(rig.t);
      const res = await rig.t.app.inject({
        method: 'POST',
        url: '/webhooks/subscribe',
        headers: connection.headers,
        payload: { hookUrl: `${rig.target.url}/hooks/refused`, secret },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      const problem = res.json() as Problem;
      assert.equal(problem.code, 'REQUEST_VALIDATION');
      assert.ok(
        problem.errors?.some((e) => e.field === 'secret' && /whsec_/.test(e.message)),
        res.body,
      );
      if (secret !== 'whsec_') assert.ok(!res.body.includes(secret), 'the secret is not echoed');
      const { rows } = await rig.t.db.pool.query('SELECT 1 FROM webhook_subscriptions WHERE organization_id = $1', [
        connection.member.org.id,
      ]);
      assert.equal(rows.length, 0);
    });
  }

  test('"whsec" without the underscore, or in capitals, is a plain secret', async () => {
    const connection = await connectPlatform(rig.t);
    for (const [path, secret] of [
      ['/hooks/whsec-no-underscore', `whsec${key(24)}`],
      ['/hooks/whsec-capitals', `WHSEC_${key(24)}`],
    ] as const) {
      const { hook, request } = await deliveredWith(connection, path, secret);
      assert.equal((await view(connection, hook.id)).secret_format, 'plain');
      assert.doesNotThrow(() => plainVerifier(secret).verify(request.body, signatureHeaders(request)), path);
    }
  });
});

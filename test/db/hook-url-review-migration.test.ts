// The migration of issue 37 (items 1 and 4): subscriptions stored with a
// control character, a space or a non-ASCII character in their URL are
// disabled (invalid_url, by the system, no alert); stored audit details and
// alerts show a hook URL as scheme and host only.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { alertFromEvents } from '../../src/alerts/rules.ts';
import { hashToken } from '../../src/auth/tokens.ts';
import { MIGRATIONS_DIR, migrate } from '../../src/db/migrate.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';
import { issueTokens, platformHeaders } from '../helpers/oauth.ts';
import { signedInAgent } from '../helpers/web.ts';
import { WEBHOOK_TEST_ENV } from '../helpers/webhooks.ts';

const BAD = 'https://hooks.example.com/fail/x\r\n\r\nIMPORTANT - confirm at https://evil.example/login\r\n';
const TABBED = 'https://hooks.example.com/\tb';
const GOOD = 'https://hooks.zapier.com/hooks/catch/123/secretpath/';
const FAILING = 'https://hooks.example.com/failing';

describe('the hook URL review migration', () => {
  let db: TestDatabase;
  let earlier: string;
  let migration: string;
  let t: TestApp | undefined;
  let headers: Record<string, string>;
  let org: string;
  let email: string;
  const ids: Record<string, string> = {};
  before(async () => {
    migration = (await readdir(MIGRATIONS_DIR)).find((name) => name.endsWith('_hook_url_review.sql'))!;
    db = await createTestDatabase({ migrated: false });
    earlier = await mkdtemp(path.join(tmpdir(), 'sb-migrations-'));
    for (const name of await readdir(MIGRATIONS_DIR)) {
      if (name.endsWith('.sql') && name < migration) await cp(path.join(MIGRATIONS_DIR, name), path.join(earlier, name));
    }
    await migrate(db.pool, earlier);
    const member = await createMember(db.pool);
    org = member.org.id;
    email = member.user.email;
    // The client and grant as they were then, in SQL: the fixtures write today's columns.
    const client = { client_id: `migration-${randomUUID()}`, client_secret: `sbs_${randomUUID()}` };
    const clientUuid = (
      await db.pool.query<{ id: string }>(
        `INSERT INTO oauth_clients (client_id, secret_hash, name, redirect_uris, scopes)
         VALUES ($1, $2, 'Zap Platform', ARRAY['https://platform.example.com/cb'], ARRAY['calls:read', 'calls:write']) RETURNING id`,
        [client.client_id, hashToken(client.client_secret)],
      )
    ).rows[0]!.id;
    const grant = (
      await db.pool.query<{ id: string }>(
        "INSERT INTO oauth_grants (client_id, user_id, organization_id, scopes) VALUES ($1, $2, $3, ARRAY['calls:read']) RETURNING id",
        [clientUuid, member.user.id, org],
      )
    ).rows[0]!;
    for (const url of [BAD, TABBED, GOOD, FAILING]) {
      const { rows } = await db.pool.query<{ id: string }>(
        `INSERT INTO webhook_subscriptions (organization_id, client_id, grant_id, event, callback_url)
         VALUES ($1, $2, $3, 'call.completed', $4) RETURNING id`,
        [org, client.client_id, grant.id, url],
      );
      ids[url] = rows[0]!.id;
    }
    assert.equal((await migrate(db.pool)).applied[0], migration);
    const tokens = await issueTokens(db.pool, {
      client: { id: clientUuid },
      userId: member.user.id,
      organizationId: org,
      scopes: ['calls:read'],
    });
    headers = platformHeaders(tokens, client);
  });
  after(async () => {
    await t?.close();
    await db.drop();
    await rm(earlier, { recursive: true, force: true });
  });

  test('a stored URL with such a character is disabled (invalid_url) by the system; the others stay active', async () => {
    const { rows } = await db.pool.query<{ id: string; status: string; disabled_reason: string | null; callback_url: string }>(
      'SELECT id, status, disabled_reason, callback_url FROM webhook_subscriptions',
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const url of [BAD, TABBED]) {
      assert.deepEqual(byId.get(ids[url]!), { id: ids[url], status: 'disabled', disabled_reason: 'invalid_url', callback_url: url });
    }
    for (const url of [GOOD, FAILING]) assert.equal(byId.get(ids[url]!)!.status, 'active');
    const events = await db.pool.query(
      "SELECT subject_id, actor_type, actor_id, actor_label, reason, details FROM audit_events WHERE type = 'subscription.disabled'",
    );
    assert.deepEqual(events.rows.map((e) => e.subject_id).sort(), [ids[BAD], ids[TABBED]].sort());
    for (const e of events.rows) {
      assert.deepEqual(
        { actor_type: e.actor_type, actor_id: e.actor_id, actor_label: e.actor_label, reason: e.reason },
        { actor_type: 'system', actor_id: null, actor_label: 'migration', reason: 'invalid_url' },
      );
      assert.equal(e.details.hook_url, 'https://hooks.example.com/…');
    }
  });

  test('no alert follows from it, while a disable for delivery_failures in the same window does', async () => {
    await db.pool.query(
      "UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now(), disabled_reason = 'delivery_failures' WHERE id = $1",
      [ids[FAILING]],
    );
    await alertFromEvents(db.pool);
    const { rows } = await db.pool.query('SELECT subject_id, kind FROM alerts WHERE organization_id = $1', [org]);
    assert.deepEqual(rows, [{ subject_id: ids[FAILING], kind: 'disabled' }]);
  });

  test('stored audit details show a hook URL as scheme and host only; new events too', async () => {
    const { rows } = await db.pool.query<{ type: string; hook_url: string }>(
      "SELECT type, details->>'hook_url' AS hook_url FROM audit_events WHERE subject_id = $1 ORDER BY occurred_at",
      [ids[GOOD]],
    );
    assert.deepEqual(rows, [{ type: 'subscription.created', hook_url: 'https://hooks.zapier.com/…' }]);
    const details = await db.pool.query(
      "SELECT details FROM audit_events WHERE details::text LIKE '%secretpath%' OR details::text LIKE '%evil%'",
    );
    assert.equal(details.rows.length, 0);
    const alerts = await db.pool.query("SELECT details->>'url' AS url FROM alerts WHERE subject_id = $1", [ids[FAILING]]);
    assert.deepEqual(alerts.rows, [{ url: 'https://hooks.example.com/…' }]);
  });

  test('through the API: subscribing it again is a 400, re-enabling a 409, and DELETE /webhooks/subscribe removes it by its stored URL', async () => {
    t = await startTestApp({ db, env: WEBHOOK_TEST_ENV, listen: true });
    // The pages write the stored URL with its control characters percent-encoded.
    const agent = await signedInAgent(t.url!, email);
    for (const page of ['/ui/webhooks', `/ui/webhooks/${ids[BAD]}`, '/']) {
      const { body } = await agent.get(page);
      assert.ok(body.includes('https://hooks.example.com/fail/x%0D%0A%0D%0AIMPORTANT'), page);
      assert.ok(!/[\r\n]IMPORTANT/.test(body), page);
    }
    const again = await t.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers, payload: { hookUrl: BAD } });
    assert.equal(again.statusCode, 400);
    assert.equal(again.json().errors[0].field, 'hookUrl');
    const enable = await t.app.inject({ method: 'POST', url: `/webhooks/${ids[BAD]}/enable`, headers });
    assert.equal(enable.statusCode, 409);
    assert.equal(enable.json().code, 'WEBHOOK_SUBSCRIPTION_URL_INVALID');
    const status = await db.pool.query('SELECT status FROM webhook_subscriptions WHERE id = $1', [ids[BAD]]);
    assert.equal(status.rows[0].status, 'disabled');

    const removed = await t.app.inject({ method: 'DELETE', url: '/webhooks/subscribe', headers, payload: { hookUrl: BAD } });
    assert.ok(removed.statusCode < 300, removed.body);
    const left = await db.pool.query('SELECT id FROM webhook_subscriptions WHERE id = $1', [ids[BAD]]);
    assert.equal(left.rows.length, 0);
  });
});

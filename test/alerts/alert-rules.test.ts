// The alert rules on what really happened (an authorization code replayed, a
// client's RFC 7009 revocation, a deactivation, circuits opening and closing as
// the worker records answers, deliveries failing for good), each rule applied
// as a worker applies it and the e-mails sent to a real SMTP server: which
// events make an e-mail and which make none (docs/interface.md §6.7).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createMailer, type Mailer } from '../../src/alerts/mailer.ts';
import { alertFailingSubscriptions, alertFromEvents, alertLongIncidents } from '../../src/alerts/rules.ts';
import { sendDueAlerts } from '../../src/alerts/sender.ts';
import { COMMAND_LINE } from '../../src/audit/audit-actor.ts';
import { actAs } from '../../src/audit/audit-events.queries.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { setUserActiveByEmail } from '../../src/organizations/users.queries.ts';
import type { HealthPolicy } from '../../src/webhooks/worker/endpoint-health.ts';
import { recordOutcomes } from '../../src/webhooks/worker/record.queries.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { createClient, obtainCode, tokenRequest } from '../helpers/oauth.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import {
  answeredOutcome,
  claimDueDeliveries,
  completeCall,
  connectPlatform,
  subscribeHook,
  WEBHOOK_TEST_ENV,
  type Connection,
} from '../helpers/webhooks.ts';

const BASE_URL = 'https://switchboard.example.test';
const HOUR_MS = 3_600_000;
/** The circuit opens at the first unhealthy answer, and its probe is due at once. */
const POLICY: HealthPolicy = { maxInFlight: 10, breakerThreshold: 1, breakerWaitsMs: [0] };

describe('alert rules: what makes an e-mail and what makes none', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let target: HttpsTarget;
  let mailer: Mailer;

  /** One look of the rules as a worker makes it (incidents alerted after `alertAfterMs`), then the sender's. */
  async function applyRules(alertAfterMs = HOUR_MS): Promise<void> {
    await alertLongIncidents(t.db.pool, alertAfterMs);
    assert.notEqual(await alertFromEvents(t.db.pool), undefined, 'no other look holds the events rule');
    const options = { pool: t.db.pool, config: t.config, log: pino({ level: 'silent' }), metrics: t.app.metrics, mailer };
    while ((await sendDueAlerts(options)) > 0) {}
  }

  const alertsAbout = async (subjectId: string) =>
    (
      await t.db.pool.query<{ kind: string; details: Record<string, unknown> }>(
        'SELECT kind, details FROM alerts WHERE subject_id = $1 ORDER BY created_at',
        [subjectId],
      )
    ).rows;

  /** One attempt of each waiting delivery of these subscriptions (none of any other), answered `status`, recorded as the worker records it. */
  async function attempt(hookIds: string[], status: number, outcome?: { failedForGood: true }) {
    await t.db.pool.query(
      `UPDATE webhook_deliveries SET next_attempt_at = CASE WHEN subscription_id = ANY ($1) THEN now() ELSE 'infinity' END
        WHERE status = 'pending'`,
      [hookIds],
    );
    const claimed = await claimDueDeliveries(t.db.pool, { limit: 50, leaseMs: 10_000 });
    assert.ok(claimed.length > 0, 'a delivery was due');
    const records = claimed.map((c) => {
      const record = answeredOutcome(c, status);
      return outcome ? { ...record, outcome: 'failed' as const, status: 'failed' as const, nextAttemptAt: null } : record;
    });
    await recordOutcomes(t.db.pool, { records, disableAfterMs: 5 * 86_400_000, policy: POLICY });
  }

  async function connectWithHook(): Promise<Connection & { hookId: string; hookUrl: string }> {
    const connection = await connectPlatform(t);
    const hookUrl = `${target.url}/hooks/${Math.random().toString(36).slice(2)}`;
    const hook = await subscribeHook(t, connection, { hookUrl });
    return { ...connection, hookId: hook.id, hookUrl };
  }

  before(async () => {
    smtp = await startSmtpServer();
    target = await startHttpsTarget();
    t = await startTestApp({ listen: true, env: { ...WEBHOOK_TEST_ENV, SMTP_URL: smtp.url, BASE_URL, REFRESH_REUSE_GRACE: '0' } });
    mailer = createMailer(smtp.url, t.config.alertFrom);
  });

  after(async () => {
    mailer.close();
    await t.close();
    await target.close();
    await smtp.stop();
  });

  test('a replayed authorization code (code_replay) e-mails the owners; the client’s RFC 7009 revocation and a deactivation e-mail nobody', async () => {
    // code_replay: the code exchanged twice revokes the grant.
    const replayOwner = await createMember(t.db.pool);
    const replayClient = await createClient(t.db.pool, { name: 'Replayed Platform' });
    const { code, verifier } = await obtainCode(t.url, { client: replayClient, member: replayOwner });
    const exchange = () =>
      tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier!,
        redirect_uri: replayClient.redirect_uris[0]!,
        client_id: replayClient.client_id,
        client_secret: replayClient.client_secret,
      });
    assert.equal((await exchange()).statusCode, 200);
    assert.equal((await exchange()).statusCode, 400);

    // RFC 7009: the client revokes its own refresh token, with a subscription it had.
    const revokingOwner = await createMember(t.db.pool);
    const revokingClient = await createClient(t.db.pool, { name: 'Revoking Platform' });
    const grant = await obtainCode(t.url, { client: revokingClient, member: revokingOwner });
    const tokens = await tokenRequest(t.app, {
      grant_type: 'authorization_code',
      code: grant.code,
      code_verifier: grant.verifier!,
      redirect_uri: revokingClient.redirect_uris[0]!,
      client_id: revokingClient.client_id,
      client_secret: revokingClient.client_secret,
    });
    assert.equal(tokens.statusCode, 200, tokens.body);
    const revoked = await tokenRequest(
      t.app,
      { token: tokens.json().refresh_token, client_id: revokingClient.client_id, client_secret: revokingClient.client_secret },
      { path: '/oauth/revoke' },
    );
    assert.equal(revoked.statusCode, 200, revoked.body);

    // A deactivation: the member who connected a platform is deactivated by the command line; the owner is told nothing.
    const deactivatedOwner = await createMember(t.db.pool);
    const platformUser = await createMember(t.db.pool, { org: deactivatedOwner.org, role: 'member' });
    const deactivated = await connectPlatform(t, { member: platformUser });
    await subscribeHook(t, deactivated, { hookUrl: `${target.url}/deactivated` });
    await withTransaction(t.db.pool, async (tx) => {
      await actAs(tx, COMMAND_LINE);
      await setUserActiveByEmail(tx, platformUser.email, false);
    });
    const { rows: stopped } = await t.db.pool.query(
      `SELECT type, reason FROM audit_events WHERE organization_id = ANY ($1) AND type IN ('grant.revoked', 'subscription.disabled') ORDER BY type`,
      [[revokingOwner.org.id, deactivatedOwner.org.id]],
    );
    assert.deepEqual(
      stopped.map((r) => `${r.type} ${r.reason}`),
      ['grant.revoked revoked', 'subscription.disabled user_deactivated'],
    );

    await applyRules();
    const replayMails = smtp.to(replayOwner.email);
    assert.equal(replayMails.length, 1, 'the code_replay revocation is e-mailed');
    assert.match(replayMails[0]!.subject, /Replayed Platform: connection revoked/);
    assert.ok(replayMails[0]!.text.includes(`${BASE_URL}/connected-apps`));
    assert.deepEqual(
      (await alertsAbout(replayClient.client_id)).map((a) => [a.kind, a.details.reason]),
      [['revoked', 'code_replay']],
    );
    assert.equal(smtp.to(revokingOwner.email).length, 0, 'no e-mail for the app’s own RFC 7009 revocation');
    assert.equal(smtp.to(deactivatedOwner.email).length, 0, 'no e-mail for a deactivation');
    const { rows } = await t.db.pool.query('SELECT kind FROM alerts WHERE organization_id = ANY ($1)', [
      [revokingOwner.org.id, deactivatedOwner.org.id],
    ]);
    assert.deepEqual(rows, []);
  });

  test('incidents: an e-mail after ALERT_AFTER and one on recovery (alert.sent with since, hook_url, client_name); none on recovery before ALERT_AFTER or after a reset', async () => {
    const told = await connectWithHook();
    const early = await connectWithHook();
    const reset = await connectWithHook();
    for (const c of [told, early, reset]) await completeCall(t, c.member);
    await attempt([told.hookId, early.hookId, reset.hookId], 503);
    const opened = async (hookId: string) =>
      (
        await t.db.pool.query<{ occurred_at: Date }>(
          `SELECT occurred_at FROM audit_events WHERE type = 'circuit.opened' AND subject_id = $1`,
          [hookId],
        )
      ).rows[0]!.occurred_at;
    const openedAt = await opened(told.hookId);

    // `early` recovers before ALERT_AFTER (an hour) has passed.
    await applyRules();
    assert.deepEqual(await alertsAbout(early.hookId), []);
    await attempt([early.hookId], 200);
    // `told` and `reset` have lasted ALERT_AFTER (here 0): their owners are told.
    await applyRules(0);
    for (const c of [told, reset]) assert.equal(smtp.to(c.member.email).length, 1, 'the incident e-mail');
    assert.equal(smtp.to(early.member.email).length, 0, 'no e-mail for an incident that ended before ALERT_AFTER');
    assert.deepEqual(await alertsAbout(early.hookId), [], 'nor an alert');

    const sent = await t.app.inject({ url: '/audit-events?type=alert.sent', headers: { 'x-user-token': told.member.token } });
    const [event] = sent.json() as { subject: { id: string }; details: Record<string, unknown> }[];
    assert.equal(event!.subject.id, told.hookId);
    assert.equal(event!.details.alert, 'incident');
    assert.equal(Date.parse(event!.details.since as string), openedAt.getTime(), 'since: the incident’s first opening');
    assert.ok(String(event!.details.hook_url).startsWith(new URL(told.hookUrl).origin), JSON.stringify(event!.details));
    assert.equal(event!.details.client_name, told.client.name);
    assert.equal(event!.details.client_id, told.client.client_id);

    // `reset` is subscribed again by its app (circuit.closed reset); `told` recovers with a healthy answer.
    await subscribeHook(t, reset, { hookUrl: reset.hookUrl });
    await attempt([told.hookId], 200);
    const { rows: closed } = await t.db.pool.query(
      `SELECT subject_id, reason FROM audit_events WHERE type = 'circuit.closed' AND subject_id = ANY ($1) ORDER BY reason`,
      [[told.hookId, reset.hookId]],
    );
    assert.deepEqual(closed, [
      { subject_id: told.hookId, reason: 'recovered' },
      { subject_id: reset.hookId, reason: 'reset' },
    ]);
    await applyRules();
    const recovered = smtp.to(told.member.email).filter((m) => /have recovered/.test(m.subject));
    assert.equal(recovered.length, 1, 'the recovered e-mail to those told');
    assert.equal(smtp.to(reset.member.email).length, 1, 'no "recovered" e-mail after a reset');
    assert.deepEqual(
      (await alertsAbout(reset.hookId)).map((a) => a.kind),
      ['incident'],
    );
    assert.equal(smtp.to(early.member.email).length, 0);
  });

  test('deliveries failing for good with the circuit closed: one e-mail, then none for 24 hours, then one again', async () => {
    const c = await connectWithHook();
    const failForGood = async () => {
      await completeCall(t, c.member);
      await attempt([c.hookId], 404, { failedForGood: true });
      assert.notEqual(await alertFailingSubscriptions(t.db.pool), undefined);
      await applyRules();
    };
    await failForGood();
    assert.deepEqual(
      (await alertsAbout(c.hookId)).map((a) => a.kind),
      ['failing'],
    );
    assert.equal(smtp.to(c.member.email).length, 1);
    // 23 hours later: still within the day.
    await t.db.pool.query("UPDATE alerts SET created_at = created_at - interval '23 hours' WHERE subject_id = $1", [c.hookId]);
    await failForGood();
    assert.equal((await alertsAbout(c.hookId)).length, 1, 'at most one in 24 hours');
    assert.equal(smtp.to(c.member.email).length, 1);
    // Past 24 hours since that alert: a new failure is e-mailed again.
    await t.db.pool.query("UPDATE alerts SET created_at = created_at - interval '90 minutes' WHERE subject_id = $1", [c.hookId]);
    await failForGood();
    assert.equal((await alertsAbout(c.hookId)).length, 2);
    assert.equal(smtp.to(c.member.email).length, 2);
    const { rows } = await t.db.pool.query('SELECT circuit_state FROM webhook_subscriptions WHERE id = $1', [c.hookId]);
    assert.equal(rows[0].circuit_state, 'closed');
  });
});

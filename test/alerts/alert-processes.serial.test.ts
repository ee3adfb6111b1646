// Alerts end to end: two `switchboard worker` processes on one database apply
// the rules and send over SMTP_URL to a real SMTP server in this process
// (smtp-server, each message parsed with mailparser). One alert per incident
// however often the circuit reopens, the recovery e-mail, the 404 case, a
// disable, a revoked connection sent once the refusing SMTP server accepts,
// nothing to another organization, nothing after a person's own action,
// nothing to someone who turned alerts off; each sent alert is in the audit
// log as alert.sent.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sleep } from '../helpers/endpoint-health.ts';
import { startHttpsTarget, type HttpsTarget, type TargetResponse } from '../helpers/https-target.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders, tokenRequest } from '../helpers/oauth.ts';
import { startSmtpServer, waitForMails, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp.ts';
import { completeCall, connectPlatform, subscribeHook, waitFor, WEBHOOK_TEST_ENV, type Connection } from '../helpers/webhooks.ts';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.ts';
import { revokeConnectedApp } from '../../src/oauth/connected-apps.service.ts';

const BASE_URL = 'https://switchboard.example.test';
const ALERT_AFTER_MS = 3000;
/** The workers' rules cadence (ALERT_RULES_INTERVAL): the waits for "nothing more was written" are counted in looks. */
const RULES_INTERVAL_MS = 500;
/** ALERT_FAILING_RULE_INTERVAL: the 404 rule runs at most this far apart in each worker. */
const FAILING_RULE_INTERVAL_MS = 2000;
const ENV = {
  ...WEBHOOK_TEST_ENV,
  WEBHOOK_RETRY_SCHEDULE: '500ms,500ms,500ms',
  ALERT_AFTER: `${ALERT_AFTER_MS / 1000}s`,
  ALERT_RULES_INTERVAL: `${RULES_INTERVAL_MS}ms`,
  ALERT_FAILING_RULE_INTERVAL: `${FAILING_RULE_INTERVAL_MS}ms`,
  BASE_URL,
};
/** A bound on the 404 rule's next run, with room for a loaded machine (ten of its intervals). */
const FAILING_RULE_WAIT_MS = 10 * FAILING_RULE_INTERVAL_MS;

describe('alerts across two worker processes', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let workers: WorkerProcess[] = [];
  const targets: HttpsTarget[] = [];
  let a: Connection;
  let adminOff: Member;
  let member: Member;
  let b: Connection;

  const target = async (answer: () => TargetResponse) => {
    const started = await startHttpsTarget(() => answer());
    targets.push(started);
    return started;
  };
  const host = (hookUrl: string) => new URL(hookUrl).host.replace(/[.]/g, '\\.');
  const mailsAbout = (email: string, pattern: RegExp): ReceivedMail[] => smtp.to(email).filter((m) => pattern.test(m.subject));
  const subscription = (id: string) =>
    t.db.pool.query<{ circuit_state: string; circuit_opens: number; status: string }>(
      'SELECT circuit_state, circuit_opens, status FROM webhook_subscriptions WHERE id = $1',
      [id],
    );
  /** Waits until a rule's look began after `time` (the database's clock), so anything due at `time` has been seen. */
  const scannedPast = (rule: 'events' | 'failing', time: Date, timeoutMs = 30_000) =>
    waitFor(
      `the ${rule} rule to look past ${time.toISOString()}`,
      async () => {
        const { rows } = await t.db.pool.query<{ past: boolean }>('SELECT scanned_until > $2 AS past FROM alert_scans WHERE rule = $1', [
          rule,
          time,
        ]);
        return rows[0]!.past;
      },
      timeoutMs,
    );
  const dbNow = async () => (await t.db.pool.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]!.now;
  const alertsAbout = async (subjectId: string) =>
    (await t.db.pool.query<{ kind: string }>('SELECT kind FROM alerts WHERE subject_id = $1 ORDER BY created_at', [subjectId])).rows.map(
      (r) => r.kind,
    );

  /**
   * The alerts about `subjectId` were written for A's owner alone (not the admin who turned alerts
   * off, nor a member), and nobody else has had an e-mail of A: each test checks its own alerts, so
   * that it passes alone.
   */
  const assertOnlyTheOwner = async (subjectId: string) => {
    const { rows } = await t.db.pool.query<{ email: string }>(
      'SELECT DISTINCT e.email FROM alert_emails e JOIN alerts al ON al.id = e.alert_id WHERE al.subject_id = $1',
      [subjectId],
    );
    assert.deepEqual(
      rows.map((r) => r.email),
      [a.member.email],
    );
    assert.equal(smtp.to(adminOff.email).length, 0, 'nobody who turned alerts off');
    assert.equal(smtp.to(member.email).length, 0, 'no member');
    assert.ok(
      smtp.to(b.member.email).every((m) => !m.text.includes(a.member.org.name)),
      'nobody in another organization',
    );
  };

  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ env: { ...ENV, SMTP_URL: smtp.url, REFRESH_REUSE_GRACE: '0' } });
    a = await connectPlatform(t);
    adminOff = await createMember(t.db.pool, { org: a.member.org, role: 'admin' });
    member = await createMember(t.db.pool, { org: a.member.org, role: 'member' });
    await t.db.pool.query('INSERT INTO alert_preferences (organization_id, user_id, enabled) VALUES ($1, $2, false)', [
      a.member.org.id,
      adminOff.user.id,
    ]);
    b = await connectPlatform(t);
    const env = { ...ENV, SMTP_URL: smtp.url };
    const started = await Promise.allSettled([spawnWorker(t, env), spawnWorker(t, env)]);
    workers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  });

  after(async () => {
    await Promise.all(workers.map((worker) => worker.kill()));
    for (const started of targets) await started.close();
    await t.close();
    await smtp.stop();
  });

  test('an incident: one e-mail after ALERT_AFTER however often the circuit reopens, then one "recovered" e-mail; alert.sent in the audit log', async () => {
    let answer: TargetResponse = { status: 503 };
    const receiver = await target(() => answer);
    // Organization B's receiver fails too: B's owner hears of B's incident only.
    const bReceiver = await target(() => ({ status: 503 }));
    const hook = await subscribeHook(t, a, { hookUrl: `${receiver.url}/incident` });
    const bHook = await subscribeHook(t, b, { hookUrl: `${bReceiver.url}/b-incident` });
    for (let i = 0; i < 12; i++) await completeCall(t, a.member);
    for (let i = 0; i < 6; i++) await completeCall(t, b.member);

    const failing = new RegExp(`deliveries to ${host(receiver.url)} are failing`);
    const [mail] = await waitForMails(smtp, 1, (m) => failing.test(m.subject), 40_000);
    assert.deepEqual(mail!.to, [a.member.email]);
    assert.match(mail!.subject, /Zap Platform/);
    assert.ok(mail!.text.includes(`${BASE_URL}/ui/webhooks/${hook.id}`));
    // How many deliveries wait depends on how many failed for good before the circuit opened: the e-mail
    // says exactly what the rule recorded when it wrote the alert.
    const { rows: recorded } = await t.db.pool.query<{ waiting: number }>(
      "SELECT (details->>'waiting')::int AS waiting FROM alerts WHERE subject_id = $1 AND kind = 'incident'",
      [hook.id],
    );
    const waiting = recorded[0]!.waiting;
    assert.ok(waiting >= 0 && waiting <= 12, `${waiting} of the 12 deliveries waiting`);
    const says =
      waiting === 0 ? 'No deliveries are waiting.' : `${waiting} ${waiting === 1 ? 'delivery is' : 'deliveries are'} waiting for it.`;
    assert.ok(mail!.text.includes(says), `the e-mail says "${says}": ${mail!.text}`);
    const opensAtMail = (await subscription(hook.id)).rows[0]!.circuit_opens;
    // Written once the incident had lasted ALERT_AFTER from its first opening (its one circuit.opened event).
    const { rows: timing } = await t.db.pool.query<{ opened: number; waited_ms: number }>(
      `SELECT (SELECT count(*)::int FROM audit_events e WHERE e.subject_id = $1 AND e.type = 'circuit.opened') AS opened,
              (SELECT extract(epoch FROM al.created_at - e.occurred_at) * 1000
                 FROM alerts al JOIN audit_events e ON al.dedupe_key = 'incident:' || e.id
                WHERE al.subject_id = $1)::float8 AS waited_ms`,
      [hook.id],
    );
    assert.equal(timing[0]!.opened, 1);
    assert.ok(timing[0]!.waited_ms >= ALERT_AFTER_MS, `alerted ${timing[0]!.waited_ms} ms after the first opening`);

    // The circuit reopens after failed probes; the rules look again and again: still one e-mail.
    await waitFor(
      'the circuit to reopen after a failed probe',
      async () => (await subscription(hook.id)).rows[0]!.circuit_opens > opensAtMail,
      20_000,
    );
    await sleep(3 * RULES_INTERVAL_MS);
    assert.equal(mailsAbout(a.member.email, failing).length, 1, 'one e-mail per incident');
    assert.equal((await subscription(hook.id)).rows[0]!.circuit_state, 'open');

    // B's incident reaches B's owner, and A's reaches nobody in B.
    await waitForMails(smtp, 1, (m) => m.to.includes(b.member.email), 40_000);
    assert.equal(mailsAbout(b.member.email, failing).length, 0);

    // The receiver answers again: the next probe closes the circuit; those told hear of it once.
    answer = { status: 200 };
    await completeCall(t, a.member);
    const recovered = new RegExp(`deliveries to ${host(receiver.url)} have recovered`);
    const [back] = await waitForMails(smtp, 1, (m) => recovered.test(m.subject), 40_000);
    assert.deepEqual(back!.to, [a.member.email]);
    assert.ok(back!.text.includes(`${BASE_URL}/ui/webhooks/${hook.id}`));
    const closedAt = await dbNow();
    await scannedPast('events', closedAt);
    assert.equal(mailsAbout(a.member.email, recovered).length, 1);

    // What failed for good during the incident is the incident's: no "failed for good" e-mail once it closed.
    await scannedPast('failing', closedAt, FAILING_RULE_WAIT_MS);
    assert.equal(mailsAbout(a.member.email, /failed for good/).length, 0);

    const res = await t.app.inject({
      method: 'GET',
      url: '/audit-events?type=alert.sent',
      headers: { 'x-user-token': a.member.token },
    });
    assert.equal(res.statusCode, 200);
    const sent = (
      res.json() as { subject: { type: string; id: string }; actor: { type: string }; details: Record<string, unknown> }[]
    ).filter((e) => e.subject.id === hook.id);
    assert.deepEqual(sent.map((e) => e.details.alert).sort(), ['incident', 'recovered']);
    for (const event of sent) {
      assert.equal(event.details.recipients, 1);
      assert.equal(event.actor.type, 'system');
      assert.match(String(event.details.incident), /^[0-9a-f-]{36}$/);
    }
    assert.deepEqual(await alertsAbout(bHook.id), ['incident']);
    await assertOnlyTheOwner(hook.id);
  });

  test('deliveries failing for good while the circuit stays closed (404): one e-mail, not another the same day', async () => {
    const receiver = await target(() => ({ status: 404 }));
    const hook = await subscribeHook(t, a, { hookUrl: `${receiver.url}/gone-zap` });
    await completeCall(t, a.member);
    const failedForGood = new RegExp(`deliveries to ${host(receiver.url)} failed for good`);
    const [mail] = await waitForMails(smtp, 1, (m) => failedForGood.test(m.subject), FAILING_RULE_WAIT_MS + 10_000);
    assert.deepEqual(mail!.to, [a.member.email]);
    assert.match(mail!.text, /1 delivery of Zap Platform/);
    assert.equal((await subscription(hook.id)).rows[0]!.circuit_state, 'closed');

    await completeCall(t, a.member);
    await waitFor('the second delivery to fail for good', async () => {
      const { rows } = await t.db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'failed'`,
        [hook.id],
      );
      return rows[0]!.n === 2;
    });
    await scannedPast('failing', await dbNow(), FAILING_RULE_WAIT_MS);
    assert.equal(mailsAbout(a.member.email, failedForGood).length, 1, 'at most one a day');
    await assertOnlyTheOwner(hook.id);
  });

  test('a subscription disabled for delivery_failures: one e-mail', async () => {
    const receiver = await target(() => ({ status: 503 }));
    const hook = await subscribeHook(t, a, { hookUrl: `${receiver.url}/five-days` });
    // Failing for six days already: the next failure disables it.
    await t.db.pool.query(`UPDATE webhook_subscriptions SET failing_since = now() - interval '6 days' WHERE id = $1`, [hook.id]);
    await completeCall(t, a.member);
    const disabled = new RegExp(`subscription to ${host(receiver.url)} disabled`);
    const [mail] = await waitForMails(smtp, 1, (m) => disabled.test(m.subject), 40_000);
    assert.deepEqual(mail!.to, [a.member.email]);
    assert.equal((await subscription(hook.id)).rows[0]!.status, 'disabled');
    await scannedPast('events', await dbNow());
    assert.equal(mailsAbout(a.member.email, disabled).length, 1);
    await assertOnlyTheOwner(hook.id);
  });

  test('a connection revoked for refresh_reuse while the SMTP server refuses: retried, then sent once', async () => {
    const client = await createClient(t.db.pool, { name: 'Reused Platform', scopes: ['calls:read'] });
    const tokens = await issueTokens(t.db.pool, { client, userId: a.member.user.id, organizationId: a.member.org.id });
    const receiver = await target(() => ({ status: 200 }));
    await subscribeHook(
      t,
      { member: a.member, client, headers: platformHeaders(tokens, client), accessToken: tokens.access_token },
      {
        hookUrl: `${receiver.url}/reused`,
      },
    );
    smtp.refuse = { code: 451, message: 'Greylisted, try again later' };
    const refusalsBefore = smtp.refusals;
    const refresh = () =>
      tokenRequest(t.app, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: client.client_id,
        client_secret: client.client_secret,
      });
    assert.equal((await refresh()).statusCode, 200);
    assert.equal((await refresh()).statusCode, 400, 'the rotated token used again revokes the grant');
    try {
      await waitFor('two refused attempts', async () => smtp.refusals - refusalsBefore >= 2, 40_000);
    } finally {
      smtp.refuse = undefined;
    }
    const [mail] = await waitForMails(smtp, 1, (m) => /Reused Platform: connection revoked/.test(m.subject), 40_000);
    assert.deepEqual(mail!.to, [a.member.email]);
    assert.ok(mail!.text.includes(`${BASE_URL}/connected-apps`));
    assert.match(mail!.text, /1 webhook subscription stopped/);
    // The sender records `sent` after the mail server has the message: wait for that commit, not only the mail.
    const revokedEmails = async () =>
      (
        await t.db.pool.query<{ attempts: number; status: string }>(
          `SELECT e.attempts, e.status FROM alert_emails e JOIN alerts al ON al.id = e.alert_id
            WHERE al.kind = 'revoked' AND al.subject_id = $1`,
          [client.client_id],
        )
      ).rows;
    await waitFor('the e-mail recorded as sent', async () => (await revokedEmails()).some((r) => r.status === 'sent'), 40_000);
    const rows = await revokedEmails();
    assert.deepEqual(
      rows.map((r) => r.status),
      ['sent'],
    );
    assert.ok(rows[0]!.attempts >= 3, `sent on a later attempt, got ${rows[0]!.attempts}`);
    await sleep(2 * RULES_INTERVAL_MS);
    assert.equal(mailsAbout(a.member.email, /Reused Platform: connection revoked/).length, 1);
    await assertOnlyTheOwner(client.client_id);
  });

  test('nothing for what a person did on purpose: a deletion during an incident, an unsubscribe, a disconnect, a 410', async () => {
    const before = smtp.mails.length;
    // A deletion before the incident has lasted ALERT_AFTER.
    const failingReceiver = await target(() => ({ status: 503 }));
    const deleted = await subscribeHook(t, a, { hookUrl: `${failingReceiver.url}/deleted` });
    const unsubscribed = await subscribeHook(t, a, { hookUrl: `${failingReceiver.url}/unsubscribed` });
    for (let i = 0; i < 6; i++) await completeCall(t, a.member);
    await waitFor('both circuits to open', async () => {
      const { rows } = await t.db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_subscriptions WHERE id = ANY ($1) AND circuit_state = 'open'`,
        [[deleted.id, unsubscribed.id]],
      );
      return rows[0]!.n === 2;
    });
    const removed = await t.app.inject({ method: 'DELETE', url: `/webhooks/${deleted.id}`, headers: { 'x-user-token': a.member.token } });
    assert.equal(removed.statusCode, 204);
    const unsubscribe = await t.app.inject({
      method: 'DELETE',
      url: '/webhooks/subscribe',
      headers: a.headers,
      payload: { hookUrl: `${failingReceiver.url}/unsubscribed` },
    });
    assert.equal(unsubscribe.statusCode, 200, unsubscribe.body);

    // A receiver answering 410: the subscription goes.
    const goneReceiver = await target(() => ({ status: 410 }));
    const gone = await subscribeHook(t, a, { hookUrl: `${goneReceiver.url}/gone` });
    // A disconnect in the web UI's service: the grant revoked by a user, its subscriptions disabled.
    const other = await connectPlatform(t, { member: a.member, client: await createClient(t.db.pool, { name: 'Disconnected Platform' }) });
    const disconnected = await subscribeHook(t, other, { hookUrl: `${failingReceiver.url}/disconnected` });
    await completeCall(t, a.member);
    await waitFor('the 410 to remove its subscription', async () => (await subscription(gone.id)).rows.length === 0);
    // As the connected apps page's Revoke does it, by the signed-in owner.
    assert.equal(
      await revokeConnectedApp(t.app.db, t.app.caches, a.member.org.id, other.client.client_id, {
        type: 'user',
        id: a.member.user.id,
        label: a.member.email,
      }),
      true,
    );

    const done = await dbNow();
    await sleep(ALERT_AFTER_MS);
    await scannedPast('events', await dbNow());
    await sleep(2 * RULES_INTERVAL_MS);
    for (const id of [deleted.id, unsubscribed.id, gone.id, disconnected.id]) assert.deepEqual(await alertsAbout(id), [], id);
    assert.deepEqual(await alertsAbout(other.client.client_id), []);
    const after = smtp.mails.slice(before);
    assert.deepEqual(
      after.map((m) => m.subject),
      [],
      `no e-mail since ${done.toISOString()}`,
    );
  });
});

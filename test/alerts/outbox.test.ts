// The alert outbox and its sender against a real SMTP server in this process:
// who gets an alert, what it says, one e-mail per alert and recipient however
// many senders run, retries while the SMTP server refuses or is away.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createMailer, type Mailer } from '../../src/alerts/mailer.ts';
import { purgeFinishedAlerts } from '../../src/alerts/alert-tasks.ts';
import { claimDueEmails, enqueueAlert, markEmailSent, type NewAlert } from '../../src/alerts/outbox.queries.ts';
import { retryDelaySeconds, sendDueAlerts, LEASE_SECONDS, type AlertSenderOptions } from '../../src/alerts/sender.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, createOrg, type Member } from '../helpers/fixtures.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/webhooks.ts';
import { assertDueAfter, timed } from '../helpers/db-clock.ts';

const BASE_URL = 'https://switchboard.example.test';

describe('alert outbox and sender', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  const mailers: Mailer[] = [];
  let owner: Member;
  let admin: Member;
  let member: Member;
  let ownerOff: Member;
  let inactiveAdmin: Member;
  let otherOwner: Member;

  const sender = (): AlertSenderOptions => {
    const mailer = createMailer(smtp.url, t.config.alertFrom);
    mailers.push(mailer);
    return { pool: t.db.pool, config: t.config, log: pino({ level: 'silent' }), metrics: t.app.metrics, mailer };
  };

  const incident = (organizationId: string, extra: Partial<NewAlert> = {}): NewAlert => {
    const subscriptionId = randomUUID();
    return {
      organizationId,
      kind: 'incident',
      subjectType: 'subscription',
      subjectId: subscriptionId,
      dedupeKey: `incident:${randomUUID()}`,
      details: {
        app: 'Zapier',
        client_id: 'zapier',
        url: 'https://hooks.zapier.example/hooks/standard/123/abc',
        since: '2026-11-27T10:15:00.000Z',
        waiting: 17,
      },
      ...extra,
    };
  };

  const emailRows = async (dedupeKey: string) =>
    (
      await t.db.pool.query<{
        email: string;
        status: string;
        attempts: number;
        last_error: string | null;
        due_at_s: number;
      }>(
        `SELECT e.email, e.status, e.attempts, e.last_error, extract(epoch FROM e.next_attempt_at)::float8 AS due_at_s
           FROM alert_emails e JOIN alerts a ON a.id = e.alert_id WHERE a.dedupe_key = $1 ORDER BY e.email`,
        [dedupeKey],
      )
    ).rows;

  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ env: { SMTP_URL: smtp.url, BASE_URL } });
    owner = await createMember(t.db.pool, { role: 'owner' });
    admin = await createMember(t.db.pool, { org: owner.org, role: 'admin' });
    member = await createMember(t.db.pool, { org: owner.org, role: 'member' });
    ownerOff = await createMember(t.db.pool, { org: owner.org, role: 'owner' });
    inactiveAdmin = await createMember(t.db.pool, { org: owner.org, role: 'admin' });
    await t.db.pool.query('UPDATE users SET active = false WHERE id = $1', [inactiveAdmin.user.id]);
    await t.db.pool.query('INSERT INTO alert_preferences (organization_id, user_id, enabled) VALUES ($1, $2, false)', [
      owner.org.id,
      ownerOff.user.id,
    ]);
    otherOwner = await createMember(t.db.pool, { org: await createOrg(t.db.pool), role: 'owner' });
  });

  after(async () => {
    for (const mailer of mailers) mailer.close();
    await t.close();
    await smtp.stop();
  });

  test('an alert goes to each active owner and admin who has alerts on, once, and says what happened with a link', async () => {
    const alert = incident(owner.org.id);
    assert.equal(await enqueueAlert(t.db.pool, alert), 2);
    // The same alert found again (another worker's rule): nothing more.
    assert.equal(await enqueueAlert(t.db.pool, alert), 0);
    const before = smtp.mails.length;
    assert.equal(await sendDueAlerts(sender()), 2);
    const mails = smtp.mails.slice(before);
    assert.deepEqual(mails.flatMap((m) => m.to).sort(), [admin.email, owner.email].sort());
    for (const unwanted of [member, ownerOff, inactiveAdmin, otherOwner]) assert.equal(smtp.to(unwanted.email).length, 0);
    const mail = mails[0]!;
    assert.equal(mail.from, 'switchboard@switchboard.example.test', 'ALERT_FROM defaults to switchboard@ + the host of BASE_URL');
    assert.match(mail.subject, /Zapier/);
    assert.match(mail.subject, /hooks\.zapier\.example/);
    const link = `${BASE_URL}/ui/webhooks/${alert.subjectId}`;
    assert.ok(mail.text.includes(link), mail.text);
    assert.ok(mail.html.includes(`href="${link}"`), mail.html);
    assert.match(mail.text, /2026-11-27 10:15 UTC/);
    assert.match(mail.text, /17 deliveries are waiting/);
    assert.ok(mail.text.includes(`${BASE_URL}/ui/alerts`), 'the footer says where to turn alerts off');
    assert.match(mail.text, /turn these alerts off/);
    assert.equal(mail.headers.get('auto-submitted'), 'auto-generated');
    assert.deepEqual(
      (await emailRows(alert.dedupeKey)).map((r) => r.status),
      ['sent', 'sent'],
    );
    // Nothing is sent twice.
    assert.equal(await sendDueAlerts(sender()), 0);
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^switchboard_alerts_sent_total [1-9]/m);
    assert.match(metrics, /^switchboard_alerts_waiting 0$/m);
  });

  test('a revoked connection links to the connected apps page', async () => {
    const alert: NewAlert = {
      organizationId: owner.org.id,
      kind: 'revoked',
      subjectType: 'client',
      subjectId: 'zapier',
      dedupeKey: `revoked:${randomUUID()}`,
      details: { app: 'Zapier', client_id: 'zapier', since: '2026-11-27T11:00:00.000Z', reason: 'refresh_reuse', subscriptions: 2 },
    };
    await enqueueAlert(t.db.pool, alert);
    const before = smtp.mails.length;
    await sendDueAlerts(sender());
    const mail = smtp.mails.slice(before).find((m) => m.to.includes(owner.email))!;
    assert.match(mail.subject, /Zapier: connection revoked/);
    assert.ok(mail.text.includes(`${BASE_URL}/connected-apps`));
    assert.match(mail.text, /2 webhook subscriptions stopped/);
  });

  test('while the SMTP server refuses (4xx) or is away, the e-mail waits and is retried with backoff, then sent once', async () => {
    const alert = incident(owner.org.id);
    await enqueueAlert(t.db.pool, alert);
    smtp.refuse = { code: 421, message: 'Too busy, try again later' };
    const refusalsBefore = smtp.refusals;
    let look = await timed(t.db.pool, async () => {
      try {
        await sendDueAlerts(sender());
      } finally {
        smtp.refuse = undefined;
      }
    });
    assert.ok(smtp.refusals > refusalsBefore);
    let rows = await emailRows(alert.dedupeKey);
    for (const row of rows) {
      assert.equal(row.status, 'waiting');
      assert.equal(row.attempts, 1);
      assert.match(row.last_error ?? '', /Too busy/);
      assertDueAfter(row.due_at_s, look, 5, 0.1, 'the first retry');
    }
    // Not due yet: nothing is sent.
    assert.equal(await sendDueAlerts(sender()), 0);
    let metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^switchboard_alerts_waiting 2$/m);
    assert.match(metrics, /^switchboard_alerts_failed_total [1-9]/m);

    // The server away altogether: connection refused, the same.
    await smtp.stop();
    await t.db.pool.query(`UPDATE alert_emails SET next_attempt_at = now() WHERE status = 'waiting'`);
    look = await timed(t.db.pool, async () => {
      try {
        await sendDueAlerts(sender());
      } finally {
        await smtp.start();
      }
    });
    rows = await emailRows(alert.dedupeKey);
    for (const row of rows) {
      assert.equal(row.status, 'waiting');
      assert.equal(row.attempts, 2);
      assertDueAfter(row.due_at_s, look, 10, 0.1, 'the second retry');
    }

    await t.db.pool.query(`UPDATE alert_emails SET next_attempt_at = now() WHERE status = 'waiting'`);
    const before = smtp.mails.length;
    assert.equal(await sendDueAlerts(sender()), 2);
    assert.equal(smtp.mails.length - before, 2);
    assert.deepEqual(
      (await emailRows(alert.dedupeKey)).map((r) => r.status),
      ['sent', 'sent'],
    );
    metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^switchboard_alerts_waiting 0$/m);
  });

  test('the backoff doubles from 5 s up to 30 minutes', () => {
    const middle = () => 0.5;
    assert.deepEqual(
      [1, 2, 3, 4, 10, 20].map((n) => retryDelaySeconds(n, middle)),
      [5, 10, 20, 40, 1800, 1800],
    );
  });

  test('two senders at once send each e-mail once, and neither takes one the other is sending', async () => {
    for (let round = 0; round < 10; round++) {
      const alert = incident(owner.org.id);
      await enqueueAlert(t.db.pool, alert);
      const before = smtp.mails.length;
      // The server answers nothing until both e-mails are on their way, so the senders overlap whatever the machine's load.
      let answer!: () => void;
      smtp.hold = new Promise<void>((resolve) => (answer = resolve));
      let finished = 0;
      const sending = [sendDueAlerts(sender()), sendDueAlerts(sender())].map((p) => p.finally(() => finished++));
      try {
        await waitFor(`round ${round}: both e-mails on their way`, async () => smtp.held === 2);
        const { claimants } = (
          await t.db.pool.query<{ claimants: number }>(
            'SELECT count(DISTINCT e.claim_token)::int AS claimants FROM alert_emails e JOIN alerts a ON a.id = e.alert_id WHERE a.dedupe_key = $1',
            [alert.dedupeKey],
          )
        ).rows[0]!;
        // Each sender claimed one and both are sending at once; or one claimed both, and the other
        // looked and finished while they were claimed and unsent (before, it would have taken them).
        if (claimants === 1) await waitFor(`round ${round}: the sender that claimed nothing finished`, async () => finished === 1);
        else assert.equal(claimants, 2);
      } finally {
        smtp.hold = undefined;
        answer();
      }
      const [a, b] = await Promise.all(sending);
      assert.equal(a! + b!, 2, `round ${round}: the two senders claimed ${a} and ${b}`);
      const mails = smtp.mails.slice(before);
      assert.deepEqual(mails.flatMap((m) => m.to).sort(), [admin.email, owner.email].sort(), `round ${round}`);
    }
  });

  test('an e-mail whose sender died after claiming it waits for the lease, is sent once by another, and the dead one’s mark changes nothing', async () => {
    const alert = incident(otherOwner.org.id);
    await enqueueAlert(t.db.pool, alert);
    const deadToken = randomUUID();
    let claimed: Awaited<ReturnType<typeof claimDueEmails>> = [];
    const look = await timed(t.db.pool, async () => {
      claimed = await claimDueEmails(t.db.pool, deadToken, 10, LEASE_SECONDS);
    });
    assert.equal(claimed.length, 1);
    const [row] = await emailRows(alert.dedupeKey);
    assertDueAfter(row!.due_at_s, look, LEASE_SECONDS, 0, 'claimed: due again only after the lease');
    assert.equal(await sendDueAlerts(sender()), 0, 'no other sender takes a claimed e-mail');
    // The lease has passed.
    await t.db.pool.query(`UPDATE alert_emails SET next_attempt_at = now() WHERE status = 'waiting'`);
    const before = smtp.mails.length;
    assert.equal(await sendDueAlerts(sender()), 1);
    assert.equal(smtp.mails.length - before, 1);
    assert.equal(await markEmailSent(t.db.pool, claimed[0]!, deadToken, '250 late'), false);
    assert.equal(await sendDueAlerts(sender()), 0);
  });

  test('an e-mail waiting for someone who turned alerts off meanwhile is cancelled, not sent', async () => {
    const alert = incident(owner.org.id);
    await enqueueAlert(t.db.pool, alert);
    await t.db.pool.query(
      `INSERT INTO alert_preferences (organization_id, user_id, enabled) VALUES ($1, $2, false)
       ON CONFLICT (organization_id, user_id) DO UPDATE SET enabled = false`,
      [owner.org.id, admin.user.id],
    );
    try {
      const before = smtp.mails.length;
      assert.equal(await sendDueAlerts(sender()), 1);
      assert.deepEqual(
        smtp.mails.slice(before).flatMap((m) => m.to),
        [owner.email],
      );
      assert.deepEqual(
        (await emailRows(alert.dedupeKey)).map((r) => [r.email, r.status]),
        [
          [admin.email, 'cancelled'],
          [owner.email, 'sent'],
        ].sort((x, y) => x[0]!.localeCompare(y[0]!)),
      );
    } finally {
      await t.db.pool.query('DELETE FROM alert_preferences WHERE user_id = $1', [admin.user.id]);
    }
  });

  test('alerts whose e-mails ended more than 90 days ago are removed with them; newer ones and unfinished ones stay', async () => {
    const old = incident(otherOwner.org.id);
    const recent = incident(otherOwner.org.id);
    const waiting = incident(otherOwner.org.id);
    for (const alert of [old, recent, waiting]) await enqueueAlert(t.db.pool, alert);
    await t.db.pool.query(`UPDATE alerts SET recorded_at = now() - interval '91 days' WHERE dedupe_key = $1`, [old.dedupeKey]);
    await t.db.pool.query(`UPDATE alerts SET recorded_at = now() - interval '89 days' WHERE dedupe_key = $1`, [recent.dedupeKey]);
    assert.ok((await purgeFinishedAlerts(t.db.pool)) >= 1);
    const { rows } = await t.db.pool.query<{ dedupe_key: string }>('SELECT dedupe_key FROM alerts WHERE dedupe_key = ANY ($1)', [
      [old.dedupeKey, recent.dedupeKey, waiting.dedupeKey],
    ]);
    assert.deepEqual(rows.map((r) => r.dedupe_key).sort(), [recent.dedupeKey, waiting.dedupeKey].sort());
    assert.equal((await emailRows(old.dedupeKey)).length, 0);
    await t.db.pool.query(`DELETE FROM alerts WHERE dedupe_key = ANY ($1)`, [[recent.dedupeKey, waiting.dedupeKey]]);
  });
});

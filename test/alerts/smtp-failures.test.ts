// What the alert sender does with each kind of SMTP failure, against a real
// SMTP server in this process (docs/interface.md §6.7): a 5xx refusal of the
// recipient or the message gives the e-mail up at once; a 4xx or a refused
// login is retried; an e-mail still unsent 3 days after its alert is given up.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createMailer, type Mailer } from '../../src/alerts/mailer.ts';
import { enqueueAlert, type NewAlert } from '../../src/alerts/outbox.queries.ts';
import { sendDueAlerts, type AlertSenderOptions } from '../../src/alerts/sender.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

describe('alert e-mails: SMTP failures given up or retried', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let owner: Member;
  const mailers: Mailer[] = [];

  const sender = (smtpUrl = smtp.url): AlertSenderOptions => {
    const mailer = createMailer(smtpUrl, t.config.alertFrom);
    mailers.push(mailer);
    return { pool: t.db.pool, config: t.config, log: pino({ level: 'silent' }), metrics: t.app.metrics, mailer };
  };

  const incident = (): NewAlert => ({
    organizationId: owner.org.id,
    kind: 'incident',
    subjectType: 'subscription',
    subjectId: randomUUID(),
    dedupeKey: `incident:${randomUUID()}`,
    details: { app: 'Zapier', client_id: 'zapier', url: 'https://hooks.zapier.example/x', since: new Date().toISOString(), waiting: 1 },
  });

  const emailRow = async (alert: NewAlert) => {
    const { rows } = await t.db.pool.query<{ status: string; attempts: number; last_error: string | null; due_in_s: number }>(
      `SELECT e.status, e.attempts, e.last_error, extract(epoch FROM e.next_attempt_at - now())::float8 AS due_in_s
         FROM alert_emails e JOIN alerts a ON a.id = e.alert_id WHERE a.dedupe_key = $1`,
      [alert.dedupeKey],
    );
    assert.equal(rows.length, 1, 'one recipient');
    return rows[0]!;
  };

  /** Sends what is due with the server refusing as `refuse` says. */
  const sendRefused = async (refuse: TestSmtpServer['refuse'], options = sender()) => {
    const refusals = smtp.refusals;
    smtp.refuse = refuse;
    try {
      await sendDueAlerts(options);
    } finally {
      smtp.refuse = undefined;
    }
    assert.ok(smtp.refusals > refusals, 'the server refused');
  };

  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ env: { SMTP_URL: smtp.url, BASE_URL: 'https://switchboard.example.test' } });
    owner = await createMember(t.db.pool, { role: 'owner' });
  });

  after(async () => {
    for (const mailer of mailers) mailer.close();
    await t.close();
    await smtp.stop();
  });

  for (const refuse of [
    { code: 550, message: 'No such user here', at: 'RCPT TO' as const },
    { code: 554, message: 'Message rejected as spam', at: 'DATA' as const },
  ]) {
    test(`a ${refuse.code} refusal at ${refuse.at} gives the e-mail up at once, and no alert.sent is written`, async () => {
      const alert = incident();
      assert.equal(await enqueueAlert(t.db.pool, alert), 1);
      await sendRefused(refuse);
      const row = await emailRow(alert);
      assert.equal(row.status, 'failed');
      assert.equal(row.attempts, 1);
      assert.match(row.last_error ?? '', new RegExp(refuse.message));
      // Given up: not sent later either.
      await t.db.pool.query(`UPDATE alert_emails SET next_attempt_at = now() WHERE status = 'waiting'`);
      const before = smtp.to(owner.email).length;
      await sendDueAlerts(sender());
      assert.equal(smtp.to(owner.email).length, before);
      const { rows } = await t.db.pool.query(`SELECT 1 FROM audit_events WHERE type = 'alert.sent' AND subject_id = $1`, [alert.subjectId]);
      assert.equal(rows.length, 0, 'nothing was sent');
    });
  }

  test('a refused SMTP login is retried (a setting to fix), and the e-mail goes once the login is right', async () => {
    const alert = incident();
    await enqueueAlert(t.db.pool, alert);
    const wrong = new URL(smtp.url);
    wrong.password = 'not-the-password';
    const refusals = smtp.refusals;
    await sendDueAlerts(sender(wrong.toString()));
    assert.ok(smtp.refusals > refusals, 'the server refused the login');
    const row = await emailRow(alert);
    assert.equal(row.status, 'waiting');
    assert.equal(row.attempts, 1);
    assert.match(row.last_error ?? '', /Invalid username or password|535|auth/i);
    assert.ok(row.due_in_s > 3 && row.due_in_s < 7, `retried ~5 s later, got ${row.due_in_s}`);
    assert.ok(!(row.last_error ?? '').includes('not-the-password'), 'the error names no password');

    await t.db.pool.query(`UPDATE alert_emails SET next_attempt_at = now() WHERE status = 'waiting'`);
    const before = smtp.to(owner.email).length;
    assert.equal(await sendDueAlerts(sender()), 1);
    assert.equal(smtp.to(owner.email).length, before + 1);
    assert.equal((await emailRow(alert)).status, 'sent');
  });

  test('a 5xx refusal of the sender (MAIL FROM) is retried: only the recipient or the message is final', async () => {
    const alert = incident();
    await enqueueAlert(t.db.pool, alert);
    await sendRefused({ code: 553, message: 'Sender address not allowed' });
    const row = await emailRow(alert);
    assert.equal(row.status, 'waiting');
    assert.equal(row.attempts, 1);
    await t.db.pool.query(`UPDATE alert_emails SET next_attempt_at = now() WHERE status = 'waiting'`);
    await sendDueAlerts(sender());
    assert.equal((await emailRow(alert)).status, 'sent');
  });

  test('an e-mail still refused (4xx) 3 days after its alert is given up; one refused before then waits', async () => {
    const old = incident();
    const younger = incident();
    await enqueueAlert(t.db.pool, old);
    await enqueueAlert(t.db.pool, younger);
    await t.db.pool.query(`UPDATE alerts SET created_at = now() - interval '3 days 1 minute' WHERE dedupe_key = $1`, [old.dedupeKey]);
    await t.db.pool.query(`UPDATE alerts SET created_at = now() - interval '2 days 23 hours' WHERE dedupe_key = $1`, [younger.dedupeKey]);
    await sendRefused({ code: 421, message: 'Too busy, try again later' });
    const given = await emailRow(old);
    assert.equal(given.status, 'failed', 'given up after 3 days');
    assert.match(given.last_error ?? '', /Too busy/);
    const waiting = await emailRow(younger);
    assert.equal(waiting.status, 'waiting', 'still retried before 3 days');
    assert.equal(waiting.attempts, 1);
    await t.db.pool.query(`UPDATE alert_emails SET next_attempt_at = now() WHERE status = 'waiting'`);
    await sendDueAlerts(sender());
    assert.equal((await emailRow(younger)).status, 'sent');
    assert.equal((await emailRow(old)).status, 'failed');
  });
});

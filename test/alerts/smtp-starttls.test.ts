// Issue 37, item 3: with a login in an smtp:// SMTP_URL, STARTTLS is required.
// Against real SMTP servers in this process, one offering STARTTLS (the test
// CA's certificate) and one without: the login never goes in clear text; the
// e-mail is given up at once with a line naming SMTP_URL and what to change;
// `?starttls=optional` is the opt-out for a relay on the loopback, and a
// configuration error (exit 78) for any other host.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createMailer, type Mailer } from '../../src/alerts/mailer.ts';
import { enqueueAlert, type NewAlert } from '../../src/alerts/outbox.queries.ts';
import { sendDueAlerts } from '../../src/alerts/sender.ts';
import type { AlertMessage } from '../../src/alerts/templates.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { baseEnv, runCli } from '../helpers/cli.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

const MESSAGE: AlertMessage = { subject: 'STARTTLS test', text: 'hello', html: '<p>hello</p>' };

describe('SMTP_URL with a login: STARTTLS required', () => {
  let withTls: TestSmtpServer;
  let plain: TestSmtpServer;
  let t: TestApp;
  let owner: Member;
  const mailers: Mailer[] = [];
  const mailer = (url: string) => {
    const m = createMailer(url, 'alerts@switchboard.example.test');
    mailers.push(m);
    return m;
  };
  /** The plain server's URL without the loopback opt-out: what a remote relay's SMTP_URL looks like. */
  const plainStrict = () => plain.url.replace('?starttls=optional', '');

  before(async () => {
    withTls = await startSmtpServer({ startTls: true });
    plain = await startSmtpServer();
    t = await startTestApp({ env: { SMTP_URL: plainStrict(), BASE_URL: 'https://switchboard.example.test' } });
    owner = await createMember(t.db.pool, { role: 'owner' });
  });
  after(async () => {
    for (const m of mailers) m.close();
    await t.close();
    await withTls.stop();
    await plain.stop();
  });

  test('a server that offers STARTTLS gets the login over TLS, and the e-mail arrives', async () => {
    assert.ok(!withTls.url.includes('?'), 'no opt-out');
    await mailer(withTls.url).send('ops@example.org', MESSAGE);
    assert.deepEqual(withTls.logins, { total: 1, secure: 1 });
    assert.equal(withTls.to('ops@example.org').length, 1);
  });

  test('a server without STARTTLS gets no login; the e-mail is given up at once with a line naming SMTP_URL and what to change', async () => {
    const alert: NewAlert = {
      organizationId: owner.org.id,
      kind: 'incident',
      subjectType: 'subscription',
      subjectId: randomUUID(),
      dedupeKey: `incident:${randomUUID()}`,
      details: { app: 'Zapier', client_id: 'zapier', url: 'https://hooks.zapier.example/…', since: new Date().toISOString() },
    };
    assert.equal(await enqueueAlert(t.db.pool, alert), 1);
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    await sendDueAlerts({ pool: t.db.pool, config: t.config, log: pino(sink), metrics: t.app.metrics, mailer: mailer(plainStrict()) });
    assert.deepEqual(plain.logins, { total: 0, secure: 0 }, 'the password never left');
    assert.equal(plain.mails.length, 0);
    const { rows } = await t.db.pool.query<{ status: string; attempts: number; last_error: string }>(
      'SELECT e.status, e.attempts, e.last_error FROM alert_emails e JOIN alerts a ON a.id = e.alert_id WHERE a.dedupe_key = $1',
      [alert.dedupeKey],
    );
    assert.deepEqual(
      rows.map((r) => [r.status, r.attempts]),
      [['failed', 1]],
    );
    const line = lines.find((l) => l.msg === 'alert e-mail given up');
    assert.ok(line, JSON.stringify(lines));
    assert.equal(line.level, 40, 'a warning');
    assert.match(String(line.err), /does not offer STARTTLS.*SMTP_URL.*smtps:\/\/.*\?starttls=optional/);
    assert.ok(!JSON.stringify(lines).includes('smtp-secret-p4ss'), 'no password in the log');
    assert.match(rows[0]!.last_error, /SMTP_URL/);
  });

  test('?starttls=optional on the loopback sends over plain SMTP', async () => {
    const before = plain.logins.total;
    await mailer(plain.url).send('relay@example.org', MESSAGE);
    assert.equal(plain.logins.total, before + 1);
    assert.equal(plain.to('relay@example.org').length, 1);
  });

  test('?starttls=optional with a host other than the loopback, or another query parameter, is a configuration error (exit 78)', async () => {
    for (const [smtpUrl, named] of [
      ['smtp://alerts:pw@mail.example.com:587?starttls=optional', /starttls=optional.*not mail\.example\.com/],
      ['smtp://alerts:pw@10.0.0.5:25?starttls=optional', /not 10\.0\.0\.5/],
      ['smtp://alerts:pw@127.0.0.1:25?requireTLS=false', /unknown query parameter "requireTLS"/],
    ] as const) {
      const result = await runCli(['alerts', 'test', '--org', owner.org.id], baseEnv({ DATABASE_URL: t.db.url, SMTP_URL: smtpUrl }));
      assert.equal(result.code, 78, result.stderr);
      assert.match(result.stderr, /SMTP_URL/);
      assert.match(result.stderr, named);
      assert.ok(!result.stderr.includes(':pw@'), 'the password is not echoed');
    }
  });
});

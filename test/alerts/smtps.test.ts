// An `smtps://` SMTP_URL (README, configuration): TLS from the first byte, the
// login and the e-mail inside it, against a real SMTP server in this process
// that speaks nothing but TLS (the test CA's certificate for the loopback).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createMailer, type Mailer } from '../../src/alerts/mailer.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

describe('SMTP_URL smtps://', () => {
  let smtp: TestSmtpServer;
  const mailers: Mailer[] = [];
  const mailer = (url: string) => {
    const m = createMailer(url, 'alerts@switchboard.example.test');
    mailers.push(m);
    return m;
  };
  before(async () => {
    smtp = await startSmtpServer({ implicitTls: true });
  });
  after(async () => {
    for (const m of mailers) m.close();
    await smtp.stop();
  });

  test('the e-mail and the login go over TLS from the first byte', async () => {
    assert.match(smtp.url, /^smtps:\/\//);
    const answer = await mailer(smtp.url).send('owner@example.com', { subject: 'Over smtps', text: 'hello', html: '<p>hello</p>' });
    assert.match(answer, /^250/);
    assert.deepEqual(smtp.logins, { total: 1, secure: 1 });
    assert.deepEqual(
      smtp.to('owner@example.com').map((m) => m.subject),
      ['Over smtps'],
    );
  });
});

// `switchboard alerts test --org ID [--to ADDRESS]` through the real
// executable, against a real SMTP server in this process: it prints the SMTP
// server's answer, and a refusal with exit 1; a bad SMTP_URL is named at start.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli, baseEnv } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

describe('switchboard alerts test', () => {
  let db: TestDatabase;
  let smtp: TestSmtpServer;
  let owner: Member;
  let admin: Member;
  let member: Member;
  const env = (extra: Record<string, string> = {}) =>
    baseEnv({ DATABASE_URL: db.url, SMTP_URL: smtp.url, BASE_URL: 'https://switchboard.example.test', ...extra });

  before(async () => {
    db = await createTestDatabase();
    smtp = await startSmtpServer();
    owner = await createMember(db.pool, { role: 'owner' });
    admin = await createMember(db.pool, { org: owner.org, role: 'admin' });
    member = await createMember(db.pool, { org: owner.org, role: 'member' });
  });
  after(async () => {
    await smtp.stop();
    await db.drop();
  });

  test('--to sends one test e-mail there and prints the SMTP server’s answer', async () => {
    const result = await runCli(['alerts', 'test', '--org', owner.org.id, '--to', 'ops@example.org'], env());
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^ops@example\.org: sent: 250 /m);
    const mails = smtp.to('ops@example.org');
    assert.equal(mails.length, 1);
    assert.match(mails[0]!.subject, /Test alert for /);
    assert.equal(mails[0]!.from, 'switchboard@switchboard.example.test');
    assert.match(mails[0]!.text, /turn these alerts off/);
  });

  test('without --to it goes to the organization’s owners and admins (--json: each answer)', async () => {
    const result = await runCli(['alerts', 'test', '--org', owner.org.id, '--json'], env({ ALERT_FROM: 'alerts@example.org' }));
    assert.equal(result.code, 0, result.stderr);
    const { results } = JSON.parse(result.stdout) as { results: { to: string; sent: boolean; response: string }[] };
    assert.deepEqual(results.map((r) => r.to).sort(), [admin.email, owner.email].sort());
    for (const r of results) {
      assert.equal(r.sent, true);
      assert.match(r.response, /^250 /);
    }
    assert.equal(smtp.to(member.email).length, 0);
    assert.equal(smtp.to(owner.email).at(-1)!.from, 'alerts@example.org');
  });

  test('a refusal is printed with the server’s answer, and the command exits 1', async () => {
    smtp.refuse = { code: 550, message: 'Relaying denied for this sender' };
    try {
      const result = await runCli(['alerts', 'test', '--org', owner.org.id, '--to', 'ops@example.org'], env());
      assert.equal(result.code, 1);
      assert.match(result.stdout, /ops@example\.org: NOT sent: .*550.*Relaying denied/);
      assert.match(result.stderr, /1 of 1 test e-mails not sent/);
    } finally {
      smtp.refuse = undefined;
    }
  });

  test('a wrong password in SMTP_URL is the server’s refusal, printed without the password', async () => {
    const wrong = smtp.url.replace('smtp-secret-p4ss', 'wrong-pass-123');
    const result = await runCli(['alerts', 'test', '--org', owner.org.id, '--to', 'ops@example.org'], env({ SMTP_URL: wrong }));
    assert.equal(result.code, 1);
    assert.match(result.stdout, /NOT sent: .*(535|Invalid)/);
    assert.ok(!`${result.stdout}${result.stderr}`.includes('wrong-pass-123'));
  });

  test('without SMTP_URL, or with a bad one, it says so (a bad one named at start, exit 78)', async () => {
    const unset = await runCli(['alerts', 'test', '--org', owner.org.id], env({ SMTP_URL: '' }));
    assert.equal(unset.code, 2);
    assert.equal(unset.stderr, 'switchboard: SMTP_URL is not set: alerts are not sent\n');
    const bad = await runCli(['alerts', 'test', '--org', owner.org.id], env({ SMTP_URL: 'mail.example.com:25' }));
    assert.equal(bad.code, 78);
    assert.match(bad.stderr, /^switchboard: SMTP_URL: must use smtp: or smtps:\n$/);
  });

  test('a bad --org or --to is a usage error', async () => {
    const org = await runCli(['alerts', 'test', '--org', 'nope'], env());
    assert.equal(org.code, 2);
    assert.match(org.stderr, /--org must be a UUID/);
    const to = await runCli(['alerts', 'test', '--org', owner.org.id, '--to', 'a@b, c@d'], env());
    assert.equal(to.code, 2);
    assert.match(to.stderr, /--to must be one e-mail address/);
  });
});

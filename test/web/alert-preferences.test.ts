// The alert e-mail preference page and the open-incident banner over real
// HTTP: an owner or admin turns their own alerts off and on in one
// organization; a member has none to turn; without SMTP_URL the home page
// shows open incidents above everything.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { alertRecipients } from '../../src/alerts/preferences.queries.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { hiddenInputs } from '../helpers/user-agent.ts';
import { signedInAgent } from '../helpers/web.ts';
import { connectPlatform, subscribeHook, WEBHOOK_TEST_ENV } from '../helpers/webhooks.ts';

describe('alert preferences and the incident banner', () => {
  let t: TestApp;
  let withSmtp: TestApp;
  before(async () => {
    t = await startTestApp({ listen: true, env: WEBHOOK_TEST_ENV });
    withSmtp = await startTestApp({ listen: true, db: t.db, env: { ...WEBHOOK_TEST_ENV, SMTP_URL: 'smtp://127.0.0.1:9' } });
  });
  after(async () => {
    await withSmtp.close();
    await t.close();
  });

  test('an admin turns their own alerts off, then on again, in this organization only', async () => {
    const owner = await createMember(t.db.pool, { role: 'owner' });
    const admin = await createMember(t.db.pool, { org: owner.org, role: 'admin' });
    // The same person is also an admin of a second organization: that one keeps its alerts.
    const second = await createMember(t.db.pool, { role: 'owner' });
    await t.db.pool.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'admin')`, [
      second.org.id,
      admin.user.id,
    ]);
    const agent = await signedInAgent(withSmtp.url, admin.email);
    let page = await agent.get('/ui/alerts');
    assert.equal(page.status, 200);
    assert.match(page.body, /<strong id="alerts-state">on<\/strong>/);
    assert.doesNotMatch(page.body, /no SMTP server configured/);
    const off = await agent.post('/ui/alerts', hiddenInputs(page.body, '/ui/alerts'));
    assert.deepEqual([off.status, off.location], [303, '/ui/alerts?saved=1']);
    page = await agent.get('/ui/alerts?saved=1');
    assert.match(page.body, /Alert e-mails turned off\./);
    assert.match(page.body, /<strong id="alerts-state">off<\/strong>/);
    assert.deepEqual((await alertRecipients(t.db.pool, owner.org.id))!.emails, [owner.email]);
    assert.deepEqual((await alertRecipients(t.db.pool, second.org.id))!.emails.sort(), [admin.email, second.email].sort());

    const on = await agent.post('/ui/alerts', hiddenInputs(page.body, '/ui/alerts'));
    assert.equal(on.status, 303);
    assert.match((await agent.get('/ui/alerts')).body, /<strong id="alerts-state">on<\/strong>/);
    assert.deepEqual((await alertRecipients(t.db.pool, owner.org.id))!.emails.sort(), [admin.email, owner.email].sort());
  });

  test('a member has no alerts to turn; a post without the CSRF token or with a bad value changes nothing', async () => {
    const owner = await createMember(t.db.pool, { role: 'owner' });
    const member = await createMember(t.db.pool, { org: owner.org, role: 'member' });
    const memberAgent = await signedInAgent(t.url, member.email);
    const page = await memberAgent.get('/ui/alerts');
    assert.equal(page.status, 200);
    assert.match(page.body, /Only the organization's owners and admins get alert e-mails/);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const refused = await memberAgent.post('/ui/alerts', { csrf, enabled: 'false' });
    assert.equal(refused.status, 403);

    const ownerAgent = await signedInAgent(t.url, owner.email);
    const ownerPage = await ownerAgent.get('/ui/alerts');
    assert.match(ownerPage.body, /no SMTP server configured/);
    assert.equal((await ownerAgent.post('/ui/alerts', { enabled: 'false' })).status, 403);
    const ownerCsrf = /name="csrf" value="([^"]+)"/.exec(ownerPage.body)![1]!;
    assert.equal((await ownerAgent.post('/ui/alerts', { csrf: ownerCsrf, enabled: 'maybe' })).status, 400);
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM alert_preferences WHERE organization_id = $1', [owner.org.id]);
    assert.equal(rows[0].n, 0);
  });

  test('without SMTP_URL the home page shows open incidents as a banner; with it, or with every circuit closed, none', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/broken' });
    const agent = await signedInAgent(t.url, org.member.email);
    assert.doesNotMatch((await agent.get('/')).body, /id="incident-banner"/);
    await t.db.pool.query(
      `UPDATE webhook_subscriptions SET circuit_state = 'open', circuit_opens = 1, circuit_changed_at = now() - interval '2 hours',
              circuit_retry_at = now() + interval '10 minutes', consecutive_failures = 8, failing_since = now() - interval '2 hours'
        WHERE id = $1`,
      [hook.id],
    );
    const home = (await agent.get('/')).body;
    const banner = /<div class="warning banner" role="alert" id="incident-banner">([\s\S]*?)<\/div>/.exec(home)?.[1];
    assert.ok(banner, 'the banner is shown');
    assert.match(banner, new RegExp(`href="/ui/webhooks/${hook.id}"`));
    assert.match(banner, /No alert e-mails are sent/);
    const smtpAgent = await signedInAgent(withSmtp.url, org.member.email);
    assert.doesNotMatch((await smtpAgent.get('/')).body, /id="incident-banner"/);
  });
});

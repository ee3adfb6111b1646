// Personal data stays where it belongs (docs/interface.md §12): after a run
// with every call field set (create, complete, search, a delivery's audit
// trail, a database error, an alert e-mail about the call's subscription), no
// log line, audit detail, exported span (name, attribute, event or resource)
// or alert e-mail holds a phone number, the transcript or the recording URL;
// the logged URL masks the numbers, and a PostgreSQL error's `detail` (the
// failing row) is not logged. Spans go over OTLP http/json to a receiver in
// this process, so the check reads every byte exported.
// @own-test-process: it registers OpenTelemetry's global tracer provider, which a process takes once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createMailer, type Mailer } from '../../src/alerts/mailer.ts';
import { alertFailingSubscriptions } from '../../src/alerts/rules.ts';
import { sendDueAlerts } from '../../src/alerts/sender.ts';
import { startTracing, stopTracing } from '../../src/tracing/start-tracing.ts';
import { recordOutcomes } from '../../src/webhooks/worker/record.queries.ts';
import type { TestApp } from '../helpers/app.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import { answeredOutcome, claimDueDeliveries, connectPlatform, startWebhookApp, subscribeHook } from '../helpers/webhooks.ts';

const SECRETS = ['442079460123', '4155550199', 'Secret transcript words', 'recordings.example/private-7'];

describe('personal data in logs, audit details, spans and alert e-mails', () => {
  let t: TestApp;
  let receiver: OtlpReceiver;
  let smtp: TestSmtpServer;
  let mailer: Mailer;
  const savedEnv = { ...process.env };

  before(async () => {
    receiver = await startOtlpReceiver();
    smtp = await startSmtpServer();
    // The exporter and its batch processor read these when tracing starts; the app is built after it, with its spans.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
    assert.ok(await startTracing({ exporters: ['otlp'], protocol: 'http/json' }));
    t = await startWebhookApp({ SMTP_URL: smtp.url });
    mailer = createMailer(smtp.url, t.config.alertFrom);
  });
  after(async () => {
    mailer.close();
    await t.close();
    await stopTracing();
    await receiver.close();
    await smtp.stop();
    process.env = savedEnv;
  });

  test('a run with every field set leaves no number, transcript or recording URL in logs, audit details, spans or e-mails', async () => {
    const org = await connectPlatform(t);
    const headers = { 'x-user-token': org.member.token };
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/pii', filters: { direction: 'inbound' } });
    const details = {
      direction: 'inbound',
      from_number: '+44 20 7946 0123',
      to_number: '+1 415 555 0199',
      recording_url: 'https://recordings.example/private-7',
      transcript: 'Secret transcript words',
      metadata: { ref: 'x' },
    };
    const created = await t.app.inject({ method: 'POST', url: '/calls', headers, payload: details });
    assert.equal(created.statusCode, 201);
    const done = await t.app.inject({
      method: 'POST',
      url: `/calls/${created.json().id}/complete`,
      headers,
      payload: { ...details, summary: 's', duration_seconds: 3 },
    });
    assert.equal(done.statusCode, 200);
    for (const query of ['number=%2B442079460123', 'from_number=+442079460123', 'to_number=%2B14155550199', 'number=bad4155550199']) {
      await t.app.inject({ url: `/calls?${query}`, headers });
    }
    await t.app.inject({ url: '/calls/recent?direction=inbound', headers: org.headers });
    // A database error whose detail quotes the row, logged as the app logs errors.
    const failure = await t.db.pool
      .query(`UPDATE calls SET transcript = repeat('Secret transcript words', 3000) WHERE id = $1::uuid`, [created.json().id])
      .then(() => ({}))
      .catch((error: unknown) => error as Error & { detail?: string });
    assert.match(String((failure as { detail?: string }).detail), /Failing row contains/);
    t.app.log.error({ err: failure }, 'a statement failed');

    // The call's delivery fails for good (its receiver answers 404) with the circuit closed: the "failing" alert e-mail.
    const claimed = await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 10_000 });
    assert.deepEqual(
      claimed.map((c) => c.subscription_id),
      [hook.id],
      'the call made one delivery, to the subscription',
    );
    await recordOutcomes(t.db.pool, {
      records: claimed.map((c) => ({
        ...answeredOutcome(c, 404),
        outcome: 'failed' as const,
        status: 'failed' as const,
        nextAttemptAt: null,
      })),
      disableAfterMs: 5 * 86_400_000,
      policy: { maxInFlight: 10, breakerThreshold: 1000, breakerWaitsMs: [0] },
    });
    assert.notEqual(await alertFailingSubscriptions(t.db.pool), undefined);
    const senderOptions = { pool: t.db.pool, config: t.config, log: pino({ level: 'silent' }), metrics: t.app.metrics, mailer };
    while ((await sendDueAlerts(senderOptions)) > 0) {}
    const mails = smtp.to(org.member.email);
    assert.equal(mails.length, 1, 'one alert e-mail about the subscription');
    assert.match(mails[0]!.subject, /failed for good/);
    const mail = JSON.stringify(mails.map((m) => ({ subject: m.subject, text: m.text, html: m.html, headers: [...m.headers] })));

    await stopTracing(); // exports every span that waits
    const spans = await receiver.spans();
    assert.ok(
      spans.some((span) => span.name === 'POST /calls/:id/complete'),
      `the completion's server span was exported (${[...new Set(spans.map((span) => span.name))].join(', ')})`,
    );
    assert.ok(
      spans.some((span) => span.name === 'GET /calls'),
      'the searches were exported',
    );
    const exported = receiver.exports.map((e) => e.body.toString('utf8')).join('\n');

    const logs = t.logs.join('');
    assert.match(logs, /number=\[redacted\]/, 'the search was logged, masked');
    assert.match(logs, /calls_transcript_check/, 'the failure was logged by its constraint');
    const { rows } = await t.db.pool.query<{ details: unknown }>('SELECT details FROM audit_events WHERE organization_id = $1', [
      org.member.org.id,
    ]);
    assert.ok(rows.length > 0, 'the run wrote audit events');
    const audit = JSON.stringify(rows);
    for (const secret of SECRETS) {
      assert.ok(!logs.includes(secret), `logs hold ${secret}`);
      assert.ok(!audit.includes(secret), `audit details hold ${secret}`);
      assert.ok(!exported.includes(secret), `exported spans hold ${secret}`);
      assert.ok(!mail.includes(secret), `the alert e-mail holds ${secret}`);
    }
    assert.ok(!logs.includes('Failing row'), 'no PostgreSQL detail');
  });
});

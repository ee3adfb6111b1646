// Personal data stays where it belongs (docs/interface.md §12): after a run
// with every call field set (create, complete, search, a delivery's audit
// trail, a database error), no log line and no audit detail holds a phone
// number, the transcript or the recording URL; the logged URL masks the
// numbers, and a PostgreSQL error's `detail` (the failing row) is not logged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { connectPlatform, startWebhookApp, subscribeHook } from '../helpers/webhooks.ts';

const SECRETS = ['442079460123', '4155550199', 'Secret transcript words', 'recordings.example/private-7'];

describe('personal data in logs and audit details', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  test('a run with every field set leaves no number, transcript or recording URL in logs or audit details', async () => {
    const org = await connectPlatform(t);
    const headers = { 'x-user-token': org.member.token };
    await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/pii', filters: { direction: 'inbound' } });
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
    }
    assert.ok(!logs.includes('Failing row'), 'no PostgreSQL detail');
  });
});

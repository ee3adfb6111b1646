// The circuit breaker in the server-rendered pages: a subscription's page
// states the circuit, since when, the next probe and the concurrency limit,
// with a line over its delivery charts and the opening hour marked; the
// webhooks list and the home page badge an open or probing circuit. States are
// written with SQL on the owner connection (no delivery worker runs).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import type { UserAgent } from '../helpers/user-agent.ts';
import { signedInAgent } from '../helpers/web.ts';
import { connectPlatform, subscribeHook, WEBHOOK_TEST_ENV, type Connection } from '../helpers/webhooks.ts';

const utc = (date: Date) => `${date.toISOString().replace('T', ' ').slice(0, 19)} UTC`;

describe('the circuit breaker on the webhook pages', () => {
  let t: TestApp;
  let org: Connection;
  let agent: UserAgent;
  let open: { id: string; since: Date; retryAt: Date };
  let probing: { id: string; since: Date; retryAt: Date };
  let healthy: string;

  /** Opens a circuit as the recorder would; returns the times it stored. */
  async function trip(id: string, retryIn: string) {
    const { rows } = await t.db.pool.query<{ since: Date; retry_at: Date }>(
      `UPDATE webhook_subscriptions
          SET circuit_state = 'open', circuit_changed_at = now() - interval '20 minutes', circuit_retry_at = now() + $2::interval,
              circuit_opens = 1, consecutive_failures = 6, concurrency_limit = 1, failing_since = now() - interval '25 minutes'
        WHERE id = $1
       RETURNING circuit_changed_at AS since, circuit_retry_at AS retry_at`,
      [id, retryIn],
    );
    return { id, since: rows[0]!.since, retryAt: rows[0]!.retry_at };
  }

  before(async () => {
    t = await startTestApp({ listen: true, env: WEBHOOK_TEST_ENV });
    org = await connectPlatform(t);
    open = await trip((await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/open-circuit' })).id, '30 minutes');
    probing = await trip((await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/probing-circuit' })).id, '-1 minute');
    healthy = (await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/healthy' })).id;
    await t.db.pool.query('UPDATE webhook_subscriptions SET concurrency_limit = 4 WHERE id = $1', [healthy]);
    agent = await signedInAgent(t.url, org.member.email);
  });
  after(() => t.close());

  const facts = (body: string) => /<dl class="facts">([\s\S]*?)<\/dl>/.exec(body)![1]!.replace(/\s+/g, ' ');

  test('an open circuit: its page says since when, the next probe and the concurrency limit, over the charts and in them', async () => {
    const page = await agent.get(`/ui/webhooks/${open.id}`);
    assert.equal(page.status, 200);
    assert.match(
      page.body,
      /<h1>Webhook subscription <span class="badge warn"[^>]*>Failing<\/span><span class="badge bad"[^>]*>Sending paused<\/span><\/h1>/,
    );
    const dl = facts(page.body);
    assert.ok(
      dl.includes(
        `<dt>Sending</dt><dd>Sending paused after repeated failures <span class="muted">(circuit open since ${utc(open.since)})</span></dd>`,
      ),
      dl,
    );
    assert.ok(dl.includes(`<dt>Next try</dt><dd>${utc(open.retryAt)}</dd>`), dl);
    assert.ok(dl.includes('<dt>Failures in a row</dt><dd>6</dd>'), dl);
    assert.ok(dl.includes('<dt>Concurrency limit</dt><dd>1 attempt at a time (one more per healthy answer, up to 10)</dd>'), dl);

    const health = /<section class="card" aria-labelledby="health-title">([\s\S]*?)<\/section>/.exec(page.body)![1]!;
    assert.ok(
      health.includes(
        `<p class="circuit error">Sending is paused: this URL kept failing (circuit open since ${utc(open.since)}). The next try is at ${utc(open.retryAt)}; nothing is sent to this URL until then.</p>`,
      ),
      health,
    );
    // The hourly chart marks the hour it opened, and its text alternative says so.
    const hourly = /<svg[^>]*aria-labelledby="attempts-hourly-title attempts-hourly-desc"[\s\S]*?<\/svg>/.exec(health)![0];
    const hour = `${open.since.toISOString().slice(0, 13).replace('T', ' ')}:00 UTC`;
    assert.match(
      hourly,
      new RegExp(
        `<desc id="attempts-hourly-desc">No delivery attempts in the last 24 hours\\. The circuit opened in the hour of ${hour} \\(marked with a dashed line\\) and is still open\\.</desc>`,
      ),
    );
    assert.match(
      hourly,
      new RegExp(
        `<g class="mark"><title>Circuit opened ${utc(open.since)}</title><line [^>]*></line><text [^>]*>circuit opened</text></g>`,
      ),
    );
    const daily = /<svg[^>]*aria-labelledby="attempts-daily-title attempts-daily-desc"[\s\S]*?<\/svg>/.exec(health)![0];
    assert.match(daily, /<g class="mark">/);
  });

  test('a probing circuit: the wait is over and the next attempt is a probe', async () => {
    const page = await agent.get(`/ui/webhooks/${probing.id}`);
    assert.match(page.body, /<span class="badge warn"[^>]*>Testing URL<\/span><\/h1>/);
    const dl = facts(page.body);
    assert.ok(
      dl.includes(
        `<dt>Sending</dt><dd>Testing the URL with one delivery <span class="muted">(circuit probing, open since ${utc(probing.since)})</span></dd>`,
      ),
      dl,
    );
    assert.ok(dl.includes(`<dt>Next try</dt><dd>Now: the pause ended at ${utc(probing.retryAt)}</dd>`), dl);
    assert.ok(
      page.body.includes(
        `<p class="circuit warning">Testing this URL: the pause ended at ${utc(probing.retryAt)}, so the next attempt is a single test delivery (circuit probing, open since ${utc(probing.since)}); a healthy answer resumes normal sending.</p>`,
      ),
    );
    assert.match(page.body, /and is probing\.<\/desc>/);
  });

  test('a closed circuit: delivering normally, in those words; no badge, no line and no mark; the limit it has now', async () => {
    const page = await agent.get(`/ui/webhooks/${healthy}`);
    assert.match(page.body, /<h1>Webhook subscription <span class="badge ok">Active<\/span><\/h1>/);
    const dl = facts(page.body);
    assert.ok(dl.includes('<dt>Sending</dt><dd>Delivering normally <span class="muted">(circuit closed)</span></dd>'), dl);
    assert.ok(!dl.includes('Next try'));
    assert.ok(dl.includes('<dt>Concurrency limit</dt><dd>4 attempts at a time (one more per healthy answer, up to 10)</dd>'), dl);
    assert.doesNotMatch(page.body, /class="circuit |class="mark"|Sending paused|circuit open/);
  });

  test('the webhooks list and the home page badge open and probing circuits, saying since when', async () => {
    const list = await agent.get('/ui/webhooks');
    const row = (id: string) => new RegExp(`<tr>\\s*<td class="wrap"><a href="/ui/webhooks/${id}">[\\s\\S]*?</tr>`).exec(list.body)![0];
    assert.match(row(open.id), /Sending paused<\/span><br><span class="muted">sending paused since [^<]* \(circuit open\), next try at /);
    assert.ok(row(open.id).includes(`sending paused since ${utc(open.since)} (circuit open), next try at ${utc(open.retryAt)}`));
    assert.match(
      row(probing.id),
      />Testing URL<\/span><br><span class="muted">testing the URL with one delivery \(circuit probing, open since [^<]*\)/,
    );
    assert.doesNotMatch(row(healthy), /Sending paused|Testing URL/);

    // On home, an open circuit needs attention even before the subscription counts as failing.
    await t.db.pool.query('UPDATE webhook_subscriptions SET failing_since = NULL WHERE id = $1', [open.id]);
    const home = await agent.get('/');
    const attention = /<section class="card" aria-labelledby="attention">([\s\S]*?)<\/section>/.exec(home.body)![1]!;
    assert.match(
      attention,
      new RegExp(
        `href="/ui/webhooks/${open.id}"[^<]*</a> <span class="badge ok">Active</span><span class="badge bad"[^>]*>Sending paused</span>`,
      ),
    );
    assert.ok(
      attention.includes(`Zap Platform · sending paused since ${utc(open.since)} (circuit open), next try at ${utc(open.retryAt)}`),
      attention,
    );
    assert.match(
      attention,
      new RegExp(
        `href="/ui/webhooks/${probing.id}"[\\s\\S]*?Testing URL[\\s\\S]*?failing since [^;<]*; testing the URL with one delivery \\(circuit probing, open since`,
      ),
    );
    assert.doesNotMatch(attention, new RegExp(healthy));
  });
});

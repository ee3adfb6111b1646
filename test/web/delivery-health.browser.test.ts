// Delivery health as an admin sees it in headless Chromium (no JavaScript):
// the dashboard and its charts on real data, a subscription's charts and last
// error, Recover sending failed deliveries to a real HTTPS receiver, and the
// calls filters, pages and CSV export.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, screenshot, signedInBrowser, SKIP_WITHOUT_BROWSER } from '../helpers/browser.ts';
import { seedTour, type Tour } from '../helpers/ui-tour.ts';
import { barrierDelivery, deliveriesOf, settled, startDeliveryRig, waitFor, type DeliveryRig } from '../helpers/webhooks.ts';

describe('delivery health in headless Chromium', { skip: SKIP_WITHOUT_BROWSER }, () => {
  let rig: DeliveryRig;
  let browser: Browser;
  let tour: Tour;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    rig = await startDeliveryRig({ listen: true });
    browser = await launchChromium();
    tour = await seedTour(rig);
    ({ context, page } = await signedInBrowser(browser, rig.t.url, tour.data.email));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await rig?.close();
  });

  const countCalls = async (where = 'true', params: unknown[] = []) => {
    const { rows } = await rig.t.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM calls WHERE organization_id = $1 AND ${where}`,
      [tour.data.org.id, ...params],
    );
    return rows[0]!.n;
  };

  test('the home page charts calls per day and the last 24 hours of deliveries, with text alternatives, and lists what needs attention', async () => {
    await page.goto(`${rig.t.url}/`);
    const calls = page.locator('svg[role=img]', { has: page.locator('title', { hasText: 'Calls per day, last 30 days' }) });
    assert.equal(await calls.count(), 1);
    const total = await countCalls("created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '29 days'");
    assert.ok(total >= 60);
    const desc = (await calls.locator('desc').textContent()) ?? '';
    assert.match(desc, new RegExp(`^${total} calls in the last 30 days`));
    assert.equal(await calls.getAttribute('aria-labelledby'), 'calls-per-day-title calls-per-day-desc');
    assert.ok((await calls.locator('rect').count()) >= 20, 'one bar per day with calls');
    // The same numbers as a table: 30 days summing to the total.
    const cells = await page.locator('figure.chart', { has: calls }).locator('tbody td').allTextContents();
    assert.equal(cells.length, 30);
    assert.equal(
      cells.reduce((a, c) => a + Number(c), 0),
      total,
    );

    const deliveries = page.locator('svg[role=img]', {
      has: page.locator('title', { hasText: 'Deliveries in the last 24 hours by outcome' }),
    });
    assert.equal(
      await deliveries.locator('desc').textContent(),
      '4 deliveries in the last 24 hours: 2 delivered, 0 pending or retrying, 2 failed.',
    );
    assert.match((await page.locator('ul.legend.counts').textContent()) ?? '', /Delivered 2.*Retrying 0.*Failed 2/s);

    const attention = page.locator('section[aria-labelledby=attention]');
    assert.equal(await attention.locator('li').count(), 1, 'the failing subscription, not the healthy one');
    // Six 503s in a row opened its circuit (the worker's breaker), and it says so.
    assert.match(
      (await attention.textContent()) ?? '',
      /failing-crm-endpoint.*Failing\s*(Sending paused|Testing URL).*Zap Platform.*failing since .*; (sending paused since|testing the URL)/s,
    );
    assert.match((await page.locator('section[aria-labelledby=apps]').textContent()) ?? '', /Zap Platform/);
    await screenshot(page, 'home');

    await attention.locator('a').click();
    await page.waitForURL(new RegExp(`/ui/webhooks/${tour.failingHookId}$`));
  });

  test('a subscription shows outcomes per hour and per day, latency and the last error in words; Recover sends its failed deliveries again', async () => {
    const base = `${rig.t.url}/ui/webhooks/${tour.failingHookId}`;
    await page.goto(base);
    const hourly = page.locator('svg[role=img]', { has: page.locator('title', { hasText: 'Delivery attempts per hour, last 24 hours' }) });
    // Its six failures in a row opened the circuit: over the charts, in them (a dashed line at that hour) and in their text.
    const {
      rows: [circuit],
    } = await rig.t.db.pool.query<{ since: Date }>('SELECT circuit_changed_at AS since FROM webhook_subscriptions WHERE id = $1', [
      tour.failingHookId,
    ]);
    const hour = `${circuit!.since.toISOString().slice(0, 13).replace('T', ' ')}:00 UTC`;
    assert.match(
      (await hourly.locator('desc').textContent()) ?? '',
      new RegExp(
        `^6 attempts in the last 24 hours: 0 succeeded, 4 failed and will be retried, 2 failed for good\\. The circuit opened in the hour of ${hour} \\(marked with a dashed line\\) and is (still open|probing)\\.$`,
      ),
    );
    assert.equal(await hourly.locator('g.mark line').count(), 1);
    assert.equal(await hourly.locator('g.mark text').textContent(), 'circuit opened');
    assert.ok(await hourly.locator('g.mark text').isVisible());
    assert.match(
      (await page.locator('p.circuit').textContent()) ?? '',
      /^(Sending is paused: this URL kept failing \(circuit open since|Testing this URL: the pause ended at) \d{4}-\d\d-\d\d [\d:]+ UTC/,
    );
    assert.match(
      (await page.locator('dl.facts').textContent()) ?? '',
      /Sending\s*(Sending paused after repeated failures \(circuit open since|Testing the URL with one delivery \(circuit probing, open since) .*Failures in a row\s*[5-9]\s*Concurrency limit\s*1 attempt at a time/s,
    );
    assert.match((await page.locator('h1').textContent()) ?? '', /Failing\s*(Sending paused|Testing URL)/);
    const daily = page.locator('svg[role=img]', { has: page.locator('title', { hasText: 'Delivery attempts per day, last 7 days' }) });
    assert.match((await daily.locator('desc').textContent()) ?? '', /^6 attempts in the last 7 days/);
    assert.equal(await page.locator('figure.chart', { has: daily }).locator('tbody tr').count(), 7);
    assert.match((await page.locator('dl.stats').textContent()) ?? '', /24 h p50\s*\d+ ms.*24 h p95\s*\d+ ms/s);
    assert.match(
      (await page.locator('.last-error').textContent()) ?? '',
      /The receiver answered 503 Service Unavailable, an error on its side\..*back in five minutes/s,
    );
    assert.match((await page.locator('#recover-title + p').textContent()) ?? '', /2 deliveries failed for good/);

    // A time beyond the log's retention is refused beside the field, and nothing is queued.
    await page.fill('#since', '2020-01-01T00:00');
    await page.click('button:has-text("Recover")');
    await page.waitForURL(/recover=old/);
    assert.match((await page.locator('#since-error').textContent()) ?? '', /within the last 30 days/);
    assert.equal(await page.locator('#since').getAttribute('aria-invalid'), 'true');
    assert.ok((await deliveriesOf(rig.t, tour.failingHookId)).every((d) => d.status === 'failed'));

    // The receiver is fixed; Recover (from the suggested time, when the failures began) sends both again.
    const failed = await deliveriesOf(rig.t, tour.failingHookId);
    const path = new URL(
      (await rig.t.db.pool.query('SELECT callback_url FROM webhook_subscriptions WHERE id = $1', [tour.failingHookId])).rows[0]
        .callback_url,
    ).pathname;
    const sentBefore = rig.target.requests.filter((r) => r.url === path).length;
    rig.target.respond(() => ({ status: 200, body: 'ok' }));
    await page.goto(base);
    await page.click('button:has-text("Recover")');
    await page.waitForURL(/recovered=2$/);
    assert.match((await page.locator('p.notice').textContent()) ?? '', /2 failed deliveries queued/);
    const arrived = await waitFor('both recovered deliveries at the receiver', async () => {
      const resent = rig.target.requests.filter((r) => r.url === path).slice(sentBefore);
      return resent.length >= 2 ? resent : undefined;
    });
    assert.deepEqual(new Set(arrived.map((r) => r.headers['x-delivery-id'])), new Set(failed.map((d) => d.id)));
    await settled(rig.t, tour.failingHookId, 2);

    // Nothing failed remains: a second Recover queues nothing, and the receiver gets nothing more.
    await page.click('button:has-text("Recover")');
    await page.waitForURL(/recovered=0$/);
    assert.match((await page.locator('p.notice').textContent()) ?? '', /nothing was queued/);
    // A later call's delivery settles: a delivery queued again would have been sent by then.
    await barrierDelivery(rig.t, tour.data, tour.failingHookId);
    const failedIds = new Set(failed.map((d) => d.id));
    assert.equal(
      rig.target.requests
        .filter((r) => r.url === path)
        .slice(sentBefore)
        .filter((r) => failedIds.has(String(r.headers['x-delivery-id']))).length,
      2,
    );
    await page.goto(base);
    assert.match((await page.locator('#recover-title + p').textContent()) ?? '', /No delivery has failed for good/);
    // The healthy answers closed the circuit: no line, no mark, and the limit climbing back.
    assert.equal(await page.locator('p.circuit').count(), 0);
    assert.equal(await page.locator('g.mark').count(), 0);
    assert.match(
      (await page.locator('dl.facts').textContent()) ?? '',
      /Sending\s*Delivering normally \(circuit closed since .*Failures in a row\s*0\s*Concurrency limit\s*\d+ attempts? at a time/s,
    );
    await screenshot(page, 'webhook-health');
  });

  test('calls filter by status, agent and date; the pages keep the filters', async () => {
    await page.goto(`${rig.t.url}/ui/calls`);
    await page.selectOption('#status', 'completed');
    await page.click('form.filters button[type=submit]');
    await page.waitForURL(/status=completed/);
    const completed = await countCalls("status = 'completed'");
    assert.ok(completed > 50);
    const seen: string[] = [];
    for (;;) {
      const rows = page.locator('table > tbody > tr');
      for (const text of await rows.allTextContents()) {
        assert.match(text, /Completed/);
        seen.push(text);
      }
      const older = page.locator('a:has-text("Older calls")');
      if ((await older.count()) === 0) break;
      assert.match((await older.getAttribute('href')) ?? '', /status=completed.*cursor=|cursor=.*status=completed/);
      await older.click();
      assert.equal(await page.locator('#status').inputValue(), 'completed', 'the filter stays selected on the next page');
    }
    assert.equal(seen.length, completed);

    await page.goto(`${rig.t.url}/ui/calls`);
    await page.selectOption('#agent', { label: 'Ava (voice agent)' });
    await page.click('form.filters button[type=submit]');
    const byAgent = await page.locator('table > tbody > tr').allTextContents();
    assert.equal(byAgent.length, await countCalls('agent_id IS NOT NULL'));
    assert.ok(byAgent.every((row) => row.includes('Ava (voice agent)')));

    const day = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
    await page.goto(`${rig.t.url}/ui/calls`);
    await page.fill('#from', day);
    await page.fill('#to', day);
    await page.click('form.filters button[type=submit]');
    const onDay = await page.locator('table > tbody > tr').allTextContents();
    assert.equal(onDay.length, await countCalls('created_at >= $2::date AND created_at < $2::date + 1', [day]));
    assert.ok(onDay.length > 0 && onDay.every((row) => row.includes(day)));
    await screenshot(page, 'calls-filtered');

    await page.goto(`${rig.t.url}/ui/calls?from=2026-02-30`);
    assert.equal(await page.locator('#from-error').textContent(), 'Enter a date as YYYY-MM-DD.');
  });

  test('the filtered list exports as CSV: escaped, and cells a spreadsheet would run are neutralised', async () => {
    await page.goto(`${rig.t.url}/ui/calls`);
    const [all] = await Promise.all([page.waitForEvent('download'), page.click('text=Export CSV')]);
    assert.match(all.suggestedFilename(), /^calls-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = await readFile((await all.path())!, 'utf8');
    const lines = csv.split('\r\n');
    assert.equal(
      lines[0],
      '"id","created_at","completed_at","status","agent_id","agent_name","duration_seconds","summary","direction","from_number","to_number","location_id","location_name","recording_url","transcript"',
    );
    assert.equal(lines.at(-1), '', 'every line ends with CRLF');
    assert.equal(lines.length - 2, await countCalls());
    assert.ok(csv.includes(`,"'=HYPERLINK(""https://evil.example"",""click"")",`), 'quoted, quotes doubled, formula neutralised');
    assert.ok(csv.includes(',"Caller 3 asked about a repair; wants a call back, ""soon"", please.",'));

    await page.selectOption('#agent', { label: 'Ava (voice agent)' });
    await page.click('form.filters button[type=submit]');
    const [filtered] = await Promise.all([page.waitForEvent('download'), page.click('text=Export CSV')]);
    const rows = (await readFile((await filtered.path())!, 'utf8')).split('\r\n').slice(1, -1);
    assert.equal(rows.length, await countCalls('agent_id IS NOT NULL'));
    assert.ok(rows.every((row) => row.includes(',"Ava (voice agent)",')));
  });
});

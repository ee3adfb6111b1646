// The dashboard's and the subscription page's counts: sealed days and hours are
// counted once and stored, the open window is counted on every view, and both
// views agree with the raw rows. Stored counts stay within their organization.
// A bucket is sealed SEAL_GRACE_MS after it ends: the views are asked at
// chosen times either side of that, and a row back-dated into a bucket shows
// whether the bucket is still counted live or was stored once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dashboardFigures, startOfUtcDay } from '../../src/dashboard/dashboard.service.ts';
import { HOUR_MS, SEAL_GRACE_MS } from '../../src/dashboard/sealed-windows.ts';
import { deliveryHealth } from '../../src/webhooks/delivery-health.service.ts';
import type { TestApp } from '../helpers/app.ts';
import { connectPlatform, startWebhookApp, subscribeHook } from '../helpers/webhooks.ts';

describe('dashboard counts', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  test('calls per day: 30 days, sealed days stored once, today counted live, other organizations apart', async () => {
    const org = await connectPlatform(t);
    const other = await connectPlatform(t);
    for (const id of [org.member.org.id, other.member.org.id]) {
      await t.db.pool.query(
        `INSERT INTO calls (organization_id, created_at)
         SELECT $1, date_trunc('day', now()) - make_interval(days => g % 35) + interval '1 hour' FROM generate_series(1, 70) g`,
        [id],
      );
    }
    const raw = async () => {
      const { rows } = await t.db.pool.query<{ day: string; n: number }>(
        `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n FROM calls
          WHERE organization_id = $1 GROUP BY 1`,
        [org.member.org.id],
      );
      return new Map(rows.map((r) => [r.day, r.n]));
    };
    const first = await dashboardFigures(t.db.pool, org.member.org.id);
    assert.equal(first.callsPerDay.length, 30);
    const counts = await raw();
    for (const d of first.callsPerDay) assert.equal(d.count, counts.get(d.day) ?? 0, d.day);
    const stored = await t.db.pool.query('SELECT count(*)::int AS n FROM calls_per_day WHERE organization_id = $1', [org.member.org.id]);
    assert.ok(stored.rows[0].n >= 28, 'the sealed days are stored');

    await t.db.pool.query('INSERT INTO calls (organization_id) VALUES ($1), ($1)', [org.member.org.id]);
    const second = await dashboardFigures(t.db.pool, org.member.org.id);
    assert.equal(second.callsPerDay.at(-1)!.count, first.callsPerDay.at(-1)!.count + 2, 'today is counted on every view');
    assert.deepEqual(second.callsPerDay.slice(0, -1), first.callsPerDay.slice(0, -1));

    const theirs = await dashboardFigures(t.db.pool, other.member.org.id);
    assert.equal(
      theirs.callsPerDay.reduce((a, d) => a + d.count, 0),
      first.callsPerDay.reduce((a, d) => a + d.count, 0),
      'the other organization counts only its own calls (the two added are not among them)',
    );
    const seen = await t.db.pool.query('SELECT DISTINCT organization_id FROM calls_per_day');
    assert.deepEqual(new Set(seen.rows.map((r) => r.organization_id)), new Set([org.member.org.id, other.member.org.id]));
  });

  test('calls per day with a chosen clock: yesterday is counted live within the grace, then stored once; a call back-dated after that is not counted', async () => {
    const org = await connectPlatform(t);
    const id = org.member.org.id;
    // The chart's "today" is ten days ago; yesterday ends at its midnight.
    const midnight = startOfUtcDay(new Date(), 10);
    const yesterday = new Date(midnight.getTime() - 86_400_000).toISOString().slice(0, 10);
    const at = (ms: number) => new Date(midnight.getTime() + ms);
    const withinGrace = at(SEAL_GRACE_MS - 60_000);
    const afterGrace = at(SEAL_GRACE_MS + 60_000);
    const backDate = (n: number) =>
      t.db.pool.query('INSERT INTO calls (organization_id, created_at) SELECT $1, $2::timestamptz FROM generate_series(1, $3)', [
        id,
        at(-60_000),
        n,
      ]);
    const shown = async (now: Date) => (await dashboardFigures(t.db.pool, id, now)).callsPerDay.find((d) => d.day === yesterday)!.count;
    const stored = async () =>
      (await t.db.pool.query('SELECT calls FROM calls_per_day WHERE organization_id = $1 AND day = $2', [id, yesterday])).rows[0]?.calls;

    await backDate(2);
    assert.equal(await shown(withinGrace), 2);
    assert.equal(await stored(), undefined, 'within the grace yesterday is not stored');
    await backDate(1);
    assert.equal(await shown(withinGrace), 3, 'within the grace a late call still counts');

    assert.equal(await shown(afterGrace), 3);
    assert.equal(await stored(), 3, 'after the grace yesterday is sealed and stored');
    await backDate(1);
    assert.equal(await shown(afterGrace), 3, 'a sealed day is shown as stored, not counted again');
  });

  test('attempts per hour with a chosen clock: the last hour is counted live within the grace, then stored once', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/hook' });
    const principal = {
      kind: 'user' as const,
      userId: org.member.user.id,
      organizationId: org.member.org.id,
      scopes: 'all' as const,
      session: undefined as never,
    };
    // The current hour is two days ago; the one before it ends at `hourStart`.
    const hourStart = new Date(Math.floor((Date.now() - 2 * 86_400_000) / HOUR_MS) * HOUR_MS);
    const lastHour = new Date(hourStart.getTime() - HOUR_MS).toISOString().slice(0, 13);
    const withinGrace = new Date(hourStart.getTime() + SEAL_GRACE_MS - 60_000);
    const afterGrace = new Date(hourStart.getTime() + SEAL_GRACE_MS + 60_000);
    const backDate = async () => {
      await t.db.pool.query(
        `WITH c AS (INSERT INTO calls (organization_id) VALUES ($1) RETURNING id),
              d AS (INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, status, attempts)
                    SELECT $1, $2, id, 'call.completed', '{}', 'succeeded', 1 FROM c RETURNING id)
         INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code, latency_ms, outcome)
         SELECT $1, d.id, $2, 1, $3, 200, 50, 'succeeded' FROM d`,
        [org.member.org.id, hook.id, new Date(hourStart.getTime() - 60_000)],
      );
    };
    const shown = async (now: Date) =>
      (await deliveryHealth(t.db.pool, principal, hook.id, now)).perHour.find((h) => h.label === lastHour)!.succeeded;
    const stored = async () =>
      (
        await t.db.pool.query('SELECT succeeded FROM webhook_attempts_per_hour WHERE subscription_id = $1 AND hour = $2', [
          hook.id,
          new Date(hourStart.getTime() - HOUR_MS),
        ])
      ).rows[0]?.succeeded;

    await backDate();
    assert.equal(await shown(withinGrace), 1);
    assert.equal(await stored(), undefined, 'within the grace the last hour is not stored');
    await backDate();
    assert.equal(await shown(withinGrace), 2, 'within the grace a late attempt still counts');

    assert.equal(await shown(afterGrace), 2);
    assert.equal(await stored(), 2, 'after the grace the hour is sealed and stored');
    await backDate();
    assert.equal(await shown(afterGrace), 2, 'a sealed hour is shown as stored, not counted again');
  });

  test('attempts per hour: sealed hours stored once and equal to the raw attempts', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/hook' });
    await t.db.pool.query(
      `WITH c AS (INSERT INTO calls (organization_id) SELECT $1 FROM generate_series(1, 40) RETURNING id),
            d AS (INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, status, attempts)
                  SELECT $1, $2, id, 'call.completed', '{}', 'succeeded', 1 FROM c RETURNING id)
       INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code, latency_ms, outcome)
       SELECT $1, d.id, $2, 1, now() - make_interval(mins => ((row_number() OVER ()) * 37)::int), 200, 50, 'succeeded' FROM d`,
      [org.member.org.id, hook.id],
    );
    const principal = {
      kind: 'user' as const,
      userId: org.member.user.id,
      organizationId: org.member.org.id,
      scopes: 'all' as const,
      session: undefined as never,
    };
    const first = await deliveryHealth(t.db.pool, principal, hook.id);
    const total = (h: typeof first) => h.perDay.reduce((a, b) => a + b.succeeded, 0);
    assert.equal(total(first), 40);
    const stored = await t.db.pool.query('SELECT sum(succeeded)::int AS n FROM webhook_attempts_per_hour WHERE subscription_id = $1', [
      hook.id,
    ]);
    assert.ok(stored.rows[0].n > 30, 'the sealed hours are stored');
    const second = await deliveryHealth(t.db.pool, principal, hook.id);
    assert.deepEqual(second.perHour, first.perHour);
    assert.deepEqual(second.perDay, first.perDay);
    assert.equal(first.latency24h.p50, 50);
  });
});

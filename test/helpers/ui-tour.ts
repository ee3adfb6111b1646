// Every page of the web UI, for the accessibility and small-screen checks and
// for `npm run screenshots`: one organization full of data (calls over many
// days, real deliveries, a failing subscription, a connected app, locations),
// one empty organization, and a visitor who is not signed in.
import type { Browser, BrowserContext } from 'playwright-core';
import { createAgent } from '../../src/calls/agents.service.ts';
import { createLocation } from '../../src/locations/locations.service.ts';
import { createServiceArea } from '../../src/service-areas/service-areas.service.ts';
import { createMember, PASSWORD, type Member } from './fixtures.ts';
import { authorizationPath, createClient, pkcePair } from './oauth.ts';
import { completeCall, connectPlatform, settled, subscribeHook, type DeliveryRig } from './webhooks.ts';
import { NO_CACHES } from '../../src/cache/caches.ts';

export type Visitor = 'visitor' | 'empty' | 'data';

export interface TourStop {
  /** File-name friendly, unique. */
  name: string;
  path: string;
  who: Visitor;
  status: number;
}

export interface Tour {
  stops: TourStop[];
  data: Member;
  empty: Member;
  failingHookId: string;
}

/** Calls spread over the last 30 days (created directly: the API stamps calls with now()). */
async function backdatedCalls(rig: DeliveryRig, organizationId: string, agentId: string) {
  await rig.t.db.pool.query(
    `INSERT INTO calls (organization_id, agent_id, status, completed_at, summary, duration_seconds, created_at)
     SELECT $1, CASE WHEN g % 3 = 0 THEN $2::uuid END, 'completed', now() - make_interval(days => g % 28),
            'Caller ' || g || ' asked about a repair; wants a call back, "soon", please.', 30 + g,
            now() - make_interval(days => g % 28, mins => g)
       FROM generate_series(1, 60) g`,
    [organizationId, agentId],
  );
}

export async function seedTour(rig: DeliveryRig): Promise<Tour> {
  const { t, target } = rig;
  const org = await connectPlatform(t);
  const data = org.member;
  const agent = await createAgent(t.db.pool, data.org.id, 'Ava (voice agent)');
  const location = await createLocation(t.db.pool, NO_CACHES, data.org.id, {
    name: 'Head office',
    city: 'Springfield',
    latitude: 39.78,
    longitude: -89.65,
  });
  const area = await createServiceArea(t.db.pool, data.org.id, { label: 'Springfield metro', radius_km: 25, location_id: location.id });
  target.respond((request) =>
    request.url.startsWith('/tour/failing')
      ? { status: 503, body: '{"error":"maintenance","detail":"back in five minutes"}' }
      : { status: 200, body: 'ok' },
  );
  const failing = await subscribeHook(t, org, { hookUrl: `${target.url}/tour/failing-crm-endpoint-with-a-rather-long-path/receive` });
  const healthy = await subscribeHook(t, org, { hookUrl: `${target.url}/tour/ok` });
  const call = await completeCall(t, data, { summary: 'Customer booked a boiler service for Tuesday 9:00.', agent_id: agent.id });
  await completeCall(t, data, { summary: '=HYPERLINK("https://evil.example","click")' });
  await settled(t, failing.id, 2);
  await settled(t, healthy.id, 2);
  await backdatedCalls(rig, data.org.id, agent.id);
  // Its six 503s in a row opened its circuit (the worker's breaker): the pages show it open or, once the
  // short test wait is over, probing.
  // The subscription's failures began now: what the delivery worker records after a failed attempt.
  await t.db.pool.query("UPDATE webhook_subscriptions SET failing_since = now() - interval '2 hours' WHERE id = $1", [failing.id]);

  const consentClient = await createClient(t.db.pool, {
    name: 'Acme Automations',
    redirectUris: ['https://platform.example/callback'],
    scopes: ['calls:read'],
  });
  const consent = authorizationPath({
    response_type: 'code',
    client_id: consentClient.client_id,
    redirect_uri: 'https://platform.example/callback',
    scope: 'calls:read',
    state: 'tour',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  });

  const empty = await createMember(t.db.pool);
  const stops: TourStop[] = [
    { name: 'login', path: '/login', who: 'visitor', status: 200 },
    { name: 'not-found-signed-out', path: '/ui/no-such-page', who: 'visitor', status: 404 },
    { name: 'home-empty', path: '/', who: 'empty', status: 200 },
    { name: 'locations-empty', path: '/ui/locations', who: 'empty', status: 200 },
    { name: 'service-areas-empty', path: '/ui/service-areas', who: 'empty', status: 200 },
    { name: 'calls-empty', path: '/ui/calls', who: 'empty', status: 200 },
    { name: 'webhooks-empty', path: '/ui/webhooks', who: 'empty', status: 200 },
    { name: 'connected-apps-empty', path: '/connected-apps', who: 'empty', status: 200 },
    { name: 'activity-empty', path: '/ui/activity', who: 'empty', status: 200 },
    { name: 'home', path: '/', who: 'data', status: 200 },
    { name: 'locations', path: '/ui/locations', who: 'data', status: 200 },
    { name: 'location-new', path: '/ui/locations/new', who: 'data', status: 200 },
    { name: 'location-edit', path: `/ui/locations/${location.id}/edit`, who: 'data', status: 200 },
    { name: 'location-delete', path: `/ui/locations/${location.id}/delete`, who: 'data', status: 200 },
    { name: 'service-areas', path: '/ui/service-areas', who: 'data', status: 200 },
    { name: 'service-area-new', path: '/ui/service-areas/new', who: 'data', status: 200 },
    { name: 'service-area-edit', path: `/ui/service-areas/${area.id}/edit`, who: 'data', status: 200 },
    { name: 'service-area-delete', path: `/ui/service-areas/${area.id}/delete`, who: 'data', status: 200 },
    { name: 'calls', path: '/ui/calls', who: 'data', status: 200 },
    { name: 'calls-filtered', path: `/ui/calls?status=completed&agent=${agent.id}`, who: 'data', status: 200 },
    { name: 'calls-bad-filter', path: '/ui/calls?from=2026-13-40', who: 'data', status: 400 },
    { name: 'call', path: `/ui/calls/${call.id}`, who: 'data', status: 200 },
    { name: 'webhooks', path: '/ui/webhooks', who: 'data', status: 200 },
    { name: 'webhook', path: `/ui/webhooks/${failing.id}`, who: 'data', status: 200 },
    { name: 'webhook-recover-error', path: `/ui/webhooks/${failing.id}?recover=old`, who: 'data', status: 200 },
    { name: 'webhook-delete', path: `/ui/webhooks/${failing.id}/delete`, who: 'data', status: 200 },
    { name: 'connected-apps', path: '/connected-apps', who: 'data', status: 200 },
    { name: 'activity', path: '/ui/activity', who: 'data', status: 200 },
    { name: 'activity-filtered', path: '/ui/activity?type=subscription.created,circuit.opened&since=2020-01-01', who: 'data', status: 200 },
    { name: 'activity-bad-filter', path: '/ui/activity?since=soon', who: 'data', status: 400 },
    { name: 'alerts', path: '/ui/alerts', who: 'data', status: 200 },
    { name: 'consent', path: consent, who: 'data', status: 200 },
    { name: 'not-found', path: '/ui/webhooks/00000000-0000-4000-8000-000000000000', who: 'data', status: 404 },
  ];
  return { stops, data, empty, failingHookId: failing.id };
}

/** A browser profile (JavaScript as asked; CSP bypassed so a test can inject axe-core), signed in as `member` unless a visitor. */
export async function tourContext(
  browser: Browser,
  baseUrl: string,
  member: Member | undefined,
  options: { width: number; height: number; javaScript: boolean },
): Promise<BrowserContext> {
  const context = await browser.newContext({
    javaScriptEnabled: options.javaScript,
    bypassCSP: options.javaScript,
    viewport: { width: options.width, height: options.height },
  });
  if (member) {
    const page = await context.newPage();
    await page.goto(`${baseUrl}/login`);
    await page.fill('#email', member.email);
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL((url) => url.pathname === '/');
    await page.close();
  }
  return context;
}

// What webhook tests share: an app configured for fast, private-target
// deliveries, a platform connection for an organization, an in-process
// delivery worker, and polling for a database condition.
import { pino } from 'pino';
import { startTestApp, type TestApp } from './app.ts';
import { startHttpsTarget, type HttpsTarget } from './https-target.ts';
import { createMember, type Member } from './fixtures.ts';
import { createClient, issueTokens, platformHeaders, type TestClient } from './oauth.ts';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { claimBatch, startDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from '../../src/webhooks/worker/worker.ts';
import type { LeasedDelivery } from '../../src/webhooks/worker/claim.queries.ts';
import type { Pool } from '../../src/db/pool.ts';
import type { OutcomeRecord } from '../../src/webhooks/worker/record.queries.ts';

/** Deliveries to 127.0.0.1 on any port (the receivers take random ones) allowed, retries after ~300 ms twice, attempts cut at 1.5 s, no practical WEBHOOK_RATE_LIMIT. */
export const WEBHOOK_TEST_ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_ALLOWED_PORTS: '*',
  WEBHOOK_RETRY_SCHEDULE: '300ms,300ms',
  WEBHOOK_TIMEOUT_MS: '1500',
  // Tests subscribe hundreds of hooks with one grant; test/webhooks/webhook-rate-limit.test.ts sets its own.
  WEBHOOK_RATE_LIMIT: '100000/min',
};

export function startWebhookApp(env: Record<string, string> = {}): Promise<TestApp> {
  return startTestApp({ env: { ...WEBHOOK_TEST_ENV, ...env } });
}

export interface Connection {
  member: Member;
  client: TestClient;
  /** The three platform headers (docs/interface.md §5.1). */
  headers: Record<string, string>;
  accessToken: string;
}

/** An organization (with an owner and x-user-token) connected to a platform client. */
export async function connectPlatform(
  t: TestApp,
  options: { member?: Member; client?: TestClient; scopes?: string[] } = {},
): Promise<Connection> {
  const member = options.member ?? (await createMember(t.db.pool));
  const client = options.client ?? (await createClient(t.db.pool, { name: 'Zap Platform', scopes: ['calls:read', 'calls:write'] }));
  const tokens = await issueTokens(t.db.pool, {
    client,
    userId: member.user.id,
    organizationId: member.org.id,
    scopes: options.scopes ?? ['calls:read'],
  });
  return { member, client, headers: platformHeaders(tokens, client), accessToken: tokens.access_token };
}

export async function subscribeHook(t: TestApp, connection: Connection, body: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers: connection.headers, payload: body });
  if (res.statusCode !== 201 && res.statusCode !== 200) throw new Error(`subscribe failed: ${res.statusCode} ${res.body}`);
  return res.json() as { id: string; event: string; callback_url: string };
}

/** Completes a call through the API (x-user-token); returns the call. */
export async function completeCall(t: TestApp, member: Member, body: Record<string, unknown> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/calls',
    headers: { 'x-user-token': member.token },
    payload: { summary: 'Customer booked a visit', duration_seconds: 42, ...body },
  });
  if (res.statusCode !== 201) throw new Error(`POST /calls failed: ${res.statusCode} ${res.body}`);
  return res.json() as {
    id: string;
    organization_id: string;
    created_at: string;
    summary: string;
    duration_seconds: number;
    agent_id: string | null;
  };
}

export async function startTestWorker(t: TestApp, options: Partial<DeliveryWorkerOptions> = {}): Promise<DeliveryWorker> {
  return startDeliveryWorker({
    pool: t.db.pool,
    databaseUrl: t.db.url,
    config: t.config,
    log: pino({ level: 'silent' }),
    metrics: t.app.metrics,
    secretBox: createSecretBox(t.config.secretKey!),
    ...options,
  });
}

export interface DeliveryRig {
  t: TestApp;
  target: HttpsTarget;
  worker: DeliveryWorker;
  close(): Promise<void>;
}

/**
 * What every end-to-end delivery test starts with: an app with the webhook test
 * settings, a real HTTPS target on 127.0.0.1 and a delivery worker on the app's database.
 */
export async function startDeliveryRig(options: { env?: Record<string, string>; listen?: boolean } = {}): Promise<DeliveryRig> {
  const t = await startTestApp({ listen: options.listen ?? false, env: { ...WEBHOOK_TEST_ENV, ...options.env } });
  const target = await startHttpsTarget();
  const worker = await startTestWorker(t);
  return {
    t,
    target,
    worker,
    async close() {
      await worker.stop();
      await target.close();
      await t.close();
    },
  };
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface DeliveryRow {
  id: string;
  subscription_id: string;
  call_id: string;
  status: string;
  attempts: number;
  lease_token: string | null;
}

export async function deliveriesOf(t: TestApp, subscriptionId: string): Promise<DeliveryRow[]> {
  const { rows } = await t.db.pool.query<DeliveryRow>(
    // Attempts started: the delivery's ended ones, or its lease's (the attempt in flight or lost).
    `SELECT d.id, d.subscription_id, d.call_id, d.status, coalesce(l.attempt, d.attempts) AS attempts, l.token AS lease_token
       FROM webhook_deliveries d LEFT JOIN webhook_delivery_leases l ON l.delivery_id = d.id
      WHERE d.subscription_id = $1 ORDER BY d.created_at`,
    [subscriptionId],
  );
  return rows;
}

export async function attemptsOf(t: TestApp, deliveryId: string) {
  const { rows } = await t.db.pool.query<{ attempt: number; status_code: number | null; error: string | null; outcome: string }>(
    'SELECT attempt, status_code, error, outcome FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt',
    [deliveryId],
  );
  return rows;
}

/** Waits until every delivery of the subscription has left 'pending'. */
export function settled(t: TestApp, subscriptionId: string, count: number, timeoutMs = 10_000): Promise<DeliveryRow[]> {
  return waitFor(
    `${count} settled deliveries of ${subscriptionId}`,
    async () => {
      const rows = await deliveriesOf(t, subscriptionId);
      return rows.length === count && rows.every((row) => row.status !== 'pending') ? rows : undefined;
    },
    timeoutMs,
  );
}

/** Claims due deliveries (every subscription's) and waits for the claim's commit: the leases returned are durable. */
export async function claimDueDeliveries(pool: Pool, input: { limit: number; leaseMs: number }): Promise<LeasedDelivery[]> {
  const { claimed, committed } = await claimBatch(pool, input);
  await committed;
  return claimed;
}

/**
 * A barrier: completes one more call and waits until every delivery of the
 * subscription has settled, the new one included. Whatever the worker was
 * going to send the subscription before that call has been sent by then, so a
 * test can afterwards check that something was not.
 */
export async function barrierDelivery(t: TestApp, member: Member, subscriptionId: string): Promise<DeliveryRow[]> {
  const before = (await deliveriesOf(t, subscriptionId)).length;
  await completeCall(t, member, { summary: 'Barrier call' });
  return settled(t, subscriptionId, before + 1);
}

/**
 * What the worker records for an attempt of a leased delivery whose receiver
 * answered `status`: 2xx succeeded, 410 removes the subscription, anything
 * else is retried in a minute; 429 and 5xx say the endpoint is unhealthy.
 */
export function answeredOutcome(
  leased: Pick<LeasedDelivery, 'id' | 'lease_token' | 'attempt'>,
  status: number,
  attemptedAt = new Date(),
): OutcomeRecord {
  const succeeded = status >= 200 && status < 300;
  const removed = status === 410;
  return {
    deliveryId: leased.id,
    leaseToken: leased.lease_token,
    attempt: leased.attempt,
    attemptedAt,
    statusCode: status,
    latencyMs: 3,
    error: null,
    errorMessage: null,
    responseBody: null,
    outcome: succeeded ? 'succeeded' : removed ? 'subscription_removed' : 'retrying',
    status: succeeded ? 'succeeded' : removed ? 'failed' : 'pending',
    nextAttemptAt: succeeded || removed ? null : new Date(Date.now() + 60_000),
    health: status === 429 || status >= 500 ? 'unhealthy' : 'healthy',
  };
}

// Real `switchboard serve` / `switchboard worker` processes on one database,
// an organization subscribed to an HTTPS target, and a load of completed calls
// through their HTTP APIs: what the fault and topology tests share.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type pg from 'pg';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { baseEnv, BIN, startServe, type Served } from './cli.ts';
import { createMember, type Member } from './fixtures.ts';
import type { RecordedRequest } from './https-target.ts';
import { createClient, issueTokens, platformHeaders } from './oauth.ts';
import { WEBHOOK_TEST_ENV } from './webhooks.ts';

export const FLEET_SECRET_KEY = Buffer.alloc(32, 9).toString('base64');

/** The environment of a fleet process: the test CA, fast retries, private targets allowed. */
export function fleetEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return baseEnv({
    ...WEBHOOK_TEST_ENV,
    DATABASE_URL: databaseUrl,
    SECRET_KEY: FLEET_SECRET_KEY,
    PORT: '0',
    WORKER_PORT: '0',
    LOG_LEVEL: 'warn',
    ...extra,
  });
}

export { startServe, type Served };

export interface WorkerProcess {
  child: ChildProcess;
  /** Where it serves /healthz, /readyz and /metrics (WORKER_PORT). */
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** `switchboard worker` (the given executable, this checkout's by default) in its own process group; resolves once it runs. */
export async function startWorkerProcess(env: NodeJS.ProcessEnv, bin = BIN): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [bin, 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  const running = () => /Switchboard worker running; health and metrics on (\S+)/.exec(output);
  let match = running();
  while (!match) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`worker exited before starting:\n${output}`);
    if (Date.now() > deadline) throw new Error(`worker did not start within 60 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    match = running();
  }
  return { child, url: match[1]!, output: () => output, exited };
}

/** Sends `signal` to a fleet process and waits for it to end. */
export async function stopProcess(process_: { child: ChildProcess }, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const { child } = process_;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}

export interface Tenant {
  pool: Pool;
  member: Member;
  /** x-user-token of an owner: POST /calls. */
  token: string;
  subscriptionIds: string[];
  close(): Promise<void>;
}

/** An organization with `subscriptions` call.completed hooks to `hookUrl(i)`, made through `apiUrl`. */
export async function seedTenant(
  databaseUrl: string,
  apiUrl: string,
  hookUrl: (index: number) => string,
  subscriptions = 1,
): Promise<Tenant> {
  const pool = createPool(databaseUrl, 2);
  const member = await createMember(pool);
  const client = await createClient(pool, { name: 'Fleet platform' });
  const tokens = await issueTokens(pool, { client, userId: member.user.id, organizationId: member.org.id });
  const subscriptionIds: string[] = [];
  for (let i = 0; i < subscriptions; i++) {
    const res = await fetch(`${apiUrl}/webhooks/subscribe`, {
      method: 'POST',
      headers: { ...platformHeaders(tokens, client), 'content-type': 'application/json' },
      body: JSON.stringify({ hookUrl: hookUrl(i), event: 'call.completed' }),
    });
    if (res.status !== 201) throw new Error(`subscribe answered ${res.status}: ${await res.text()}`);
    subscriptionIds.push(((await res.json()) as { id: string }).id);
  }
  return { pool, member, token: member.token, subscriptionIds, close: () => pool.end() };
}

export interface Answer {
  status: number;
  /** Set on 201: the call accepted. */
  callId?: string;
  retryAfter?: string | null;
  code?: string;
  contentType?: string | null;
  /** The request never got an HTTP answer (connection refused or reset). */
  networkError?: string;
  via: string;
}

/**
 * Completes calls through the given API URLs (round robin) from `concurrency`
 * loops until stop() is called; every answer is kept. `urls()` is read per
 * request, so a test can swap a restarted process in.
 */
export function loadCalls(urls: () => string[], token: string, concurrency = 4) {
  const answers: Answer[] = [];
  let stopped = false;
  let counter = 0;
  const loop = async () => {
    while (!stopped) {
      const list = urls();
      const via = list[counter++ % list.length]!;
      try {
        const res = await fetch(`${via}/calls`, {
          method: 'POST',
          headers: { 'x-user-token': token, 'content-type': 'application/json' },
          body: JSON.stringify({ summary: `Load call ${counter}`, duration_seconds: 30 }),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        const body = text ? (JSON.parse(text) as { id?: string; code?: string }) : {};
        answers.push({
          status: res.status,
          via,
          retryAfter: res.headers.get('retry-after'),
          contentType: res.headers.get('content-type'),
          ...(res.status === 201 && body.id ? { callId: body.id } : {}),
          ...(body.code ? { code: body.code } : {}),
        });
      } catch (error) {
        answers.push({ status: 0, via, networkError: (error as Error).message });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    answers,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** Call ids per subscription hook path, and delivery ids per call, from what the target received. */
export function deliveredBy(requests: RecordedRequest[]) {
  const byHook = new Map<string, Map<string, Set<string>>>();
  for (const request of requests) {
    if (request.method !== 'POST') continue;
    const hook = request.url;
    const callId = (JSON.parse(request.body) as { id: string }).id;
    const deliveryId = String(request.headers['x-delivery-id']);
    const calls = byHook.get(hook) ?? new Map<string, Set<string>>();
    byHook.set(hook, calls);
    const ids = calls.get(callId) ?? new Set<string>();
    calls.set(callId, ids);
    ids.add(deliveryId);
  }
  return byHook;
}

/** Polls the database until no delivery of the subscriptions is pending (or the timeout). */
export async function waitUntilSettled(pool: Pool | pg.Pool, subscriptionIds: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ pending: number }>(
      `SELECT count(*)::int AS pending FROM webhook_deliveries WHERE subscription_id = ANY($1::uuid[]) AND status = 'pending'`,
      [subscriptionIds],
    );
    if (rows[0]!.pending === 0) return;
    if (Date.now() > deadline) throw new Error(`${rows[0]!.pending} deliveries still pending after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

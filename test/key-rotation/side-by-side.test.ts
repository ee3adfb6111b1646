import assert from 'node:assert/strict';
import { refreshOverHttp } from '../helpers/http-platform.ts';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { runCli, startServe, type Served } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember, PASSWORD, type Member } from '../helpers/fixtures.ts';
import { fleetEnv, stopProcess } from '../helpers/fleet.ts';
import { startHttpsTarget, type HttpsTarget, type RecordedRequest } from '../helpers/https-target.ts';
import { createClient, issueTokens, platformHeaders, type IssuedTokens, type TestClient } from '../helpers/oauth.ts';
import { hiddenInputs, UserAgent } from '../helpers/user-agent.ts';
import { waitFor } from '../helpers/webhooks.ts';

const newKey = () => randomBytes(32).toString('base64');
const [K1, K2, K3] = [newKey(), newKey(), newKey()];

interface Attempt {
  error: string | null;
  outcome: string;
}

// docs/operations.md, "Rotating SECRET_KEY", step 2 with several processes: while
// the fleet restarts one process at a time, a process on the old key and one on
// the new key (the old one in SECRET_KEY_PREVIOUS) serve side by side on one
// database. A is `serve` (its worker sends every delivery of this file), B is
// `serve --no-worker`. What the docs say: the restarted process accepts all that
// the other made; the one not yet restarted neither opens what the restarted one
// encrypted nor takes its forms (a secret subscribed meanwhile fails its attempt,
// which is retried; a form answers 403; a retried refresh, invalid_grant) until
// it is restarted too. Restarting every process first with the new key in
// SECRET_KEY_PREVIOUS alone avoids even that: then each accepts the other's.
describe('a rolling rotation: processes on the old and the new key side by side, on one database', () => {
  let db: TestDatabase;
  let target: HttpsTarget;
  let a: Served | undefined;
  let b: Served | undefined;
  let member: Member;
  let client: TestClient;
  /** The subscription ids by hook path, and their secrets. */
  const hooks: Record<string, { id: string; secret: string }> = {};
  let retriedCall: string;

  // Retries a second apart, many of them: the attempt A fails is still waiting when A comes back. The attempts'
  // outcomes are what the test reads, so a local receiver slowed past the usual 1.5 s by a loaded machine must not
  // turn one into a timeout: 15 s.
  const env = (keys: Record<string, string>) =>
    fleetEnv(db.url, {
      REFRESH_REUSE_GRACE: '3600',
      WEBHOOK_RETRY_SCHEDULE: Array(20).fill('1s').join(','),
      WEBHOOK_TIMEOUT_MS: '15000',
      ...keys,
    });
  const serveA = async (keys: Record<string, string>) => {
    if (a) await stopProcess(a);
    a = await startServe(env(keys));
  };
  const serveB = async (keys: Record<string, string>) => {
    if (b) await stopProcess(b);
    b = await startServe(env(keys), ['--no-worker']);
  };

  /** A login form rendered by `from`, posted by the same browser to `to` (a load balancer sends it anywhere). */
  const postLoginForm = async (from: Served, to: Served) => {
    const viewer = new UserAgent(from.url);
    const page = await viewer.get('/login');
    assert.equal(page.status, 200);
    const poster = new UserAgent(to.url);
    for (const [name, value] of viewer.cookies) poster.cookies.set(name, value);
    return poster.post('/login', { ...hiddenInputs(page.body, '/login'), email: member.user.email, password: PASSWORD });
  };
  const newTokens = () => issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
  const refresh = (via: Served, refreshToken: string) => refreshOverHttp(via.url, client, refreshToken);
  /** Refreshes through `first`, then replays the same refresh token through `second` (a retried refresh, within REFRESH_REUSE_GRACE). */
  const replayedSuccessor = async (first: Served, second: Served) => {
    const tokens = await newTokens();
    const rotated = await refresh(first, tokens.refresh_token);
    assert.equal(rotated.status, 200);
    const { refresh_token: successor } = (await rotated.json()) as IssuedTokens;
    const replay = await refresh(second, tokens.refresh_token);
    return { successor, status: replay.status, body: (await replay.json()) as { refresh_token?: string; error?: string } };
  };
  const subscribe = async (via: Served, path: string) => {
    const secret = `secret of ${path} ${randomBytes(8).toString('hex')}`;
    const tokens = await newTokens();
    const res = await fetch(`${via.url}/webhooks/subscribe`, {
      method: 'POST',
      headers: { ...platformHeaders(tokens, client), 'content-type': 'application/json' },
      body: JSON.stringify({ hookUrl: `${target.url}${path}`, event: 'call.completed', secret }),
    });
    assert.equal(res.status, 201, await res.clone().text());
    hooks[path] = { id: ((await res.json()) as { id: string }).id, secret };
  };
  const completeCall = async (via: Served) => {
    const res = await fetch(`${via.url}/calls`, {
      method: 'POST',
      headers: { 'x-user-token': member.token, 'content-type': 'application/json' },
      body: JSON.stringify({ summary: 'Booked a visit', duration_seconds: 30 }),
    });
    assert.equal(res.status, 201);
    return ((await res.json()) as { id: string }).id;
  };
  const received = (callId: string, path: string) =>
    target.requests.filter((request) => request.url === path && (JSON.parse(request.body) as { id: string }).id === callId);
  /** The request `path` received for the call, once it has; its X-Signature is the hook's secret (opened by the sender). */
  const signedDelivery = async (callId: string, path: string): Promise<RecordedRequest> => {
    const [request] = await waitFor(
      `the call's delivery to ${path}`,
      async () => received(callId, path).length > 0 && received(callId, path),
      60_000,
    );
    assert.equal(request!.headers['x-signature'], hooks[path]!.secret, `the secret of ${path}, opened by the worker`);
    return request!;
  };
  const attempts = async (callId: string, path: string) =>
    (
      await db.pool.query<Attempt>(
        `SELECT a.error, a.outcome FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
          WHERE d.call_id = $1 AND a.subscription_id = $2 ORDER BY a.attempt`,
        [callId, hooks[path]!.id],
      )
    ).rows;

  /** The attempts once the last one recorded has `outcome` (an outcome is written just after its request). */
  const attemptsUntil = (callId: string, path: string, outcome: string) =>
    waitFor(
      `an attempt to ${path} recorded as ${outcome}`,
      async () => {
        const rows = await attempts(callId, path);
        return rows.at(-1)?.outcome === outcome && rows;
      },
      60_000,
    );
  before(async () => {
    db = await createTestDatabase();
    target = await startHttpsTarget(() => ({ status: 204 }));
    member = await createMember(db.pool);
    client = await createClient(db.pool, { name: 'Rolling rotation platform' });
  });
  after(async () => {
    for (const process_ of [a, b]) if (process_) await stopProcess(process_, 'SIGKILL');
    await target?.close();
    await db?.drop();
  });

  test('step 2 half done: B, restarted with the new key and the old one in SECRET_KEY_PREVIOUS, accepts what A made; A, not yet restarted, neither opens what B sealed nor takes its forms', async () => {
    await Promise.all([serveA({ SECRET_KEY: K1 }), serveB({ SECRET_KEY: K2, SECRET_KEY_PREVIOUS: K1 })]);

    assert.equal((await postLoginForm(a!, b!)).status, 303, "A's form, under the old key, posts to B");
    const rejected = await postLoginForm(b!, a!);
    assert.equal(rejected.status, 403, "B's form, under the new key, is refused by A");
    assert.match(rejected.body, /Your sign-in form expired/);

    const fromA = await replayedSuccessor(a!, b!);
    assert.equal(fromA.status, 200, 'B opens the successor A sealed under the old key');
    assert.equal(fromA.body.refresh_token, fromA.successor);
    const fromB = await replayedSuccessor(b!, a!);
    assert.equal(fromB.status, 400, 'A cannot open the successor B sealed under the new key');
    assert.equal(fromB.body.error, 'invalid_grant');

    await subscribe(a!, '/hooks/before');
    await subscribe(b!, '/hooks/meanwhile');
    retriedCall = await completeCall(b!);
    await signedDelivery(retriedCall, '/hooks/before');
    // The secret subscribed through B meanwhile: A's attempt fails, nothing unsigned is sent, and it is retried.
    const [first] = await attemptsUntil(retriedCall, '/hooks/meanwhile', 'retrying');
    assert.deepEqual(first, { error: 'internal', outcome: 'retrying' });
    assert.deepEqual(received(retriedCall, '/hooks/meanwhile'), []);
  });

  test('every process restarted with the new key: the failed attempt is retried and goes out signed; then rekey', async () => {
    await serveA({ SECRET_KEY: K2, SECRET_KEY_PREVIOUS: K1 });
    await signedDelivery(retriedCall, '/hooks/meanwhile');
    const tried = await attemptsUntil(retriedCall, '/hooks/meanwhile', 'succeeded');
    assert.deepEqual(tried.at(-1), { error: null, outcome: 'succeeded' });
    assert.ok(tried.slice(0, -1).every((attempt) => attempt.error === 'internal' && attempt.outcome === 'retrying'));

    // The secret A sealed under the old key opens in the restarted A as well.
    const call = await completeCall(a!);
    await Promise.all([signedDelivery(call, '/hooks/before'), signedDelivery(call, '/hooks/meanwhile')]);

    // Step 3, then step 4's restart comes with the next rotation's first step (below).
    const rekeyed = await runCli(['rekey', '--json'], env({ SECRET_KEY: K2, SECRET_KEY_PREVIOUS: K1 }));
    assert.equal(rekeyed.code, 0, rekeyed.stderr);
  });

  test('the order that avoids even that: every process first with the new key in SECRET_KEY_PREVIOUS alone, then step 2; A and B accept what the other made', async () => {
    // The next rotation, K2 to K3. First every process gets K3 in SECRET_KEY_PREVIOUS alone (B's own
    // restart with those keys is left out: it is the same as A's); then B restarts for step 2.
    await Promise.all([serveA({ SECRET_KEY: K2, SECRET_KEY_PREVIOUS: K3 }), serveB({ SECRET_KEY: K3, SECRET_KEY_PREVIOUS: K2 })]);

    assert.equal((await postLoginForm(a!, b!)).status, 303, "A's form posts to B");
    assert.equal((await postLoginForm(b!, a!)).status, 303, "B's form, under the new key, posts to A");

    const fromA = await replayedSuccessor(a!, b!);
    assert.equal(fromA.status, 200);
    assert.equal(fromA.body.refresh_token, fromA.successor);
    const fromB = await replayedSuccessor(b!, a!);
    assert.equal(fromB.status, 200, 'A opens the successor B sealed under the new key');
    assert.equal(fromB.body.refresh_token, fromB.successor);

    await subscribe(b!, '/hooks/staged');
    const call = await completeCall(b!);
    await Promise.all(['/hooks/before', '/hooks/meanwhile', '/hooks/staged'].map((path) => signedDelivery(call, path)));
    assert.deepEqual(
      await attemptsUntil(call, '/hooks/staged', 'succeeded'),
      [{ error: null, outcome: 'succeeded' }],
      'A opened it on the first attempt',
    );
  });
});

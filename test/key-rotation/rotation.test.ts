import assert from 'node:assert/strict';
import { refreshOverHttp } from '../helpers/http-platform.ts';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { runCli, startServe, type Served } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember, PASSWORD, type Member } from '../helpers/fixtures.ts';
import { fleetEnv, stopProcess } from '../helpers/fleet.ts';
import { startHttpsTarget, type HttpsTarget, type RecordedRequest } from '../helpers/https-target.ts';
import { createClient, issueTokens, platformHeaders, type IssuedTokens, type TestClient } from '../helpers/oauth.ts';
import { hiddenInputs, UserAgent } from '../helpers/user-agent.ts';
import { signedInAgent } from '../helpers/web.ts';
import { waitFor } from '../helpers/webhooks.ts';

const newKey = () => randomBytes(32).toString('base64');
const [FIRST, SECOND, LOST] = [newKey(), newKey(), newKey()];
// One secret of each rule (docs/interface.md §6.2): re-encrypting a secret must not change the key its signature uses.
const SECRETS = { a: `whsec_${randomBytes(32).toString('base64')}`, b: 'second hook secret' };

/** Both Standard Webhooks verification and X-Signature (the secret verbatim) hold for `secret`. */
function assertSigned(request: RecordedRequest, secret: string) {
  assert.equal(request.headers['x-signature'], secret);
  // A whsec_ secret is given to the library exactly as it is; a plain one as base64 of its bytes.
  const verifier = new Webhook(secret.startsWith('whsec_') ? secret : Buffer.from(secret, 'utf8').toString('base64'));
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
  assert.doesNotThrow(() => verifier.verify(request.body, headers), 'the signature verifies with the standardwebhooks package');
}

// SECRET_KEY rotated as docs/operations.md's "Rotating SECRET_KEY" says, with real
// `switchboard serve` and `switchboard rekey` processes on one database.
describe('rotating SECRET_KEY: SECRET_KEY_PREVIOUS, then switchboard rekey, then the old key goes', () => {
  let db: TestDatabase;
  let target: HttpsTarget;
  let served: Served | undefined;
  let member: Member;
  let client: TestClient;
  let tokens: IssuedTokens;
  const hookIds: Record<string, string> = {};
  /** The refresh token the first refresh returned: a replay of the first one gets it again. */
  let successor: string;
  /** A page left open since before the rotation: its browser's cookies and the hidden fields of its form. */
  type OpenForm = { cookies: Map<string, string>; fields: Record<string, string> };
  let form: OpenForm;
  /** The alert settings page of a signed-in owner, rendered under the first key and never posted. */
  let alertsForm: OpenForm;

  const env = (keys: Record<string, string>) => fleetEnv(db.url, { REFRESH_REUSE_GRACE: '3600', ...keys });
  const serveWith = async (keys: Record<string, string>) => {
    if (served) await stopProcess(served);
    served = await startServe(env(keys));
    return served;
  };
  const completeCall = async () => {
    const res = await fetch(`${served!.url}/calls`, {
      method: 'POST',
      headers: { 'x-user-token': member.token, 'content-type': 'application/json' },
      body: JSON.stringify({ summary: 'Booked a visit', duration_seconds: 30 }),
    });
    assert.equal(res.status, 201);
    return ((await res.json()) as { id: string }).id;
  };
  /** Completes a call and returns what each hook received for it. */
  const deliveredCall = async () => {
    const callId = await completeCall();
    const forCall = () => target.requests.filter((request) => (JSON.parse(request.body) as { id: string }).id === callId);
    const hooks = Object.keys(hookIds).length;
    await waitFor(`the call's delivery to each of ${hooks} hooks`, async () => forCall().length >= hooks || undefined, 60_000);
    return Object.fromEntries(forCall().map((request) => [request.url, request])) as Record<string, RecordedRequest>;
  };
  const subscribe = async (path: string, secret: string) => {
    const res = await fetch(`${served!.url}/webhooks/subscribe`, {
      method: 'POST',
      headers: { ...platformHeaders(tokens, client), 'content-type': 'application/json' },
      body: JSON.stringify({ hookUrl: `${target.url}${path}`, event: 'call.completed', secret }),
    });
    assert.equal(res.status, 201);
    return ((await res.json()) as { id: string }).id;
  };
  const refresh = (refreshToken: string) => refreshOverHttp(served!.url, client, refreshToken);
  const rekey = (keys: Record<string, string>, json = true) => runCli(json ? ['rekey', '--json'] : ['rekey'], env(keys));

  before(async () => {
    db = await createTestDatabase();
    target = await startHttpsTarget(() => ({ status: 204 }));
    member = await createMember(db.pool);
    client = await createClient(db.pool, { name: 'Rotation platform' });
    tokens = await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
  });
  after(async () => {
    if (served) await stopProcess(served, 'SIGKILL');
    await target?.close();
    await db?.drop();
  });

  test('under the first key: a signed delivery verifies, a refresh keeps its answer sealed, a form carries its token', async () => {
    await serveWith({ SECRET_KEY: FIRST });
    hookIds.a = await subscribe('/hooks/a', SECRETS.a);
    const received = await deliveredCall();
    assertSigned(received['/hooks/a']!, SECRETS.a);

    const refreshed = await refresh(tokens.refresh_token);
    assert.equal(refreshed.status, 200);
    successor = ((await refreshed.json()) as { refresh_token: string }).refresh_token;

    const agent = new UserAgent(served!.url);
    const login = await agent.get('/login');
    form = { cookies: agent.cookies, fields: hiddenInputs(login.body, '/login') };

    const owner = await signedInAgent(served!.url, member.user.email);
    const alerts = await owner.get('/ui/alerts');
    alertsForm = { cookies: owner.cookies, fields: hiddenInputs(alerts.body, '/ui/alerts') };
    assert.equal(alertsForm.fields.enabled, 'false', 'the form turns alert e-mails off');
  });

  test('SECRET_KEY changed, the old key in SECRET_KEY_PREVIOUS: deliveries still signed, the retried refresh answered, the open form accepted', async () => {
    await serveWith({ SECRET_KEY: SECOND, SECRET_KEY_PREVIOUS: FIRST });
    // Sealed under the new key from now on.
    hookIds.b = await subscribe('/hooks/b', SECRETS.b);
    const received = await deliveredCall();
    assertSigned(received['/hooks/a']!, SECRETS.a);
    assertSigned(received['/hooks/b']!, SECRETS.b);

    const replay = await refresh(tokens.refresh_token);
    assert.equal(replay.status, 200);
    assert.equal(
      ((await replay.json()) as { refresh_token: string }).refresh_token,
      successor,
      'the same successor, opened with the old key',
    );

    // A login form rendered under the old key (a rolling rotation) still posts.
    const agent = new UserAgent(served!.url);
    for (const [name, value] of form.cookies) agent.cookies.set(name, value);
    const signedIn = await agent.post('/login', { ...form.fields, email: member.user.email, password: PASSWORD });
    assert.equal(signedIn.status, 303, 'the CSRF token made under SECRET_KEY_PREVIOUS is accepted');
  });

  test('rekey, while the service runs, re-encrypts what the old key sealed and says how many; a second run has nothing to do', async () => {
    const keys = { SECRET_KEY: SECOND, SECRET_KEY_PREVIOUS: FIRST };
    const first = await rekey(keys);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), { rekeyed: { webhook_secrets: 1, refresh_token_successors: 1 }, already_current: 1 });

    const second = await rekey(keys, false);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^re-encrypted under SECRET_KEY: webhook_secrets 0, refresh_token_successors 0$/m);
    assert.match(second.stdout, /^already current: 3$/m);
    assert.match(second.stdout, /SECRET_KEY_PREVIOUS can be removed/);

    const third = await rekey(keys);
    assert.deepEqual(JSON.parse(third.stdout), { rekeyed: { webhook_secrets: 0, refresh_token_successors: 0 }, already_current: 3 });
  });

  test('SECRET_KEY_PREVIOUS removed after rekey: deliveries still signed, the retried refresh still answered', async () => {
    await serveWith({ SECRET_KEY: SECOND });
    const received = await deliveredCall();
    assertSigned(received['/hooks/a']!, SECRETS.a);
    assertSigned(received['/hooks/b']!, SECRETS.b);
    const replay = await refresh(tokens.refresh_token);
    assert.equal(replay.status, 200);
    assert.equal(((await replay.json()) as { refresh_token: string }).refresh_token, successor);
    assert.doesNotMatch(served!.output(), /SECRET_KEY/, 'nothing to say about keys');
  });

  test('SECRET_KEY_PREVIOUS removed: a form left open since before the rotation answers 403 once; reloaded, the page shows a new one that posts', async () => {
    /** The browser that shows the open page, talking to the restarted server. */
    const browser = (open: OpenForm) => {
      const agent = new UserAgent(served!.url);
      for (const [name, value] of open.cookies) agent.cookies.set(name, value);
      return agent;
    };

    const owner = browser(alertsForm);
    const refused = await owner.post('/ui/alerts', alertsForm.fields);
    assert.equal(refused.status, 403, 'the CSRF token made under the removed key');
    assert.match(refused.body, /Form expired/);
    const reloaded = await owner.get('/ui/alerts');
    assert.equal(reloaded.status, 200, 'the session outlives the key');
    assert.match(reloaded.body, /Turn alerts off/, 'nothing was changed');
    const fields = hiddenInputs(reloaded.body, '/ui/alerts');
    assert.notEqual(fields.csrf, alertsForm.fields.csrf, 'a new token, under SECRET_KEY');
    const saved = await owner.post('/ui/alerts', fields);
    assert.equal(saved.status, 303);
    assert.match((await owner.get(saved.location!)).body, /Alert e-mails turned off\./);

    // The sign-in form: its 403 is the form again, and reloading it gives one that signs in.
    const visitor = browser(form);
    const expired = await visitor.post('/login', { ...form.fields, email: member.user.email, password: PASSWORD });
    assert.equal(expired.status, 403);
    assert.match(expired.body, /Your sign-in form expired/);
    const login = await visitor.get('/login');
    const signedIn = await visitor.post('/login', { ...hiddenInputs(login.body, '/login'), email: member.user.email, password: PASSWORD });
    assert.equal(signedIn.status, 303);
  });

  test('a key nobody kept (no SECRET_KEY_PREVIOUS, no rekey): the failure is clear, at start, on each attempt and from rekey, which succeeds once run again with that key', async () => {
    const running = await serveWith({ SECRET_KEY: LOST });
    await waitFor('the start-up line about the keys', async () => /open under neither SECRET_KEY/.test(running.output()), 60_000);
    const line = running
      .output()
      .split('\n')
      .find((text) => text.includes('open under neither SECRET_KEY'))!;
    const logged = JSON.parse(line) as { level: number; msg: string; unreadable: Record<string, number> };
    assert.equal(logged.level, 50, 'logged as an error');
    assert.deepEqual(logged.unreadable, { webhook_secrets: 2, refresh_token_successors: 1 });
    assert.match(logged.msg, /3 sealed values .*SECRET_KEY_PREVIOUS.*DATA_DIR\/secret\.key/);

    const before = target.requests.length;
    const callId = await completeCall();
    const attempt = await waitFor(
      'the failed attempt',
      async () =>
        (
          await db.pool.query<{ error: string; error_message: string; outcome: string }>(
            `SELECT a.error, a.error_message, a.outcome FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
              WHERE d.call_id = $1 AND a.subscription_id = $2`,
            [callId, hookIds.a],
          )
        ).rows[0],
      60_000,
    );
    assert.equal(attempt.error, 'internal');
    assert.equal(attempt.outcome, 'retrying', 'retried, so setting the right key lets it through');
    assert.match(
      attempt.error_message,
      /opens under neither SECRET_KEY nor SECRET_KEY_PREVIOUS.*put the key it was sealed under in SECRET_KEY_PREVIOUS/,
    );
    assert.equal(target.requests.length, before, 'nothing unsigned was sent');

    const replay = await refresh(tokens.refresh_token);
    assert.equal(replay.status, 400, 'an answer the client understands, not a 500');
    assert.equal(((await replay.json()) as { error: string }).error, 'invalid_grant');

    const failed = await rekey({ SECRET_KEY: LOST });
    assert.equal(failed.code, 1);
    assert.equal(failed.stdout, '');
    assert.match(
      failed.stderr,
      /^switchboard: error: 3 sealed values open under neither SECRET_KEY nor SECRET_KEY_PREVIOUS \(webhook_secrets 2, refresh_token_successors 1\) and were left as they are; add the key they were sealed under to SECRET_KEY_PREVIOUS/,
    );
    assert.equal(failed.stderr.trim().split('\n').length, 1);

    // As the message says: the key they were sealed under in SECRET_KEY_PREVIOUS, and rekey run again succeeds.
    const again = await rekey({ SECRET_KEY: LOST, SECRET_KEY_PREVIOUS: SECOND });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout).rekeyed, { webhook_secrets: 2, refresh_token_successors: 1 });
    const done = await rekey({ SECRET_KEY: LOST });
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual(JSON.parse(done.stdout).rekeyed, { webhook_secrets: 0, refresh_token_successors: 0 });
  });
});

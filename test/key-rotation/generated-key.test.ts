// docs/operations.md, "Rotating SECRET_KEY", with the key Switchboard generated
// itself: no SECRET_KEY and no DATABASE_URL (the embedded PostgreSQL), so the
// key is DATA_DIR/secret.key. Step 1's block runs as written; the steps after
// it restart `switchboard serve` and run `switchboard rekey` with the
// environment they name.
import { refreshOverHttp } from '../helpers/http-platform.ts';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createSecretBox, type SecretPurpose } from '../../src/crypto/secret-box.ts';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { baseEnv, cliJson, runCli, startServe, tempDataDir, type Served } from '../helpers/cli.ts';
import { createMember, PASSWORD, type Member } from '../helpers/fixtures.ts';
import { stopProcess } from '../helpers/fleet.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { createClient, issueTokens, platformHeaders, type IssuedTokens, type TestClient } from '../helpers/oauth.ts';
import { hiddenInputs, UserAgent } from '../helpers/user-agent.ts';
import { WEBHOOK_TEST_ENV, waitFor } from '../helpers/webhooks.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The sh block of docs/operations.md that contains `text`, as written (its indentation in the list removed). */
function documentBlock(text: string): string {
  const document = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
  const blocks = [...document.matchAll(/^( *)```sh\n([\s\S]*?)^ *```/gm)].map(([, indent, body]) =>
    body!.replace(new RegExp(`^${indent}`, 'gm'), ''),
  );
  const found = blocks.filter((block) => block.includes(text));
  assert.equal(found.length, 1, `one sh block of docs/operations.md contains ${text}`);
  return found[0]!;
}

/** Whether `key` opens each sealed value in the database: the webhook secrets as subscribed, then the refresh token successor. */
async function openedBy(pool: Pool, key: string): Promise<boolean[]> {
  const sealed = [
    ...(
      await pool.query<{ context: string; sealed: Buffer }>(
        'SELECT organization_id::text AS context, secret_ciphertext AS sealed FROM webhook_subscriptions WHERE secret_ciphertext IS NOT NULL ORDER BY created_at',
      )
    ).rows.map((row) => ({ ...row, purpose: 'webhook-secret' as SecretPurpose })),
    ...(
      await pool.query<{ context: string; sealed: Buffer }>(
        'SELECT successor_id::text AS context, successor_ciphertext AS sealed FROM oauth_refresh_tokens WHERE successor_ciphertext IS NOT NULL',
      )
    ).rows.map((row) => ({ ...row, purpose: 'refresh-token' as SecretPurpose })),
  ];
  return sealed.map(({ context, sealed: value, purpose }) => {
    try {
      createSecretBox(Buffer.from(key, 'base64'), purpose).open(value, context);
      return true;
    } catch {
      return false;
    }
  });
}

describe('rotating the generated DATA_DIR/secret.key as docs/operations.md says', () => {
  let work: string;
  let dataDir: string;
  let home: string;
  let served: Served | undefined;
  /** The running embedded PostgreSQL's URL (`switchboard db url`). */
  let dbUrl: string;
  let target: HttpsTarget;
  let member: Member;
  let client: TestClient;
  let tokens: IssuedTokens;
  /** The successor the first refresh returned: a replay of the first refresh token gets it again. */
  let successor: string;
  /** A sign-in page left open, rendered under the old key. */
  let form: { cookies: Map<string, string>; fields: Record<string, string> };
  let oldKey: string;
  let newKey: string;
  const secrets: Record<string, string> = {};

  const keyFile = () => path.join(dataDir, 'secret.key');
  const oldKeyFile = () => path.join(home, 'switchboard-secret.key.old');
  /** No SECRET_KEY, no DATABASE_URL: npm start's setup. */
  const env = (extra: Record<string, string> = {}) =>
    baseEnv({ ...WEBHOOK_TEST_ENV, DATA_DIR: dataDir, PORT: '0', REFRESH_REUSE_GRACE: '3600', ...extra });
  /** Steps 2 and 3: SECRET_KEY_PREVIOUS=$(cat ~/switchboard-secret.key.old). */
  const previous = () => ({ SECRET_KEY_PREVIOUS: readFileSync(oldKeyFile(), 'utf8').trim() });
  const restart = async (extra: Record<string, string> = {}) => {
    if (served) await stopProcess(served);
    served = await startServe(env(extra));
    dbUrl = (await cliJson<{ url: string }>(['db', 'url'], env())).url;
  };
  /** A pool on the embedded database for `use`, closed before any restart stops that database. */
  const withPool = async <T>(use: (pool: Pool) => Promise<T>): Promise<T> => {
    const pool = createPool(dbUrl, 2);
    try {
      return await use(pool);
    } finally {
      await pool.end();
    }
  };
  const subscribe = async (name: string) => {
    secrets[name] = `secret of ${name} ${randomBytes(8).toString('hex')}`;
    const res = await fetch(`${served!.url}/webhooks/subscribe`, {
      method: 'POST',
      headers: { ...platformHeaders(tokens, client), 'content-type': 'application/json' },
      body: JSON.stringify({ hookUrl: `${target.url}/${name}`, event: 'call.completed', secret: secrets[name] }),
    });
    assert.equal(res.status, 201, await res.clone().text());
  };
  /** Completes a call and waits until every subscribed hook has it, each signed with its own secret. */
  const assertDeliveredSigned = async () => {
    const res = await fetch(`${served!.url}/calls`, {
      method: 'POST',
      headers: { 'x-user-token': member.token, 'content-type': 'application/json' },
      body: JSON.stringify({ summary: 'Booked a visit', duration_seconds: 30 }),
    });
    assert.equal(res.status, 201);
    const { id } = (await res.json()) as { id: string };
    const forCall = () => target.requests.filter((request) => (JSON.parse(request.body) as { id: string }).id === id);
    const names = Object.keys(secrets);
    await waitFor(`the call at each of ${names.length} hooks`, async () => forCall().length >= names.length, 60_000);
    for (const name of names) {
      const request = forCall().find((each) => each.url === `/${name}`);
      assert.equal(request?.headers['x-signature'], secrets[name], `${name}: signed with its secret`);
    }
  };
  const refresh = (refreshToken: string) => refreshOverHttp(served!.url, client, refreshToken);

  before(async () => {
    work = await tempDataDir();
    dataDir = path.join(work, '.data');
    home = path.join(work, 'home');
    await mkdir(dataDir, { mode: 0o755 });
    await mkdir(home);
    target = await startHttpsTarget(() => ({ status: 204 }));
  });
  after(async () => {
    if (served) await stopProcess(served);
    await target?.close();
    await rm(work, { recursive: true, force: true });
  });

  test('the first start generates DATA_DIR/secret.key; a secret, a refresh and a form are made under it', async () => {
    await restart();
    oldKey = readFileSync(keyFile(), 'utf8').trim();
    assert.equal(Buffer.from(oldKey, 'base64').length, 32);
    assert.equal(statSync(keyFile()).mode & 0o777, 0o600);

    await withPool(async (pool) => {
      member = await createMember(pool);
      client = await createClient(pool, { name: 'Generated key platform' });
      tokens = await issueTokens(pool, { client, userId: member.user.id, organizationId: member.org.id });
    });
    await subscribe('before');
    await assertDeliveredSigned();
    const refreshed = await refresh(tokens.refresh_token);
    assert.equal(refreshed.status, 200);
    successor = ((await refreshed.json()) as IssuedTokens).refresh_token;
    const agent = new UserAgent(served!.url);
    form = { cookies: agent.cookies, fields: hiddenInputs((await agent.get('/login')).body, '/login') };
    assert.deepEqual(await withPool((pool) => openedBy(pool, oldKey)), [true, true]);
  });

  test('step 1 as written: the old key aside outside DATA_DIR, a new one in the file, which stays private', async () => {
    execFileSync('bash', ['-euc', documentBlock('.data/secret.key')], { cwd: work, env: { ...process.env, HOME: home } });
    assert.equal(readFileSync(oldKeyFile(), 'utf8').trim(), oldKey);
    newKey = readFileSync(keyFile(), 'utf8').trim();
    assert.equal(Buffer.from(newKey, 'base64').length, 32);
    assert.notEqual(newKey, oldKey);
    assert.equal(statSync(keyFile()).mode & 0o777, 0o600);
    assert.equal(statSync(oldKeyFile()).mode & 0o077, 0, 'the old key is readable by its owner alone');
  });

  test('step 2: restarted with SECRET_KEY_PREVIOUS from the old key file, what the old key made still works; the file’s new key seals', async () => {
    await restart(previous());
    await subscribe('meanwhile');
    await assertDeliveredSigned();
    const replay = await refresh(tokens.refresh_token);
    assert.equal(replay.status, 200);
    assert.equal(((await replay.json()) as IssuedTokens).refresh_token, successor);
    const agent = new UserAgent(served!.url);
    for (const [name, value] of form.cookies) agent.cookies.set(name, value);
    const signedIn = await agent.post('/login', { ...form.fields, email: member.user.email, password: PASSWORD });
    assert.equal(signedIn.status, 303, 'the form rendered under the old key posts');
    // The secret subscribed now: sealed under the file's new key.
    assert.deepEqual(await withPool((pool) => openedBy(pool, newKey)), [false, true, false]);
  });

  test('step 3: rekey, with the same environment, re-encrypts what the old key sealed under the file’s key', async () => {
    const rekeyed = await runCli(['rekey', '--json'], env(previous()));
    assert.equal(rekeyed.code, 0, rekeyed.stderr);
    assert.deepEqual(JSON.parse(rekeyed.stdout), { rekeyed: { webhook_secrets: 1, refresh_token_successors: 1 }, already_current: 1 });
    assert.deepEqual(await withPool((pool) => openedBy(pool, newKey)), [true, true, true]);
    assert.deepEqual(await withPool((pool) => openedBy(pool, oldKey)), [false, false, false]);
  });

  test('step 4: SECRET_KEY_PREVIOUS gone and the old key destroyed, everything works under DATA_DIR/secret.key alone', async () => {
    await rm(oldKeyFile());
    await restart();
    assert.equal(readFileSync(keyFile(), 'utf8').trim(), newKey, 'the file keeps the new key');
    await assertDeliveredSigned();
    const replay = await refresh(tokens.refresh_token);
    assert.equal(replay.status, 200);
    assert.equal(((await replay.json()) as IssuedTokens).refresh_token, successor);
  });
});

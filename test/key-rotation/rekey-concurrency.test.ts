import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { runCli, startServe, type Served } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';
import { fleetEnv, stopProcess } from '../helpers/fleet.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';

const [OLD, NEW] = [randomBytes(32), randomBytes(32)];
const ORGANIZATIONS = 6;
const PER_ORGANIZATION = 50;
const WRITERS = 4;

interface Hook {
  id: string;
  organizationId: string;
  headers: Record<string, string>;
  hookUrl: string;
  /** The secret of the last write that answered; undefined once unsubscribed. */
  secret: string | undefined;
}

// `switchboard rekey` beside a running service whose requests rewrite and
// delete the very values it re-encrypts: each replacement is a
// compare-and-set, so a secret written meanwhile is never overwritten with
// the re-encrypted old one, and a subscription deleted meanwhile stays gone.
describe('switchboard rekey while subscriptions are rewritten and deleted', () => {
  let db: TestDatabase;
  let served: Served | undefined;
  /** In id order, the order rekey goes through them. */
  let hooks: Hook[] = [];
  const env = (keys: Record<string, string>) => fleetEnv(db.url, keys);

  const send = async (hook: Pick<Hook, 'headers'>, method: 'POST' | 'DELETE', body: Record<string, unknown>) => {
    const res = await fetch(`${served!.url}/webhooks/subscribe`, {
      method,
      headers: { ...hook.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.status === 200 || res.status === 201, `${method} /webhooks/subscribe answered ${res.status}: ${text}`);
    return text ? (JSON.parse(text) as { id?: string }) : {};
  };
  const write = async (hook: Pick<Hook, 'headers' | 'hookUrl' | 'secret'>, secret: string) => {
    const answer = await send(hook, 'POST', { hookUrl: hook.hookUrl, event: 'call.completed', secret });
    hook.secret = secret;
    return answer.id!;
  };
  const firstStored = async () =>
    (await db.pool.query<{ sealed: Buffer }>('SELECT secret_ciphertext AS sealed FROM webhook_subscriptions ORDER BY id LIMIT 1')).rows[0]!
      .sealed;

  before(async () => {
    db = await createTestDatabase();
    served = await startServe(env({ SECRET_KEY: OLD.toString('base64') }));
    for (let o = 0; o < ORGANIZATIONS; o++) {
      const member = await createMember(db.pool);
      const client = await createClient(db.pool, { name: `Platform ${o}` });
      const tokens = await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
      for (let i = 0; i < PER_ORGANIZATION; i++) {
        const hook = {
          organizationId: member.org.id,
          headers: platformHeaders(tokens, client),
          hookUrl: `https://127.0.0.1:9/hooks/${o}-${i}`,
        };
        const id = await write({ ...hook, secret: undefined }, `secret ${o}-${i} under the old key`);
        hooks.push({ ...hook, id, secret: `secret ${o}-${i} under the old key` });
      }
    }
    // PostgreSQL orders uuids as their bytes, which is the order of their lowercase hex.
    hooks = hooks.sort((a, b) => (a.id < b.id ? -1 : 1));
    // Every process now seals under the new key and still opens the old one.
    await stopProcess(served);
    served = await startServe(env({ SECRET_KEY: NEW.toString('base64'), SECRET_KEY_PREVIOUS: OLD.toString('base64') }));
  });
  after(async () => {
    if (served) await stopProcess(served, 'SIGKILL');
    await db?.drop();
  });

  test('no value written meanwhile is overwritten, none deleted comes back, and all end under SECRET_KEY', async () => {
    const keys = { SECRET_KEY: NEW.toString('base64'), SECRET_KEY_PREVIOUS: OLD.toString('base64') };
    const before = await firstStored();
    const rekeying = runCli(['rekey', '--json'], env(keys));
    let running = true;
    void rekeying.then(() => {
      running = false;
    });
    // rekey has read every value (one batch) once it replaced the first: from then on the writers
    // rewrite and delete, from the last id down, values it read under the old key and has not replaced yet.
    while (running && (await firstStored()).equals(before)) await new Promise((resolve) => setTimeout(resolve, 5));
    const writer = async (w: number) => {
      const mine = hooks.filter((_, index) => index % WRITERS === w).reverse();
      for (let round = 1; running; round++) {
        for (const hook of mine) {
          if (!running) return;
          if (hook.secret === undefined) continue;
          if (round === 1 && mine.indexOf(hook) % 8 === 7) {
            await send(hook, 'DELETE', { hookUrl: hook.hookUrl });
            hook.secret = undefined;
          } else {
            await write(hook, `secret rewritten in round ${round} by writer ${w}`);
          }
        }
      }
    };
    // A failed write stops every writer (and rekey's result is then not looked at).
    const writers = Array.from({ length: WRITERS }, (_, w) =>
      writer(w).catch((error: unknown) => {
        running = false;
        return error;
      }),
    );
    const rekeyed = await rekeying;
    running = false;
    for (const failure of await Promise.all(writers)) if (failure) throw failure;
    assert.equal(rekeyed.code, 0, rekeyed.stderr);

    const report = JSON.parse(rekeyed.stdout) as { rekeyed: { webhook_secrets: number }; already_current: number };
    assert.ok(report.rekeyed.webhook_secrets > 0);
    assert.ok(
      report.rekeyed.webhook_secrets < hooks.length,
      `rekey found values changed between its read and its write (${report.rekeyed.webhook_secrets} of ${hooks.length} re-encrypted)`,
    );
    assert.ok(report.rekeyed.webhook_secrets + report.already_current <= hooks.length);

    const { rows } = await db.pool.query<{ id: string; secret_ciphertext: Buffer }>(
      'SELECT id, secret_ciphertext FROM webhook_subscriptions',
    );
    const stored = new Map(rows.map((row) => [row.id, row.secret_ciphertext]));
    const newOnly = createSecretBox(NEW, 'webhook-secret');
    const deleted = hooks.filter((hook) => hook.secret === undefined);
    assert.ok(deleted.length > 0, 'some subscriptions were deleted meanwhile');
    for (const hook of deleted) assert.equal(stored.get(hook.id), undefined, `${hook.hookUrl} stays deleted`);
    for (const hook of hooks.filter((h) => h.secret !== undefined)) {
      const sealed = stored.get(hook.id);
      assert.ok(sealed, `${hook.hookUrl} is still there`);
      assert.equal(newOnly.open(sealed, hook.organizationId), hook.secret, `${hook.hookUrl} holds its last written secret`);
    }

    const again = await runCli(['rekey', '--json'], env(keys));
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), {
      rekeyed: { webhook_secrets: 0, refresh_token_successors: 0 },
      already_current: hooks.length - deleted.length,
    });
  });
});

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
  organizationId: string;
  headers: Record<string, string>;
  hookUrl: string;
  /** The secret of the last write that answered; undefined once unsubscribed. */
  secret: string | undefined;
  writes: number;
}

// `switchboard rekey` beside a running service whose requests rewrite and
// delete the very values it re-encrypts: each replacement is a
// compare-and-set, so a secret written meanwhile is never overwritten with
// the re-encrypted old one, and a subscription deleted meanwhile stays gone.
describe('switchboard rekey while subscriptions are rewritten and deleted', () => {
  let db: TestDatabase;
  let served: Served | undefined;
  const hooks: Hook[] = [];
  const env = (keys: Record<string, string>) => fleetEnv(db.url, keys);

  const send = async (hook: Hook, method: 'POST' | 'DELETE', body: Record<string, unknown>) => {
    const res = await fetch(`${served!.url}/webhooks/subscribe`, {
      method,
      headers: { ...hook.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.ok(res.status === 200 || res.status === 201, `${method} /webhooks/subscribe answered ${res.status}: ${await res.text()}`);
  };
  const write = async (hook: Hook, secret: string) => {
    await send(hook, 'POST', { hookUrl: hook.hookUrl, event: 'call.completed', secret });
    hook.secret = secret;
    hook.writes++;
  };

  before(async () => {
    db = await createTestDatabase();
    served = await startServe(env({ SECRET_KEY: OLD.toString('base64') }));
    for (let o = 0; o < ORGANIZATIONS; o++) {
      const member = await createMember(db.pool);
      const client = await createClient(db.pool, { name: `Platform ${o}` });
      const tokens = await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
      for (let i = 0; i < PER_ORGANIZATION; i++) {
        const hook: Hook = {
          organizationId: member.org.id,
          headers: platformHeaders(tokens, client),
          hookUrl: `https://127.0.0.1:9/hooks/${o}-${i}`,
          secret: undefined,
          writes: 0,
        };
        await write(hook, `secret ${o}-${i} under the old key`);
        hooks.push(hook);
      }
    }
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
    let running = true;
    let duringRekey = 0;
    // Each writer owns every WRITERS-th hook, so the last answered write of a hook is the one stored.
    const writer = async (w: number) => {
      const mine = hooks.filter((_, index) => index % WRITERS === w);
      for (let round = 1; running; round++) {
        for (const hook of mine) {
          if (!running) return;
          if (hook.secret === undefined) continue;
          if (Math.random() < 0.1) {
            await send(hook, 'DELETE', { hookUrl: hook.hookUrl });
            hook.secret = undefined;
          } else {
            await write(hook, `secret rewritten in round ${round} by writer ${w}`);
          }
          duringRekey++;
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
    const rekeyed = await runCli(['rekey', '--json'], env(keys));
    const written = duringRekey;
    running = false;
    for (const failure of await Promise.all(writers)) if (failure) throw failure;
    assert.equal(rekeyed.code, 0, rekeyed.stderr);
    assert.ok(written > 0, 'the writers ran while rekey did');

    const report = JSON.parse(rekeyed.stdout) as { rekeyed: { webhook_secrets: number }; already_current: number };
    const seen = report.rekeyed.webhook_secrets + report.already_current;
    assert.ok(seen <= hooks.length, `${seen} counted of ${hooks.length}`);
    assert.ok(report.rekeyed.webhook_secrets > 0, 'some values were still under the old key when rekey reached them');

    const { rows } = await db.pool.query<{ callback_url: string; organization_id: string; secret_ciphertext: Buffer }>(
      'SELECT callback_url, organization_id, secret_ciphertext FROM webhook_subscriptions',
    );
    const stored = new Map(rows.map((row) => [row.callback_url, row]));
    const newOnly = createSecretBox(NEW, 'webhook-secret');
    const deleted = hooks.filter((hook) => hook.secret === undefined);
    assert.ok(deleted.length > 0, 'some subscriptions were deleted meanwhile');
    for (const hook of deleted) assert.equal(stored.get(hook.hookUrl), undefined, `${hook.hookUrl} stays deleted`);
    for (const hook of hooks.filter((h) => h.secret !== undefined)) {
      const row = stored.get(hook.hookUrl);
      assert.ok(row, `${hook.hookUrl} is still there`);
      assert.equal(newOnly.open(row.secret_ciphertext, hook.organizationId), hook.secret, `${hook.hookUrl} holds its last written secret`);
    }

    const again = await runCli(['rekey', '--json'], env(keys));
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), {
      rekeyed: { webhook_secrets: 0, refresh_token_successors: 0 },
      already_current: hooks.length - deleted.length,
    });
  });
});

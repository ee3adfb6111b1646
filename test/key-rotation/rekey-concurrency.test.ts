import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { runCli, startServe, type Served } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';
import { fleetEnv, stopProcess } from '../helpers/fleet.ts';
import { waitForBlockedBy } from '../helpers/lock-waits.ts';
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
// The overlap is made, not hoped for: rekey waits at a row the test holds
// while the service changes every value it has read and not replaced.
describe('switchboard rekey while subscriptions are rewritten and deleted', () => {
  let db: TestDatabase;
  let served: Served | undefined;
  /** In id order, the order rekey goes through them. */
  let hooks: Hook[] = [];
  const env = (keys: Record<string, string>) => fleetEnv(db.url, keys);

  /** One request to /webhooks/subscribe, which must answer `status`. */
  const send = async (hook: Pick<Hook, 'headers'>, method: 'POST' | 'DELETE', body: Record<string, unknown>, status: number) => {
    const res = await fetch(`${served!.url}/webhooks/subscribe`, {
      method,
      headers: { ...hook.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    assert.equal(res.status, status, `${method} /webhooks/subscribe: ${text}`);
    return text ? (JSON.parse(text) as { id?: string }) : {};
  };
  /** Subscribes the hook's URL with `secret`: 201 the first time, 200 (the same subscription, its secret changed) after. */
  const write = async (hook: Pick<Hook, 'headers' | 'hookUrl' | 'secret'>, secret: string, status: 200 | 201 = 200) => {
    const answer = await send(hook, 'POST', { hookUrl: hook.hookUrl, event: 'call.completed', secret }, status);
    hook.secret = secret;
    return answer.id!;
  };
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
        const id = await write({ ...hook, secret: undefined }, `secret ${o}-${i} under the old key`, 201);
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
    // rekey reads every value (one batch), then replaces them in id order. The test holds the second
    // row, so rekey replaces the first and waits there, seen in PostgreSQL; meanwhile the service
    // rewrites or deletes every later value, each read by rekey under the old key and not replaced
    // yet. Only then does rekey go on: each of its compare-and-sets meets a value changed meanwhile.
    const gate = await db.pool.connect();
    let rekeying: ReturnType<typeof runCli> | undefined;
    try {
      await gate.query('BEGIN');
      const { pid } = (await gate.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
      await gate.query('SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR UPDATE', [hooks[1]!.id]);
      let finished = false;
      rekeying = runCli(['rekey', '--json'], env(keys));
      void rekeying.finally(() => (finished = true));
      await waitForBlockedBy(db.pool, pid, 60_000);
      const later = hooks.slice(2).reverse();
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          for (const [index, hook] of later.entries()) {
            if (index % WRITERS !== w) continue;
            if (index % 8 === 7) {
              await send(hook, 'DELETE', { hookUrl: hook.hookUrl }, 200);
              hook.secret = undefined;
            } else await write(hook, `secret rewritten by writer ${w}`);
          }
        }),
      );
      assert.equal(finished, false, 'rekey still waits for the held row');
      await gate.query('COMMIT');
    } catch (error) {
      await gate.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      gate.release();
    }
    const rekeyed = await rekeying;
    assert.equal(rekeyed.code, 0, rekeyed.stderr);

    const report = JSON.parse(rekeyed.stdout) as { rekeyed: { webhook_secrets: number }; already_current: number };
    const deleted = hooks.filter((hook) => hook.secret === undefined);
    // The two rows written before and at the gate; every later one was found changed (rewritten under SECRET_KEY, or gone).
    assert.equal(report.rekeyed.webhook_secrets, 2);
    assert.equal(report.already_current, hooks.length - 2 - deleted.length);

    const { rows } = await db.pool.query<{ id: string; secret_ciphertext: Buffer }>(
      'SELECT id, secret_ciphertext FROM webhook_subscriptions',
    );
    const stored = new Map(rows.map((row) => [row.id, row.secret_ciphertext]));
    const newOnly = createSecretBox(NEW, 'webhook-secret');
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

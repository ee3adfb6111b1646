// Migration 0037 (secret_format): a subscription stored before it keeps
// today's signing rule, whatever its secret looks like (docs/interface.md §6.2).
import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createSecretBox } from '../../src/crypto/secret-box.ts';
import { MIGRATIONS_DIR, migrate } from '../../src/db/migrate.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';

const MIGRATION = '0037_secret_format.sql';

describe('migration 0037: the signing rule of subscriptions made before it', () => {
  let db: TestDatabase;
  let before0037: string;
  before(async () => {
    db = await createTestDatabase({ migrated: false });
    before0037 = await mkdtemp(path.join(tmpdir(), 'sb-migrations-'));
    for (const name of await readdir(MIGRATIONS_DIR)) {
      if (name.endsWith('.sql') && name < MIGRATION) await cp(path.join(MIGRATIONS_DIR, name), path.join(before0037, name));
    }
  });
  after(async () => {
    await db.drop();
    await rm(before0037, { recursive: true, force: true });
  });

  test("rows with a secret, a whsec_-looking one included, and rows without become 'plain'; no other rule can be stored", async () => {
    await migrate(db.pool, before0037);
    const member = await createMember(db.pool);
    // The client and its grant as rows of the schema before 0037 (today's services write columns added since).
    const client = (
      await db.pool.query<{ id: string; client_id: string }>(
        `INSERT INTO oauth_clients (client_id, secret_hash, name, redirect_uris, scopes)
         VALUES ('secret-format-client', $1, 'Test Platform', ARRAY['https://platform.example.com/cb'], ARRAY['calls:read'])
         RETURNING id, client_id`,
        [Buffer.alloc(32, 3)],
      )
    ).rows[0]!;
    const grant = (
      await db.pool.query<{ id: string }>(
        `INSERT INTO oauth_grants (client_id, user_id, organization_id, scopes) VALUES ($1, $2, $3, ARRAY['calls:read']) RETURNING id`,
        [client.id, member.user.id, member.org.id],
      )
    ).rows[0]!;
    const box = createSecretBox(Buffer.alloc(32, 7));
    const insert = (url: string, secret: string | null) =>
      db.pool.query(
        `INSERT INTO webhook_subscriptions (organization_id, client_id, grant_id, event, callback_url, secret_ciphertext)
         VALUES ($1, $2, $3, 'call.completed', $4, $5)`,
        [member.org.id, client.client_id, grant.id, url, secret === null ? null : box.seal(secret, member.org.id)],
      );
    await insert('https://example.com/whsec-looking', `whsec_${Buffer.alloc(32, 1).toString('base64')}`);
    await insert('https://example.com/plain', 'plain secret');
    await insert('https://example.com/none', null);

    // The later migrations come after it, as on any database upgraded from before it.
    assert.equal((await migrate(db.pool)).applied[0], MIGRATION);
    const { rows } = await db.pool.query<{ callback_url: string; secret_format: string }>(
      'SELECT callback_url, secret_format FROM webhook_subscriptions ORDER BY callback_url',
    );
    assert.deepEqual(rows, [
      { callback_url: 'https://example.com/none', secret_format: 'plain' },
      { callback_url: 'https://example.com/plain', secret_format: 'plain' },
      { callback_url: 'https://example.com/whsec-looking', secret_format: 'plain' },
    ]);
    await assert.rejects(
      db.pool.query("UPDATE webhook_subscriptions SET secret_format = 'base64'"),
      /webhook_subscriptions_secret_format_check/,
    );
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { upsertPublicClient } from '../../src/oauth/clients.queries.ts';
import { purgeExpiredOAuthRows } from '../../src/oauth/oauth.maintenance.ts';
import { createGrant } from '../../src/oauth/tokens.service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, issueTokens } from '../helpers/oauth.ts';

describe('OAuth housekeeping', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  test('tokens expired for more than a day are deleted; live and recently expired ones stay', async () => {
    const client = await createClient(db.pool);
    const member = await createMember(db.pool);
    const old = await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    const recent = await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    const live = await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens']) {
      await db.pool.query(`UPDATE ${table} SET expires_at = now() - interval '25 hours' WHERE grant_id = $1`, [old.grant_id]);
      await db.pool.query(`UPDATE ${table} SET expires_at = now() - interval '1 hour' WHERE grant_id = $1`, [recent.grant_id]);
    }
    assert.equal(await purgeExpiredOAuthRows(db.pool), 2);
    const { rows } = await db.pool.query(`SELECT grant_id FROM oauth_access_tokens UNION ALL SELECT grant_id FROM oauth_refresh_tokens`);
    const left = rows.map((r) => r.grant_id).sort();
    assert.deepEqual(left, [recent.grant_id, recent.grant_id, live.grant_id, live.grant_id].sort());
  });

  test('a self-registered client nobody signed in with is deleted after 30 days; a used or younger one stays', async () => {
    const member = await createMember(db.pool);
    const register = (clientId: string) =>
      upsertPublicClient(db.pool, {
        clientId,
        kind: 'registered',
        name: clientId,
        redirectUris: ['http://127.0.0.1/cb'],
        scopes: ['calls:read'],
        metadataExpiresAt: null,
      });
    const unused = await register('unused-31-days');
    const used = await register('used-31-days');
    await register('unused-29-days');
    await createGrant(db.pool, { clientUuid: used.id, userId: member.user.id, organizationId: member.org.id, scopes: ['calls:read'] });
    await db.pool.query(`UPDATE oauth_clients SET created_at = now() - interval '31 days' WHERE id = ANY($1)`, [[unused.id, used.id]]);
    await db.pool.query(`UPDATE oauth_clients SET created_at = now() - interval '29 days' WHERE client_id = 'unused-29-days'`);
    await purgeExpiredOAuthRows(db.pool);
    const { rows } = await db.pool.query<{ client_id: string }>(
      "SELECT client_id FROM oauth_clients WHERE kind = 'registered' ORDER BY client_id",
    );
    assert.deepEqual(
      rows.map((r) => r.client_id),
      ['unused-29-days', 'used-31-days'],
    );
  });
});

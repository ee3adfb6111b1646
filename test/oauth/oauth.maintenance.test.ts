import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { purgeExpiredOAuthRows } from '../../src/oauth/oauth.maintenance.ts';
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
});

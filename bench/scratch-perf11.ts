import pg from 'pg';
import { hashToken } from '../src/auth/tokens.ts';
import { insertCompletedCall, readRecentCallsAsPlatform } from '../src/calls/calls.queries.ts';
import { recentCalls } from '../src/calls/calls.service.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { withOrg } from '../src/db/with-org.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { createClient } from '../src/oauth/clients.service.ts';
import { createGrant, issueTokenPair, resolveAccessToken } from '../src/oauth/tokens.service.ts';
import { insertOrganization } from '../src/orgs/organizations.queries.ts';
import { createUser } from '../src/orgs/orgs.service.ts';

const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await admin.connect();
await admin.query('DROP DATABASE IF EXISTS perf11_scratch WITH (FORCE)');
await admin.query('CREATE DATABASE perf11_scratch');
const url = 'postgres://postgres@127.0.0.1:5432/perf11_scratch';
const pool = createPool(url, 4);
await migrate(pool);
const org = await insertOrganization(pool, 'Bench Org');
const user = await createUser(pool, { email: 'bench@example.com', password: 'bench-password', organizationId: org.id, role: 'owner' });
const client = await createClient(pool, { name: 'Bench Platform', redirectUris: ['https://bench.example/cb'] });
const tokens = await withTransaction(pool, async (tx) => {
  const grant = await createGrant(tx, { clientUuid: client.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] });
  return issueTokenPair(tx, { accessTokenTtl: 3600, refreshTokenTtl: 99999 }, { grantId: grant.id, accessScopes: ['calls:read'], refreshScopes: ['calls:read'] });
});
await withOrg(pool, org.id, async (tx) => {
  for (let i = 0; i < 10000; i++) await insertCompletedCall(tx, { agentId: null, summary: `Bench call ${i}`, durationSeconds: i % 600 });
});
await pool.query('ANALYZE');
const input = { tokenHash: hashToken(tokens.access_token), clientId: client.client_id, secretHash: hashToken(client.client_secret), scope: 'calls:read', limit: 10 };
for (const [name, fn] of [
  ['one statement', () => readRecentCallsAsPlatform(pool, input)],
  ['old path', async () => { const a = await resolveAccessToken(pool, tokens.access_token); return recentCalls(pool, a!.organization_id, 10); }],
] as const) {
  for (let round = 0; round < 3; round++) {
    const t0 = performance.now();
    for (let i = 0; i < 1000; i++) await fn();
    process.stdout.write(`${name}: ${((performance.now() - t0) / 1000).toFixed(3)} ms/call\n`);
  }
}
const c = await pool.connect();
await c.query("LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_analyze = on; SET client_min_messages = log; SET auto_explain.log_level = notice");
c.on('notice', (n) => process.stdout.write(n.message + '\n'));
for (let i = 0; i < 8; i++) await readRecentCallsAsPlatform(c, input);
c.release();
await pool.end();
await admin.end();

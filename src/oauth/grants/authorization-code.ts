// grant_type=authorization_code (RFC 6749 §4.1.3): exchange a code for the
// first access/refresh pair of its grant.
import { hashToken } from '../../auth/tokens.ts';
import type { Pool } from '../../db/pool.ts';
import { AUTHORIZATION_CODE_CHECKS } from '../checks/index.ts';
import { stringParam } from '../checks/context.ts';
import { lockAuthorizationCode, markAuthorizationCodeUsed } from '../grants.queries.ts';
import { InvalidGrant, InvalidRequest } from '../oauth.errors.ts';
import { issueTokenPair } from '../tokens.service.ts';
import { failedCheck, inGrantTransaction } from './grant-transaction.ts';
import type { GrantHandler } from './grant-handler.ts';

export const handleAuthorizationCode: GrantHandler = async function handleAuthorizationCode(pool: Pool, ttls, client, params, options) {
  const code = stringParam(params, 'code');
  if (code === undefined) throw new InvalidRequest('code is required (RFC 6749 §4.1.3)');
  const codeHash = hashToken(code);
  return inGrantTransaction(pool, options.caches, client.client_id, async (tx) => {
    const record = await lockAuthorizationCode(tx, codeHash);
    if (!record) return new InvalidGrant('authorization code is unknown (RFC 6749 §5.2)');
    const failed = await failedCheck(tx, AUTHORIZATION_CODE_CHECKS, { client, params, code: record }, record.grant_id);
    if (failed) return failed;
    await markAuthorizationCodeUsed(tx, codeHash);
    const { refresh_token_id: _id, ...tokens } = await issueTokenPair(tx, ttls, {
      grantId: record.grant_id,
      accessScopes: record.scopes,
      refreshScopes: record.scopes,
    });
    return tokens;
  });
};

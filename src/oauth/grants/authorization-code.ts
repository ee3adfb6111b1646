// grant_type=authorization_code (RFC 6749 §4.1.3): exchange a code for the
// first access/refresh pair of its grant.
import { hashToken } from '../../auth/tokens.ts';
import type { Pool } from '../../db/pool.ts';
import { withTransaction } from '../../db/transaction.ts';
import { AUTHORIZATION_CODE_CHECKS, runChecks } from '../checks/index.ts';
import { stringParam } from '../checks/context.ts';
import { lockAuthorizationCode, markAuthorizationCodeUsed, revokeGrant } from '../grants.queries.ts';
import { InvalidGrant, InvalidRequest, OAuthError } from '../oauth.errors.ts';
import { issueTokenPair, type TokenResponse } from '../tokens.service.ts';
import type { GrantHandler } from './index.ts';
import { tags } from '../../cache/tags.ts';

export const handleAuthorizationCode: GrantHandler = async function handleAuthorizationCode(pool: Pool, ttls, client, params, options) {
  const code = stringParam(params, 'code');
  if (code === undefined) throw new InvalidRequest('code is required (RFC 6749 §4.1.3)');
  const codeHash = hashToken(code);
  // The revocation a failed check asks for must be committed, so failures come
  // back from the transaction as values and are thrown after it.
  const outcome = await withTransaction<TokenResponse | OAuthError>(pool, async (tx) => {
    const record = await lockAuthorizationCode(tx, codeHash);
    if (!record) return new InvalidGrant('authorization code is unknown (RFC 6749 §5.2)');
    try {
      await runChecks(AUTHORIZATION_CODE_CHECKS, { client, params, code: record });
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (error.revokeGrant) {
        await revokeGrant(tx, record.grant_id, error.revokeGrant);
        error.revokedGrantId = record.grant_id;
      }
      return error;
    }
    await markAuthorizationCodeUsed(tx, codeHash);
    const { refresh_token_id: _id, ...tokens } = await issueTokenPair(tx, ttls, {
      grantId: record.grant_id,
      accessScopes: record.scopes,
      refreshScopes: record.scopes,
    });
    return tokens;
  });
  if (outcome instanceof OAuthError) {
    // A revocation a failed check made is committed now: this process forgets the grant's tokens at once.
    if (outcome.revokedGrantId) options.caches.evict([tags.grant(outcome.revokedGrantId)]);
    throw outcome;
  }
  return outcome;
};

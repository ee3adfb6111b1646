// OAuth 2.1 §7.5.1 and RFC 9700 §2.1.1: a public client has no secret, so a
// stolen code would be redeemable by anyone; PKCE is what binds the code to the
// client that asked. Its authorization requests must carry a code_challenge.
import { InvalidRequest } from '../oauth.errors.ts';
import { isPublicKind } from '../public-clients/audience.ts';
import { established, type AuthorizationCheck } from './context.ts';

export const checkPublicClientPkce: AuthorizationCheck = function checkPublicClientPkce(ctx) {
  if (!isPublicKind(established(ctx.client, 'check-client').kind)) return;
  if (established(ctx.codeChallenge, 'check-pkce') === null) {
    throw new InvalidRequest('code_challenge is required: public clients must use PKCE (RFC 9700 §2.1.1, OAuth 2.1 §7.5.1)');
  }
};

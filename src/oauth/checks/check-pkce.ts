// RFC 7636 §4.3 and RFC 9700 §2.1.1: PKCE with S256 only. "plain" is refused,
// and so is a challenge without a method (RFC 7636 §4.3 defaults it to plain).
// A method without a challenge is malformed. PKCE is optional for our
// confidential clients; when a challenge is given, the code is bound to it.
import { InvalidRequest } from '../oauth.errors.ts';
import { stringParam, type AuthorizationCheck } from './context.ts';

/** BASE64URL(SHA256(verifier)) is always 43 characters (RFC 7636 §4.2). */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export const checkPkce: AuthorizationCheck = function checkPkce(ctx) {
  const challenge = stringParam(ctx.params, 'code_challenge');
  const method = stringParam(ctx.params, 'code_challenge_method');
  if (challenge === undefined) {
    if (method !== undefined) throw new InvalidRequest('code_challenge_method was given without code_challenge (RFC 7636 §4.3)');
    ctx.codeChallenge = null;
    return;
  }
  if (method === undefined) {
    throw new InvalidRequest(
      'code_challenge_method is required and must be S256; the plain default is not supported (RFC 7636 §4.3, RFC 9700 §2.1.1)',
    );
  }
  if (method !== 'S256')
    throw new InvalidRequest('code_challenge_method must be S256; plain is not supported (RFC 7636 §4.3, RFC 9700 §2.1.1)');
  if (!S256_CHALLENGE.test(challenge)) throw new InvalidRequest('code_challenge must be 43 base64url characters (RFC 7636 §4.2)');
  ctx.codeChallenge = challenge;
};

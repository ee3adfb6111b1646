// RFC 7636 §4.5 and §4.6: a code bound to a challenge needs the verifier, and
// BASE64URL(SHA256(verifier)) must equal the challenge. RFC 9700 §2.1.1: a
// verifier for a code issued without a challenge is refused (PKCE downgrade).
import { createHash, timingSafeEqual } from 'node:crypto';
import { InvalidGrant, InvalidRequest } from '../oauth.errors.ts';
import { stringParam, type CodeExchangeCheck } from './context.ts';

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

export const checkPkceVerifier: CodeExchangeCheck = function checkPkceVerifier(ctx) {
  const verifier = stringParam(ctx.params, 'code_verifier');
  const challenge = ctx.code.code_challenge;
  if (challenge === null) {
    if (verifier !== undefined) {
      throw new InvalidGrant(
        'code_verifier was sent but the authorization request had no code_challenge (RFC 9700 §2.1.1, PKCE downgrade)',
      );
    }
    return;
  }
  if (verifier === undefined)
    throw new InvalidGrant('code_verifier is required: the authorization request had a code_challenge (RFC 7636 §4.5)');
  if (!VERIFIER.test(verifier)) throw new InvalidRequest('code_verifier must be 43 to 128 unreserved characters (RFC 7636 §4.1)');
  const computed = createHash('sha256').update(verifier, 'ascii').digest();
  const expected = Buffer.from(challenge, 'base64url');
  if (expected.length !== computed.length || !timingSafeEqual(expected, computed)) {
    throw new InvalidGrant('PKCE verification failed: code_verifier does not match code_challenge (RFC 7636 §4.6)');
  }
};

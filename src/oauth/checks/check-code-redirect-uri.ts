// RFC 6749 §4.1.3: when the authorization request carried redirect_uri, the
// token request must carry the identical value; when given, it must match.
import { InvalidGrant } from '../oauth.errors.ts';
import { stringParam, type CodeExchangeCheck } from './context.ts';

export const checkCodeRedirectUri: CodeExchangeCheck = function checkCodeRedirectUri(ctx) {
  const given = stringParam(ctx.params, 'redirect_uri');
  if (given === undefined && ctx.code.redirect_uri_given) {
    throw new InvalidGrant(
      'authorization code redirect_uri mismatch: redirect_uri is required because the authorization request had it (RFC 6749 §4.1.3)',
    );
  }
  if (given !== undefined && given !== ctx.code.redirect_uri) {
    throw new InvalidGrant('authorization code redirect_uri mismatch (RFC 6749 §4.1.3)');
  }
};

// RFC 8707 §2.2: a token request may name the resource too; it must be the
// one the client's tokens are bound to (the grant keeps it, so a refresh keeps
// the resource). Anything else is invalid_target.
import { resourceOf } from '../public-clients/audience.ts';
import { checkResourceParameter } from './check-resource.ts';
import { established, type TokenRequestCheck } from './context.ts';

export const checkTokenResource: TokenRequestCheck = function checkTokenResource(ctx) {
  checkResourceParameter(ctx.params, resourceOf(established(ctx.client, 'check-client-authentication').kind, ctx.issuer));
};

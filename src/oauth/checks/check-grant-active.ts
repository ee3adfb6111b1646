// RFC 6749 §5.2 invalid_grant: the grant was revoked, or its user,
// organization or membership is no longer active (docs/interface.md §5.4: every credential
// of a deactivated user or organization stops working at once).
import { InvalidGrant } from '../oauth.errors.ts';
import type { CodeExchangeContext, RefreshContext } from './context.ts';

export function checkGrantActive(ctx: CodeExchangeContext | RefreshContext): void {
  const record = 'code' in ctx ? ctx.code : ctx.token;
  // Whether it stands is the database's answer (oauth_grant_status.live); the two columns only say why not.
  if (record.live) return;
  if (record.grant_revoked) throw new InvalidGrant('the authorization grant has been revoked (RFC 6749 §5.2)');
  throw new InvalidGrant('the user or organization of this grant is no longer active (RFC 6749 §5.2)');
}

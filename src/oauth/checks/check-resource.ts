// RFC 8707 §2: the resource the client wants its tokens for. A public client's
// tokens are always bound to {BASE_URL}/mcp, with or without `resource` (the
// MCP revision 2025-03-26 sends none); a platform client's serve the platform
// routes, which are not named by a resource. Anything else is invalid_target
// (RFC 8707 §2). Given once, at most (RFC 8707 §2 allows several; we have
// one resource per client, so a second one is always another audience).
import { InvalidTarget } from '../oauth.errors.ts';
import { resourceOf } from '../public-clients/audience.ts';
import { established, stringParam, type AuthorizationCheck, type RawParams } from './context.ts';

/** The one resource a client's tokens may be bound to, checked against what the request names. */
export function checkResourceParameter(params: RawParams, allowed: string | null): void {
  const raw = params.resource;
  if (raw === undefined || raw === '') return;
  if (Array.isArray(raw)) throw new InvalidTarget('resource must name one resource: this client’s tokens serve one (RFC 8707 §2)');
  const given = stringParam(params, 'resource');
  if (allowed === null || given !== allowed) {
    throw new InvalidTarget(
      allowed === null
        ? 'resource is not one this client may ask for: a platform client’s tokens serve the platform API and name no resource (RFC 8707 §2)'
        : `resource must be ${allowed}, the resource this client’s tokens are for (RFC 8707 §2)`,
    );
  }
}

export const checkResource: AuthorizationCheck = function checkResource(ctx) {
  const allowed = resourceOf(established(ctx.client, 'check-client').kind, ctx.issuer);
  checkResourceParameter(ctx.params, allowed);
  ctx.resource = allowed;
};

// Who is calling. Filled by an authentication hook (x-user-token here; the
// OAuth platform guard fills the same shape) before any handler runs.
import type { ActiveSession } from './sessions.queries.ts';

export interface Principal {
  kind: 'user' | 'oauth';
  userId: string;
  organizationId: string;
  /** OAuth scopes; a user session may do everything its organization allows. */
  scopes: readonly string[] | 'all';
  clientId?: string;
  /** The OAuth grant behind the access token (the grant a subscription is made under). */
  grantId?: string;
  session?: ActiveSession;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function requirePrincipal(principal: Principal | null): Principal {
  if (!principal) throw new Error('route is missing its authentication hook');
  return principal;
}

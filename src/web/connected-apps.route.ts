// GET /connected-apps and POST /connected-apps/revoke: the apps connected to
// the signed-in user's organization, and revoking one (docs/interface.md §14).
import type { FastifyInstance } from 'fastify';
import { actorOf } from '../audit/audit-actor.ts';
import { listConnectedApps, revokeConnectedApp } from '../oauth/connected-apps.service.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { sendPage } from './layout.ts';
import { connectedAppsPage } from './pages/connected-apps.page.ts';
import { sectionAccess, signedIn } from './signed-in.ts';

export function connectedAppsRoutes(csrf: Csrf) {
  return async function registerConnectedAppsRoutes(app: FastifyInstance) {
    const access = sectionAccess(csrf, 'connected-apps');

    app.get<{ Querystring: { revoked?: string } }>('/connected-apps', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const apps = await listConnectedApps(app.db, ctx.organizationId);
      const notice = request.query.revoked === '1' ? 'Access revoked.' : undefined;
      return sendPage(reply, 200, connectedAppsPage({ nav: ctx.nav, apps, ...(notice ? { notice } : {}) }));
    });

    app.post<{ Body: { csrf?: unknown; client_id?: unknown } }>('/connected-apps/revoke', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const clientId = typeof request.body?.client_id === 'string' ? request.body.client_id : '';
      // Another organization's app, or one already revoked: nothing to do, and nothing revealed.
      await revokeConnectedApp(app.db, app.caches, ctx.organizationId, clientId, actorOf(ctx.principal));
      return reply.redirect('/connected-apps?revoked=1', 303);
    });
  };
}

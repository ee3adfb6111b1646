// GET /connected-apps and POST /connected-apps/revoke: the apps connected to
// the signed-in user's organization, and revoking one (docs/interface.md §14).
import type { FastifyInstance } from 'fastify';
import { actorOf } from '../audit/audit-actor.ts';
import { listConnectedApps, revokeConnectedApp } from '../oauth/connected-apps.service.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { sendPage } from './layout.ts';
import { connectedAppsPage } from './pages/connected-apps.page.ts';
import { sectionAccess } from './signed-in.ts';

export function connectedAppsRoutes(csrf: Csrf) {
  return async function registerConnectedAppsRoutes(app: FastifyInstance) {
    const { page, form } = sectionAccess(csrf, 'connected-apps');

    app.get<{ Querystring: { revoked?: string } }>('/connected-apps', { schema: { hide: true } }, async (request, reply) => {
      const ctx = await page(request, reply);
      if (!ctx) return reply;
      const apps = await listConnectedApps(app.db, ctx.organizationId);
      const notice = request.query.revoked === '1' ? 'Access revoked.' : undefined;
      return sendPage(reply, 200, connectedAppsPage({ nav: ctx.nav, apps, ...(notice ? { notice } : {}) }));
    });

    app.post<{ Body: { csrf?: unknown; client_id?: unknown } }>(
      '/connected-apps/revoke',
      { schema: { hide: true } },
      async (request, reply) => {
        const ctx = await form(request, reply);
        if (!ctx) return reply;
        const clientId = typeof request.body?.client_id === 'string' ? request.body.client_id : '';
        // Another organization's app, or one already revoked: nothing to do, and nothing revealed.
        await revokeConnectedApp(app.db, app.caches, ctx.organizationId, clientId, actorOf(ctx.principal));
        return reply.redirect('/connected-apps?revoked=1', 303);
      },
    );
  };
}

// GET /connected-apps and POST /connected-apps/revoke: the apps connected to
// the signed-in user's organization, and revoking one (DESIGN §6).
import type { FastifyInstance } from 'fastify';
import { listConnectedApps, revokeConnectedApp } from '../oauth/connected-apps.service.ts';
import type { Csrf } from './csrf.ts';
import { sendPage } from './layout.ts';
import { connectedAppsPage } from './pages/connected-apps.page.ts';
import { errorPage } from './pages/error.page.ts';
import { loginUrl, webSession } from './session.ts';

export function connectedAppsRoutes(csrf: Csrf) {
  return async function registerConnectedAppsRoutes(app: FastifyInstance) {
    app.get<{ Querystring: { revoked?: string } }>('/connected-apps', { schema: { hide: true } }, async (request, reply) => {
      const session = await webSession(request);
      if (!session) return reply.redirect(loginUrl('/connected-apps'), 302);
      const apps = await listConnectedApps(app.db, session.organization_id);
      const notice = request.query.revoked === '1' ? 'Access revoked.' : undefined;
      return sendPage(reply, 200, connectedAppsPage({
        csrf: csrf.token(request, reply),
        email: session.email,
        organizationName: session.organization_name,
        apps,
        ...(notice ? { notice } : {}),
      }));
    });

    app.post<{ Body: { csrf?: unknown; client_id?: unknown } }>('/connected-apps/revoke', { schema: { hide: true } }, async (request, reply) => {
      const session = await webSession(request);
      if (!session) return reply.redirect(loginUrl('/connected-apps'), 303);
      if (!csrf.verify(request, request.body?.csrf)) {
        return sendPage(reply, 403, errorPage({ title: 'Form expired', message: 'The form expired. Go back, reload the page and try again.' }));
      }
      const clientId = typeof request.body?.client_id === 'string' ? request.body.client_id : '';
      // Another organization's app, or one already revoked: nothing to do, and nothing revealed.
      await revokeConnectedApp(app.db, session.organization_id, clientId);
      return reply.redirect('/connected-apps?revoked=1', 303);
    });
  };
}

import { listConnectedApps, revokeConnectedApp } from '../oauth/connected-apps.service.js';
import { sendPage } from './layout.js';
import { connectedAppsPage } from './pages/connected-apps.page.js';
import { sectionAccess } from './signed-in.js';
export function connectedAppsRoutes(csrf) {
    return async function registerConnectedAppsRoutes(app) {
        const { page, form } = sectionAccess(csrf, 'connected-apps');
        app.get('/connected-apps', { schema: { hide: true } }, async (request, reply) => {
            const ctx = await page(request, reply);
            if (!ctx)
                return reply;
            const apps = await listConnectedApps(app.db, ctx.organizationId);
            const notice = request.query.revoked === '1' ? 'Access revoked.' : undefined;
            return sendPage(reply, 200, connectedAppsPage({ nav: ctx.nav, apps, ...(notice ? { notice } : {}) }));
        });
        app.post('/connected-apps/revoke', { schema: { hide: true } }, async (request, reply) => {
            const ctx = await form(request, reply);
            if (!ctx)
                return reply;
            const clientId = typeof request.body?.client_id === 'string' ? request.body.client_id : '';
            // Another organization's app, or one already revoked: nothing to do, and nothing revealed.
            await revokeConnectedApp(app.db, ctx.organizationId, clientId);
            return reply.redirect('/connected-apps?revoked=1', 303);
        });
    };
}
//# sourceMappingURL=connected-apps.route.js.map
// GET / (the signed-in home: the delivery-health dashboard; a visitor is sent
// to sign in), GET /ui (the same home), and POST /ui/organization, the
// navigation bar's organization switcher: the same switch as
// PUT /auth/session/organization, on the browser's session.
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import { switchOrganization } from '../auth/sessions.service.ts';
import * as errors from '../errors.ts';
import { dashboardFigures } from '../dashboard/dashboard.service.ts';
import { findClient } from '../oauth/clients.service.ts';
import { listConnectedApps } from '../oauth/connected-apps.service.ts';
import { listVisibleSubscriptions } from '../webhooks/subscriptions.service.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { sendPage } from './layout.ts';
import { text, type FormBody } from './forms.ts';
import { homePage } from './pages/home.page.ts';
import { safeReturnTo, webSession } from './session.ts';
import { sectionAccess, signedIn, signedInPage } from './signed-in.ts';

export const HOME_PATH = '/';

export function homeRoutes(csrf: Csrf) {
  return async function registerHomeRoutes(app: FastifyInstance) {
    const access = sectionAccess(csrf, 'home');
    const hide = { schema: { hide: true } };

    // A visitor signs in first, at the login page itself: it comes back here by default.
    const visitorsToLogin: preHandlerAsyncHookHandler = async (request, reply) => {
      if (!(await webSession(request))) return reply.redirect('/login', 302);
    };
    app.get('/', { ...access.route, preHandler: [visitorsToLogin, access.route.preHandler] }, async (request, reply) => {
      const ctx = signedIn(request);
      const figures = await dashboardFigures(app.db, ctx.organizationId);
      const subscriptions = await listVisibleSubscriptions(app.db, ctx.principal);
      const troubled = subscriptions.filter((s) => s.status !== 'active' || s.failing_since !== null || s.circuit.state !== 'closed');
      const clients = new Map<string, string>();
      for (const clientId of new Set(troubled.map((s) => s.client_id))) {
        const client = await findClient(app.db, clientId);
        if (client) clients.set(clientId, client.name);
      }
      const apps = await listConnectedApps(app.db, ctx.organizationId);
      return sendPage(reply, 200, homePage({ nav: ctx.nav, figures, troubled, clients, apps, alertsSent: Boolean(app.config.smtpUrl) }));
    });

    // The UI's own root: people type it, and older links point at it.
    app.get('/ui', hide, async (_request, reply) => reply.redirect(HOME_PATH, 302));

    // Any other page under /ui is a page that does not exist: an HTML 404 (with
    // the navigation bar when signed in), not the API's problem+json.
    app.get('/ui/*', hide, async (request, reply) => {
      if (await webSession(request)) {
        await signedInPage(request, reply, csrf, 'home');
      }
      throw new errors.NOT_FOUND('No such page');
    });

    app.post<{ Body: FormBody }>('/ui/organization', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      // Not a member (or not active there): AUTH_NOT_A_MEMBER, rendered as a 403 page; the session is unchanged.
      await switchOrganization(app.db, app.caches, ctx.session, text(request.body, 'organization_id'));
      // Back to the section's list, never to one record: it belongs to the previous organization.
      return reply.redirect(safeReturnTo(text(request.body, 'return_to'), HOME_PATH), 303);
    });
  };
}

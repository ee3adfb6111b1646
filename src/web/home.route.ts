// GET / (the signed-in home is the locations list) and POST /ui/organization,
// the navigation bar's organization switcher: the same switch as
// PUT /auth/session/organization, on the browser's session.
import type { FastifyInstance } from 'fastify';
import { switchOrganization } from '../auth/sessions.service.ts';
import type { Csrf } from './csrf.ts';
import { SECTIONS } from './layout.ts';
import { text, type FormBody } from './forms.ts';
import { safeReturnTo, webSession } from './session.ts';
import { signedInForm } from './signed-in.ts';

export const HOME_PATH = SECTIONS[0].path;

export function homeRoutes(csrf: Csrf) {
  return async function registerHomeRoutes(app: FastifyInstance) {
    app.get('/', { schema: { hide: true } }, async (request, reply) =>
      reply.redirect((await webSession(request)) ? HOME_PATH : '/login', 302));

    app.post<{ Body: FormBody }>('/ui/organization', { schema: { hide: true } }, async (request, reply) => {
      const ctx = await signedInForm(request, reply, csrf, 'locations');
      if (!ctx) return reply;
      // Not a member (or not active there): AUTH_NOT_A_MEMBER, rendered as a 403 page; the session is unchanged.
      await switchOrganization(app.db, ctx.session, text(request.body, 'organization_id'));
      // Back to the section's list, never to one record: it belongs to the previous organization.
      return reply.redirect(safeReturnTo(text(request.body, 'return_to'), HOME_PATH), 303);
    });
  };
}

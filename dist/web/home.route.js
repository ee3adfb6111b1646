import { switchOrganization } from '../auth/sessions.service.js';
import { SECTIONS } from './layout.js';
import { text } from './forms.js';
import { safeReturnTo, webSession } from './session.js';
import { signedInForm } from './signed-in.js';
export const HOME_PATH = SECTIONS[0].path;
export function homeRoutes(csrf) {
    return async function registerHomeRoutes(app) {
        app.get('/', { schema: { hide: true } }, async (request, reply) => reply.redirect((await webSession(request)) ? HOME_PATH : '/login', 302));
        app.post('/ui/organization', { schema: { hide: true } }, async (request, reply) => {
            const ctx = await signedInForm(request, reply, csrf, 'locations');
            if (!ctx)
                return reply;
            // Not a member (or not active there): AUTH_NOT_A_MEMBER, rendered as a 403 page; the session is unchanged.
            await switchOrganization(app.db, ctx.session, text(request.body, 'organization_id'));
            // Back to the section's list, never to one record: it belongs to the previous organization.
            return reply.redirect(safeReturnTo(text(request.body, 'return_to'), HOME_PATH), 303);
        });
    };
}
//# sourceMappingURL=home.route.js.map
import { describeSession } from '../auth/sessions.service.js';
import { SECTIONS, sendPage } from './layout.js';
import { errorPage } from './pages/error.page.js';
import { loginUrl, webSession } from './session.js';
export const FORM_EXPIRED = 'The form expired or did not come from this site. Go back, reload the page and try again.';
async function resolve(request, reply, csrf, current, session) {
    const view = await describeSession(request.server.db, session);
    const token = csrf.token(request, reply);
    const nav = {
        email: session.email,
        csrf: token,
        organizationId: session.organization_id,
        organizationName: session.organization_name,
        organizations: view.organizations.map((o) => ({ id: o.id, name: o.name })),
        current,
    };
    request.webNavigation = nav;
    return {
        session,
        organizationId: session.organization_id,
        principal: { kind: 'user', userId: session.user_id, organizationId: session.organization_id, scopes: 'all', session },
        csrf: token,
        nav,
    };
}
/** For GET pages: the signed-in context, or undefined after redirecting to the login page (which comes back here). */
export async function signedInPage(request, reply, csrf, current) {
    const session = await webSession(request);
    if (!session) {
        reply.redirect(loginUrl(request.url), 302);
        return undefined;
    }
    return resolve(request, reply, csrf, current, session);
}
/**
 * For form posts: signed in and carrying this browser's CSRF token, or
 * undefined after answering (login redirect back to the section, or 403).
 */
export async function signedInForm(request, reply, csrf, current) {
    const session = await webSession(request);
    if (!session) {
        reply.redirect(loginUrl(SECTIONS.find((s) => s.id === current).path), 303);
        return undefined;
    }
    const form = request.body;
    if (!csrf.verify(request, form?.csrf)) {
        const signedIn = await resolve(request, reply, csrf, current, session);
        sendPage(reply, 403, errorPage({ title: 'Form expired', message: FORM_EXPIRED, hint: 'Nothing was changed.', nav: signedIn.nav }));
        return undefined;
    }
    return resolve(request, reply, csrf, current, session);
}
/** signedInPage and signedInForm bound to one section's pages. */
export function sectionAccess(csrf, section) {
    return {
        page: (request, reply) => signedInPage(request, reply, csrf, section),
        form: (request, reply) => signedInForm(request, reply, csrf, section),
    };
}
//# sourceMappingURL=signed-in.js.map
// What every signed-in page starts with: the web session (or a redirect to the
// login page), the CSRF token for its forms, the navigation bar, and the
// principal the services expect. Form posts also check the CSRF token here,
// so no handler can forget to.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { ActiveSession } from '../auth/sessions.queries.ts';
import { describeSession } from '../auth/sessions.service.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { SECTIONS, sendPage, type Navigation, type Section } from './layout.ts';
import { errorPage } from './pages/error.page.ts';
import { loginUrl, webSession } from './session.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the page knows who is signed in, so error pages keep the navigation bar. */
    webNavigation: Navigation | null;
    /** Set by a signed-in route's preHandler (sectionAccess): who is signed in, for its handler. */
    webSignedIn: SignedIn | null;
  }
}

export interface SignedIn {
  session: ActiveSession;
  organizationId: string;
  principal: Principal;
  csrf: string;
  nav: Navigation;
}

export const FORM_EXPIRED = 'The form expired or did not come from this site. Go back, reload the page and try again.';

async function resolve(
  request: FastifyRequest,
  reply: FastifyReply,
  csrf: Csrf,
  current: Section,
  session: ActiveSession,
): Promise<SignedIn> {
  const view = await describeSession(request.server.db, session);
  const token = csrf.token(request, reply);
  const nav: Navigation = {
    email: session.email,
    csrf: token,
    organizationId: session.organization_id,
    organizationName: session.organization_name,
    organizations: view.organizations.map((o) => ({ id: o.id, name: o.name })),
    current,
    role: session.role,
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

/** The browser's web session, or undefined after redirecting to the login page, which comes back to `back`. */
async function sessionOrLogin(
  request: FastifyRequest,
  reply: FastifyReply,
  back: string,
  status: 302 | 303,
): Promise<ActiveSession | undefined> {
  const session = await webSession(request);
  if (!session) reply.redirect(loginUrl(back), status);
  return session;
}

/** For GET pages: the signed-in context, or undefined after redirecting to the login page (which comes back here). */
export async function signedInPage(
  request: FastifyRequest,
  reply: FastifyReply,
  csrf: Csrf,
  current: Section,
): Promise<SignedIn | undefined> {
  const session = await sessionOrLogin(request, reply, request.url, 302);
  if (!session) return undefined;
  return resolve(request, reply, csrf, current, session);
}

/**
 * For form posts: signed in and carrying this browser's CSRF token, or
 * undefined after answering (login redirect back to the section, or 403).
 */
export async function signedInForm(
  request: FastifyRequest,
  reply: FastifyReply,
  csrf: Csrf,
  current: Section,
): Promise<SignedIn | undefined> {
  const session = await sessionOrLogin(request, reply, SECTIONS.find((s) => s.id === current)!.path, 303);
  if (!session) return undefined;
  const form = request.body as { csrf?: unknown } | undefined;
  if (!csrf.verify(request, form?.csrf)) {
    const signedIn = await resolve(request, reply, csrf, current, session);
    sendPage(reply, 403, errorPage({ title: 'Form expired', message: FORM_EXPIRED, hint: 'Nothing was changed.', nav: signedIn.nav }));
    return undefined;
  }
  return resolve(request, reply, csrf, current, session);
}

export interface SectionAccess {
  /** A signed-in page's or form's route options: hidden from the OpenAPI document, the sign-in check as its preHandler. */
  route: { schema: { hide: true }; preHandler: preHandlerAsyncHookHandler };
}

/**
 * The sign-in check of one section's routes, once, as a preHandler: a GET
 * page needs a web session (else the login page, which comes back), a form
 * post the session and this browser's CSRF token (else 403). The handler
 * then reads signedIn(request).
 */
export function sectionAccess(csrf: Csrf, section: Section): SectionAccess {
  const preHandler: preHandlerAsyncHookHandler = async (request, reply) => {
    const read = request.method === 'GET' || request.method === 'HEAD';
    const ctx = await (read ? signedInPage : signedInForm)(request, reply, csrf, section);
    if (!ctx) return reply;
    request.webSignedIn = ctx;
  };
  return { route: { schema: { hide: true }, preHandler } };
}

/** Who is signed in, in a route behind sectionAccess's preHandler. */
export function signedIn(request: FastifyRequest): SignedIn {
  if (!request.webSignedIn) throw new Error(`${request.routeOptions.url}: a signed-in route without the sign-in preHandler`);
  return request.webSignedIn;
}

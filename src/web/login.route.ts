// GET/POST /login and POST /logout: the web session (docs/interface.md §14).
import type { FastifyInstance } from 'fastify';
import { LoginThrottled, throttledLogin } from '../auth/login-throttle.ts';
import * as errors from '../errors.ts';
import { authenticate, issueSession, logout } from '../auth/sessions.service.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { sendPage } from './layout.ts';
import { loginPage } from './pages/login.page.ts';
import { clearSessionCookie, safeReturnTo, setSessionCookie, webSession } from './session.ts';
import { PASSWORD_MAX_LENGTH } from '../auth/sessions.schemas.ts';
import { EMAIL_MAX_LENGTH } from '../organizations/users.queries.ts';

interface LoginForm {
  email?: unknown;
  password?: unknown;
  csrf?: unknown;
  return_to?: unknown;
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

export function loginRoutes(csrf: Csrf) {
  return async function registerLoginRoutes(app: FastifyInstance) {
    app.get<{ Querystring: { return_to?: string } }>('/login', { schema: { hide: true } }, async (request, reply) => {
      const returnTo = safeReturnTo(request.query.return_to);
      if (await webSession(request)) return reply.redirect(returnTo, 302);
      return sendPage(reply, 200, loginPage({ csrf: csrf.token(request, reply), returnTo }));
    });

    app.post<{ Body: LoginForm }>('/login', { schema: { hide: true } }, async (request, reply) => {
      const form = request.body ?? {};
      const returnTo = safeReturnTo(form.return_to);
      const email = text(form.email).slice(0, EMAIL_MAX_LENGTH);
      const again = (status: number, error: string) =>
        sendPage(reply, status, loginPage({ csrf: csrf.token(request, reply), returnTo, email, error }));
      if (!csrf.verify(request, form.csrf)) return again(403, 'Your sign-in form expired. Please try again.');
      const password = text(form.password);
      if (email === '' || password === '' || password.length > PASSWORD_MAX_LENGTH) return again(400, 'Enter your email and password.');
      let user: Awaited<ReturnType<typeof authenticate>>;
      try {
        user = await throttledLogin(app.db, email, request.ip, () => authenticate(app.db, email, password));
      } catch (error) {
        if (error instanceof LoginThrottled) {
          reply.header('retry-after', String(error.retryAfterSeconds));
          return again(429, 'Too many sign-in attempts. Please wait a few minutes and try again.');
        }
        if (error instanceof errors.AUTH_INVALID_CREDENTIALS) return again(401, 'Email or password is incorrect.');
        throw error;
      }
      let session: Awaited<ReturnType<typeof issueSession>>;
      try {
        session = await issueSession(app.db, user);
      } catch (error) {
        if (!(error instanceof errors.AUTH_NO_ORGANIZATION)) throw error;
        return again(403, 'Your account belongs to no active organization.');
      }
      // Signing in again in the same browser replaces its session: the old one ends now, not at its expiry.
      const previous = await webSession(request);
      if (previous) await logout(app.db, app.caches, previous);
      setSessionCookie(reply, app.config, session.token, session.expires_at);
      return reply.redirect(returnTo, 303);
    });

    app.post<{ Body: { csrf?: unknown } }>('/logout', { schema: { hide: true } }, async (request, reply) => {
      if (!csrf.verify(request, request.body?.csrf)) return reply.redirect('/login', 303);
      const session = await webSession(request);
      if (session) await logout(app.db, app.caches, session);
      clearSessionCookie(reply, app.config);
      return reply.redirect('/login', 303);
    });
  };
}

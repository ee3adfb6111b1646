// The server-rendered web UI (docs/interface.md §14), encapsulated: form bodies are parsed
// only here, and errors render as HTML pages instead of problem+json.
// Another feature's pages register here too, using layout.ts and the CSRF
// tokens app.ts hands in (src/crypto/csrf.ts).
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance } from 'fastify';
import { alertPages } from './alerts.route.ts';
import { connectedAppsRoutes } from './connected-apps.route.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { homeRoutes } from './home.route.ts';
import { sendPage, STYLESHEET, STYLESHEET_PATH } from './layout.ts';
import { locationPages } from './locations.route.ts';
import { loginRoutes } from './login.route.ts';
import { errorStatus } from '../http/error-status.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import { errorPage, errorText } from './pages/error.page.ts';
import { serviceAreaPages } from './service-areas.route.ts';
import { callPages } from './calls.route.ts';
import { webhookPages } from './webhooks.route.ts';
import { activityPages } from './activity.route.ts';

export default async function webPlugin(app: FastifyInstance, options: { csrf: Csrf }) {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  const { csrf } = options;
  app.decorateRequest('webNavigation', null);
  app.decorateRequest('webSignedIn', null);

  app.setErrorHandler(function renderErrorPage(error: FastifyError, request, reply) {
    const status = errorStatus(request, reply, error);
    const nav = request.webNavigation;
    // Refused before any page could show it beside its field (the U+0000 check runs for every route).
    const fields = error instanceof ValidationProblem ? error.fieldErrors.map((e) => `${e.field} ${e.message}`).join('; ') : '';
    const described = errorText(status, request.id);
    return sendPage(
      reply,
      status,
      errorPage({
        ...described,
        ...(fields ? { message: `${described.message} The field ${fields}.` } : {}),
        ...(nav ? { nav, hint: 'Use the navigation above to carry on.' } : {}),
      }),
    );
  });

  app.get(STYLESHEET_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET),
  );

  await app.register(loginRoutes(csrf));
  await app.register(homeRoutes(csrf));
  await app.register(locationPages(csrf));
  await app.register(serviceAreaPages(csrf));
  await app.register(callPages(csrf));
  await app.register(webhookPages(csrf));
  await app.register(connectedAppsRoutes(csrf));
  await app.register(activityPages(csrf));
  await app.register(alertPages(csrf));
}

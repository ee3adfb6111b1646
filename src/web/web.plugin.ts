// The server-rendered web UI (docs/interface.md §14), encapsulated: form bodies are parsed
// only here, and errors render as HTML pages instead of problem+json.
// Another feature's pages register here too, using layout.ts and the CSRF
// tokens app.ts hands in (src/crypto/csrf.ts).
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance } from 'fastify';
import { connectedAppsRoutes } from './connected-apps.route.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { homeRoutes } from './home.route.ts';
import { sendPage, STYLESHEET, STYLESHEET_PATH } from './layout.ts';
import { locationPages } from './locations.route.ts';
import { loginRoutes } from './login.route.ts';
import { isDatabaseOutage, ValidationProblem } from '../http/problem-details.plugin.ts';
import { errorPage } from './pages/error.page.ts';
import { serviceAreaPages } from './service-areas.route.ts';
import { callPages } from './calls.route.ts';
import { webhookPages } from './webhooks.route.ts';

function describeError(status: number, requestId: string): { title: string; message: string } {
  switch (status) {
    case 404:
      return { title: 'Not found', message: 'There is nothing here. It may have been deleted, or it belongs to another organization.' };
    case 403:
      return { title: 'Not allowed', message: 'You cannot do this in your current organization.' };
    case 429:
      return { title: 'Too many requests', message: 'Too many requests. Please wait a moment and try again.' };
    case 503:
      return {
        title: 'Service unavailable',
        message: 'Switchboard cannot reach its database right now. Please try again in a few seconds.',
      };
    case 500:
      return { title: 'Unexpected error', message: `Something went wrong on our side (request ${requestId}).` };
    default:
      return { title: 'Request refused', message: 'The request could not be processed.' };
  }
}

export default async function webPlugin(app: FastifyInstance, options: { csrf: Csrf }) {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  const { csrf } = options;
  app.decorateRequest('webNavigation', null);

  app.setErrorHandler(function renderErrorPage(error: FastifyError, request, reply) {
    const outage = isDatabaseOutage(request, reply, error);
    const status = outage ? 503 : error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'unhandled error');
    const nav = request.webNavigation;
    // Refused before any page could show it beside its field (the U+0000 check runs for every route).
    const fields = error instanceof ValidationProblem ? error.fieldErrors.map((e) => `${e.field} ${e.message}`).join('; ') : '';
    const described = describeError(status, request.id);
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
}

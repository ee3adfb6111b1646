// The server-rendered web UI (DESIGN §6), encapsulated: form bodies are parsed
// only here, and errors render as HTML pages instead of problem+json.
// Another feature's pages register here too, using layout.ts and csrf.ts.
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance } from 'fastify';
import { connectedAppsRoutes } from './connected-apps.route.ts';
import { createCsrf } from './csrf.ts';
import { sendPage, STYLESHEET, STYLESHEET_PATH } from './layout.ts';
import { loginRoutes } from './login.route.ts';
import { errorPage } from './pages/error.page.ts';

export default async function webPlugin(app: FastifyInstance) {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  const csrf = await createCsrf(app.config);

  app.setErrorHandler(function renderErrorPage(error: FastifyError, request, reply) {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'unhandled error');
    const message = status === 429
      ? 'Too many requests. Please wait a moment and try again.'
      : status === 500 ? `Something went wrong on our side (request ${request.id}).` : 'The request could not be processed.';
    return sendPage(reply, status, errorPage({ title: status === 500 ? 'Unexpected error' : 'Request refused', message }));
  });

  app.get(STYLESHEET_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET));

  await app.register(loginRoutes(csrf));
  await app.register(connectedAppsRoutes(csrf));
}

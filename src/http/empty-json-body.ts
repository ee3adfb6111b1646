// Clients that always send `Content-Type: application/json` (the interface
// says POST carries it; Zapier's z.request and most SDKs set it on every call)
// also send it on requests without a body: DELETE /webhooks/{id}, POST
// /webhooks/deliveries/{id}/redeliver, DELETE /auth/session, POST
// /locations/{id}/primary. Fastify's JSON parser rejects an empty body; here an
// empty body is simply no body, for every route. Anything else goes to
// Fastify's own parser (same errors, same prototype-poisoning guard).
import type { FastifyInstance } from 'fastify';

export function acceptEmptyJsonBody(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, function parseJsonOrNothing(request, body, done) {
    const text = body.toString();
    if (text === '') return done(null, undefined);
    return parseJson(request, text, done);
  });
}

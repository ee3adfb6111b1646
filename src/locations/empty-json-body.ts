// Clients that always send `Content-Type: application/json` (the interface
// says POST carries it) also send it on DELETE and on POST /locations/{id}/primary,
// which have no body. Fastify's JSON parser rejects an empty body; in the
// routes that register this, an empty body is simply no body. Anything else
// goes to Fastify's own parser (same errors, same prototype-poisoning guard).
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

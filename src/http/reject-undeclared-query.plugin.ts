// A JSON API route answers a query parameter it does not declare with a 400
// naming it (docs/interface.md §7), for every route at once instead of in every
// schema: left to the schema's default, an extra parameter was accepted, and
// one handed on to a query could reach SQL unchecked (docs/security.md, third
// review, finding 2). A route without a querystring schema gets an empty one,
// so it refuses every parameter. The validator keeps extras to report them
// (removeAdditional: false, src/http/validation.ts) rather than dropping them.
//
// Three kinds of routes keep ignoring what they do not know:
//   - the OAuth endpoints (tag `oauth`): RFC 6749 §3.1 and §3.2 require that
//     unrecognised request parameters be ignored, and RFC 8414 metadata follows;
//   - the operations endpoints (tag `health`: /healthz, /readyz, /metrics): a
//     probe or scraper configured with a cache-busting parameter must not read
//     the service as down;
//   - routes hidden from the OpenAPI document (the web pages, /openapi.json,
//     /docs), which are not the JSON API and read their query themselves.
import type { FastifyInstance, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';

const LENIENT_TAGS = new Set(['oauth', 'health']);

interface RouteSchema {
  hide?: boolean;
  tags?: string[];
  querystring?: Record<string, unknown>;
}

/** Whether the route belongs to the JSON API, whose query strings are strict (see above). */
export function hasStrictQuery(schema: RouteSchema | undefined): boolean {
  if (schema?.hide) return false;
  return !(schema?.tags ?? []).some((tag) => LENIENT_TAGS.has(tag));
}

async function rejectUndeclaredQuery(app: FastifyInstance) {
  app.addHook('onRoute', function strictQuerystring(route: RouteOptions) {
    const schema = route.schema as RouteSchema | undefined;
    if (!hasStrictQuery(schema)) return;
    // A copy: a schema object may be shared by several routes (and by the OpenAPI document).
    const querystring = { type: 'object', properties: {}, ...schema?.querystring, additionalProperties: false };
    route.schema = { ...schema, querystring };
  });
}

export default fp(rejectUndeclaredQuery, { name: 'reject-undeclared-query' });

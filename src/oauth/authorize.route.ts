// GET /oauth/authorize (RFC 6749 §4.1.1): validate, then the login page when
// nobody is signed in, then the consent page. POST /oauth/authorize is the
// consent form's answer: Allow issues a code, Deny answers access_denied.
// Failures before the redirect URI is trusted are error pages; after it, they
// are redirected to the client with error, error_description, state and iss.
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorStatus } from '../http/error-status.ts';
import { listActiveMemberships } from '../organizations/users.queries.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { sendPage } from '../web/layout.ts';
import { consentPage } from '../web/pages/consent.page.ts';
import { errorPage, errorText } from '../web/pages/error.page.ts';
import { loginUrl, webSession } from '../web/session.ts';
import {
  AUTHORIZATION_PARAMETERS,
  authorizationResponseUrl,
  issueAuthorizationCode,
  validateAuthorizationRequest,
  type AuthorizationValidation,
} from './authorize.service.ts';
import type { RawParams } from './checks/context.ts';
import { AccessDenied, TemporarilyUnavailable } from './oauth.errors.ts';
import { describeClient } from './public-clients/client-description.ts';
import type { DocumentOptions } from './public-clients/metadata-documents.service.ts';

const optionalText = (description: string) => ({ type: 'string', description });
const AUTHORIZE_QUERY_DOC = {
  type: 'object',
  required: ['response_type', 'client_id'],
  properties: {
    response_type: { type: 'string', enum: ['code'], description: 'code' },
    client_id: { type: 'string', description: 'the registered client' },
    redirect_uri: optionalText('exactly one of the registered redirect URIs; optional when the client has exactly one'),
    scope: optionalText('space-separated scopes; default calls:read'),
    state: optionalText('returned unchanged with the code or the error'),
    code_challenge: optionalText(
      'PKCE (RFC 7636), optional: BASE64URL(SHA-256(code_verifier)); with it, code_challenge_method S256 and a code_verifier at the token endpoint',
    ),
    code_challenge_method: { type: 'string', enum: ['S256'], description: 'S256 (plain is refused)' },
    resource: optionalText(
      'RFC 8707: for public clients {BASE_URL}/mcp (their tokens are bound to it either way); platform clients send none',
    ),
  },
};

/** Metadata document fetches per address: each is an outbound request a stranger can cause. */
const DOCUMENT_FETCHES_PER_MINUTE = 20;

type Failure = Extract<AuthorizationValidation, { ok: false }>;

function pageOrRedirect(reply: FastifyReply, issuer: string, failure: Failure, redirectStatus: 302 | 303) {
  if (failure.redirectUri === undefined) {
    // A rate limit (the document fetches) is a 429 page with Retry-After; every other refusal is a 400 page.
    const { error } = failure;
    const limited = error instanceof TemporarilyUnavailable;
    if (limited && error.retryAfterSeconds !== undefined) {
      reply.header('retry-after', String(error.retryAfterSeconds));
    }
    return sendPage(
      reply,
      limited ? 429 : 400,
      errorPage({ title: 'This application cannot be connected', message: error.message, code: error.error }),
    );
  }
  return reply.redirect(
    authorizationResponseUrl(failure.redirectUri, issuer, {
      error: failure.error.error,
      error_description: failure.error.description,
      state: failure.state,
    }),
    redirectStatus,
  );
}

function pick(body: RawParams): RawParams {
  const params: RawParams = {};
  for (const name of AUTHORIZATION_PARAMETERS) if (body[name] !== undefined) params[name] = body[name];
  return params;
}

export default async function authorizeRoutes(app: FastifyInstance, options: { csrf: Csrf }) {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  const { csrf } = options;
  const issuer = app.config.baseUrl;
  const fetchLimit = app.createRateLimit({ max: DOCUMENT_FETCHES_PER_MINUTE, timeWindow: 60_000, keyGenerator: (r) => `cimd:${r.ip}` });
  const validationOptions = (request: FastifyRequest) => ({
    issuer,
    documents: app.config.oauthClientMetadataDocuments
      ? ({
          allowPrivate: app.config.webhookAllowPrivateTargets,
          allowedPorts: app.config.webhookAllowedPorts,
          beforeFetch: async () => {
            const limit = await fetchLimit(request);
            if (!limit.isAllowed && limit.isExceeded) {
              const seconds = Math.max(1, Math.ceil(limit.ttlInSeconds ?? limit.ttl / 1000));
              throw new TemporarilyUnavailable(
                `too many client metadata documents fetched for this address; retry after ${seconds} seconds`,
                seconds,
              );
            }
          },
        } satisfies DocumentOptions)
      : undefined,
  });

  // A browser is on the other end of these routes: errors are pages, not JSON.
  app.setErrorHandler(function authorizeErrorPage(error: FastifyError, request, reply) {
    const status = errorStatus(request, reply, error);
    return sendPage(reply, status, errorPage(errorText(status, request.id)));
  });

  app.get<{ Querystring: RawParams }>(
    '/oauth/authorize',
    {
      schema: {
        tags: ['oauth'],
        summary: 'Authorization endpoint (RFC 6749 §4.1.1): login and consent pages',
        produces: ['text/html'],
        querystring: AUTHORIZE_QUERY_DOC,
      },
      // Documentation only: the checks in ./checks answer a bad request with an
      // error page or an error redirect (RFC 6749 §4.1.2.1), never a 400 problem.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const validation = await validateAuthorizationRequest(app.db, request.query, validationOptions(request));
      if (!validation.ok) return pageOrRedirect(reply, issuer, validation, 302);
      const session = await webSession(request);
      if (!session) return reply.redirect(loginUrl(request.url), 302);
      const { request: authorization } = validation;
      return sendPage(
        reply,
        200,
        consentPage({
          csrf: csrf.token(request, reply),
          client: describeClient(authorization.client, authorization.redirectUri),
          redirectOrigin: new URL(authorization.redirectUri).origin,
          scopes: authorization.scopes,
          email: session.email,
          organizations: await listActiveMemberships(app.db, session.user_id),
          selectedOrganizationId: session.organization_id,
          params: authorization.params,
        }),
        { formTargets: [new URL(authorization.redirectUri).origin] },
      );
    },
  );

  app.post<{ Body: RawParams | undefined }>(
    '/oauth/authorize',
    {
      schema: { tags: ['oauth'], summary: 'Consent decision (the consent page form)', produces: ['text/html'], hide: true },
    },
    async (request, reply) => {
      const body = request.body && typeof request.body === 'object' ? request.body : {};
      const params = pick(body);
      const session = await webSession(request);
      if (!session) {
        const retry = new URLSearchParams();
        for (const [name, value] of Object.entries(params)) if (typeof value === 'string') retry.append(name, value);
        return reply.redirect(loginUrl(`/oauth/authorize?${retry}`), 303);
      }
      if (!csrf.verify(request, body.csrf)) {
        return sendPage(
          reply,
          403,
          errorPage({
            title: 'Form expired',
            message: 'The consent form expired or did not come from this site. Go back to the application and connect again.',
          }),
        );
      }
      const validation = await validateAuthorizationRequest(app.db, params, validationOptions(request));
      if (!validation.ok) return pageOrRedirect(reply, issuer, validation, 303);
      const { request: authorization } = validation;
      if (body.decision === 'deny') {
        const denied = new AccessDenied('the user denied the request (RFC 6749 §4.1.2.1)');
        return reply.redirect(
          authorizationResponseUrl(authorization.redirectUri, issuer, {
            error: denied.error,
            error_description: denied.description,
            state: authorization.state,
          }),
          303,
        );
      }
      if (body.decision !== 'allow') {
        return sendPage(
          reply,
          400,
          errorPage({ title: 'Choose Allow or Deny', message: 'The consent form was submitted without a decision.' }),
        );
      }
      const memberships = await listActiveMemberships(app.db, session.user_id);
      const organizationId = typeof body.organization_id === 'string' ? body.organization_id : session.organization_id;
      if (!memberships.some((m) => m.id === organizationId)) {
        return sendPage(
          reply,
          403,
          errorPage({ title: 'Organization not available', message: 'You are not an active member of the organization you chose.' }),
        );
      }
      const code = await issueAuthorizationCode(app.db, app.config, authorization, { userId: session.user_id, organizationId });
      return reply.redirect(authorizationResponseUrl(authorization.redirectUri, issuer, { code, state: authorization.state }), 303);
    },
  );
}

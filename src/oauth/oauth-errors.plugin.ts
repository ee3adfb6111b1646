// The error handler of the OAuth JSON endpoints (token, revoke, userinfo):
// RFC 6749 §5.2 `{error, error_description}` instead of problem+json, with
// WWW-Authenticate on 401s (Basic for client authentication, RFC 6749 §5.2;
// Bearer for access tokens, RFC 6750 §3) and no caching (RFC 6749 §5.1).
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { errorStatus } from '../http/error-status.ts';
import {
  InvalidClient,
  InvalidRequest,
  InvalidToken,
  OAuthError,
  ServerError,
  ServiceUnavailable,
  TemporarilyUnavailable,
} from './oauth.errors.ts';
import { bearerChallenge, REALM } from './platform-guard.ts';

/** The OAuth error for an error that is not one, answered with `status` (errorStatus). */
function toOAuthError(error: FastifyError, status: number): OAuthError {
  if (status === 503) return new ServiceUnavailable('the service is temporarily unavailable; retry after the Retry-After delay');
  if (status === 500) return new ServerError('an unexpected error occurred');
  if (status === 429) return new TemporarilyUnavailable(`${error.message} (rate limit)`);
  if (error.validation) return new InvalidRequest(`the request is malformed: ${error.message} (RFC 6749 §5.2)`);
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new InvalidRequest('the request body is too large');
  if (error.code?.startsWith('FST_ERR_CTP_')) {
    return new InvalidRequest('send the parameters as application/x-www-form-urlencoded (or JSON) (RFC 6749 §3.2)');
  }
  return new InvalidRequest(error.message);
}

export function sendOAuthError(reply: FastifyReply, error: OAuthError) {
  if (error instanceof InvalidClient) reply.header('www-authenticate', `Basic realm="${REALM}", charset="UTF-8"`);
  if (error instanceof InvalidToken && !reply.hasHeader('www-authenticate')) {
    reply.header('www-authenticate', bearerChallenge({ code: error.error, description: error.description }));
  }
  return reply
    .code(error.statusCode)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .type('application/json; charset=utf-8')
    .send({ error: error.error, error_description: error.description });
}

export function installOAuthErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(function renderOAuthError(error: FastifyError, request, reply) {
    // An OAuth error carries its RFC 6749 status; anything else is answered by errorStatus's rule.
    const oauthError = error instanceof OAuthError ? error : toOAuthError(error, errorStatus(request, reply, error));
    if (oauthError.statusCode < 500) {
      request.log.info({ oauth_error: oauthError.error, description: oauthError.description }, 'oauth request refused');
    }
    return sendOAuthError(reply, oauthError);
  });
}

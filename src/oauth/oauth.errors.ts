// OAuth 2.0 errors keep their RFC 6749 names (§4.1.2.1, §5.2; RFC 6750 §3.1;
// RFC 7009 §2.2.1). Each is declared literally. The message becomes
// error_description and names the rule that failed with its RFC section.
import type { RevokedReason } from './grants.queries.ts';

/**
 * RFC 6749 §5.2: error_description is ASCII without '"' and '\\'
 * (%x20-21 / %x23-5B / %x5D-7E), so "§" is spelled out and anything else
 * outside that set becomes a space.
 */
export function errorDescription(message: string): string {
  return message.replace(/§\s*/g, 'section ').replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, ' ');
}

export abstract class OAuthError extends Error {
  abstract readonly error: string;
  readonly statusCode: number = 400;
  /** Set by a check whose failure must also revoke the grant (code replay, late refresh reuse). */
  revokeGrant?: RevokedReason;
  /** Set once that revocation is made (the grant's id), so the process evicts it after the commit. */
  revokedGrantId?: string;

  /** The message as an RFC 6749 §5.2 error_description. */
  get description(): string {
    return errorDescription(this.message);
  }
}

export class InvalidRequest extends OAuthError {
  readonly error = 'invalid_request';
}

/** 401 with WWW-Authenticate (RFC 6749 §5.2). */
export class InvalidClient extends OAuthError {
  readonly error = 'invalid_client';
  override readonly statusCode = 401;
}

export class InvalidGrant extends OAuthError {
  readonly error = 'invalid_grant';
}

export class UnsupportedGrantType extends OAuthError {
  readonly error = 'unsupported_grant_type';
}

export class InvalidScope extends OAuthError {
  readonly error = 'invalid_scope';
}

export class AccessDenied extends OAuthError {
  readonly error = 'access_denied';
  override readonly statusCode = 403;
}

export class UnsupportedResponseType extends OAuthError {
  readonly error = 'unsupported_response_type';
}

/** RFC 6750 §3.1: 401 with WWW-Authenticate: Bearer. */
export class InvalidToken extends OAuthError {
  readonly error = 'invalid_token';
  override readonly statusCode = 401;
}

export class TemporarilyUnavailable extends OAuthError {
  readonly error = 'temporarily_unavailable';
  override readonly statusCode = 429;
  /** When the limit that refused it opens again, for a Retry-After header. */
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, retryAfterSeconds?: number) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The database is away: 503 with Retry-After, which clients retry (RFC 9110 §15.6.4). */
export class ServiceUnavailable extends OAuthError {
  readonly error = 'temporarily_unavailable';
  override readonly statusCode = 503;
}

export class ServerError extends OAuthError {
  readonly error = 'server_error';
  override readonly statusCode = 500;
}

/** RFC 8707 §2: the requested resource is invalid, unknown, or not one this client may ask for. */
export class InvalidTarget extends OAuthError {
  readonly error = 'invalid_target';
}

/** RFC 7591 §3.2.2: a redirect URI a client cannot register. */
export class InvalidRedirectUri extends OAuthError {
  readonly error = 'invalid_redirect_uri';
}

/** RFC 7591 §3.2.2: other client metadata this server does not accept. */
export class InvalidClientMetadata extends OAuthError {
  readonly error = 'invalid_client_metadata';
}

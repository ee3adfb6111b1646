/**
 * RFC 6749 §5.2: error_description is ASCII without '"' and '\\'
 * (%x20-21 / %x23-5B / %x5D-7E), so "§" is spelled out and anything else
 * outside that set becomes a space.
 */
export function errorDescription(message) {
    return message.replace(/§\s*/g, 'section ').replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, ' ');
}
export class OAuthError extends Error {
    statusCode = 400;
    /** Set by a check whose failure must also revoke the grant (code replay, late refresh reuse). */
    revokeGrant;
    /** The message as an RFC 6749 §5.2 error_description. */
    get description() {
        return errorDescription(this.message);
    }
}
export class InvalidRequest extends OAuthError {
    error = 'invalid_request';
}
/** 401 with WWW-Authenticate (RFC 6749 §5.2). */
export class InvalidClient extends OAuthError {
    error = 'invalid_client';
    statusCode = 401;
}
export class InvalidGrant extends OAuthError {
    error = 'invalid_grant';
}
export class UnauthorizedClient extends OAuthError {
    error = 'unauthorized_client';
}
export class UnsupportedGrantType extends OAuthError {
    error = 'unsupported_grant_type';
}
export class InvalidScope extends OAuthError {
    error = 'invalid_scope';
}
export class AccessDenied extends OAuthError {
    error = 'access_denied';
    statusCode = 403;
}
export class UnsupportedResponseType extends OAuthError {
    error = 'unsupported_response_type';
}
/** RFC 6750 §3.1: 401 with WWW-Authenticate: Bearer. */
export class InvalidToken extends OAuthError {
    error = 'invalid_token';
    statusCode = 401;
}
export class TemporarilyUnavailable extends OAuthError {
    error = 'temporarily_unavailable';
    statusCode = 429;
}
/** The database is away: 503 with Retry-After, which clients retry (RFC 9110 §15.6.4). */
export class ServiceUnavailable extends OAuthError {
    error = 'temporarily_unavailable';
    statusCode = 503;
}
export class ServerError extends OAuthError {
    error = 'server_error';
    statusCode = 500;
}
//# sourceMappingURL=oauth.errors.js.map
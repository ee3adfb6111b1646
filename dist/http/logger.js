// pino options for Fastify: JSON lines with the request id, and no secrets.
// Credentials travel in headers and bodies, which are never logged; the
// redaction paths are a second line of defence, and query strings that may
// carry codes or tokens are masked in the logged URL.
import { randomUUID } from 'node:crypto';
const SECRET_QUERY_PARAMS = /([?&](?:code|code_verifier|access_token|refresh_token|token|client_secret|password)=)[^&#]*/gi;
export function maskUrl(url) {
    return url.replace(SECRET_QUERY_PARAMS, '$1[redacted]');
}
export function loggerOptions(level, stream) {
    return {
        level,
        ...(stream ? { stream } : {}),
        redact: {
            paths: [
                'req.headers.authorization', 'req.headers["x-user-token"]', 'req.headers["x-client-secret"]',
                'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.token', '*.client_secret', '*.secret',
            ],
            censor: '[redacted]',
        },
        serializers: {
            req(request) {
                return { method: request.method, url: maskUrl(request.url), remoteAddress: request.ip };
            },
        },
    };
}
const REQUEST_ID = /^[\w.-]{1,64}$/;
/** Honour a caller's x-request-id when it is sane, else make one. */
export function genReqId(request) {
    const incoming = request.headers['x-request-id'];
    return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
//# sourceMappingURL=logger.js.map
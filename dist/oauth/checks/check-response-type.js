// RFC 6749 §3.1.1 and §4.1.1: response_type is required and only "code" (the
// authorization code grant) is supported; RFC 9700 §2.1.2 rules out implicit.
import { InvalidRequest, UnsupportedResponseType } from '../oauth.errors.js';
import { stringParam } from './context.js';
export const checkResponseType = function checkResponseType(ctx) {
    const responseType = stringParam(ctx.params, 'response_type');
    if (responseType === undefined)
        throw new InvalidRequest('response_type is required (RFC 6749 §3.1.1)');
    if (responseType !== 'code') {
        throw new UnsupportedResponseType('only response_type=code is supported (RFC 6749 §4.1.1, RFC 9700 §2.1.2)');
    }
};
//# sourceMappingURL=check-response-type.js.map
import { requireBearerToken, requirePlatformToken } from '../oauth/platform-guard.js';
import { requireUserToken } from './user-token.hook.js';
export function requireUserOrPlatformToken(scope) {
    const platformGuard = requirePlatformToken(scope);
    const bearerGuard = requireBearerToken(scope);
    return async function userOrPlatform(request, reply) {
        if (request.headers['x-user-token'] !== undefined)
            return requireUserToken(request);
        const guard = request.headers['x-client-id'] !== undefined || request.headers['x-client-secret'] !== undefined ? platformGuard : bearerGuard;
        return guard.call(this, request, reply);
    };
}
//# sourceMappingURL=user-or-platform.hook.js.map
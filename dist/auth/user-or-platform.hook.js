import { requirePlatformToken } from '../oauth/platform-guard.js';
import { requireUserToken } from './user-token.hook.js';
export function requireUserOrPlatformToken(scope) {
    const platformGuard = requirePlatformToken(scope);
    return async function userOrPlatform(request, reply) {
        if (request.headers['x-user-token'] !== undefined)
            return requireUserToken(request);
        return platformGuard.call(this, request, reply);
    };
}
/** OpenAPI security of those routes: x-user-token, or the three platform headers together. */
export const USER_OR_PLATFORM_SECURITY = [{ userToken: [] }, { bearer: [], clientId: [], clientSecret: [] }];
//# sourceMappingURL=user-or-platform.hook.js.map
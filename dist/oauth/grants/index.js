import { handleAuthorizationCode } from './authorization-code.js';
import { handleRefreshToken } from './refresh-token.js';
export const GRANTS = {
    authorization_code: handleAuthorizationCode,
    refresh_token: handleRefreshToken,
};
//# sourceMappingURL=index.js.map
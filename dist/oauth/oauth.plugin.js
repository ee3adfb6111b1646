// The OAuth 2.0 authorization server (DESIGN §5 "OAuth 2.0"), encapsulated so
// its form parsing and error rendering stay here: the JSON endpoints answer
// RFC 6749 §5.2 errors, the authorization endpoint answers with pages or
// redirects. Metadata needs neither.
import formbody from '@fastify/formbody';
import authorizeRoutes from './authorize.route.js';
import metadataRoutes from './metadata.route.js';
import { installOAuthErrorHandler } from './oauth-errors.plugin.js';
import revokeRoutes from './revoke.route.js';
import tokenRoutes from './token.route.js';
import userinfoRoutes from './userinfo.route.js';
async function oauthJsonEndpoints(app) {
    await app.register(formbody, { bodyLimit: 16 * 1024 });
    installOAuthErrorHandler(app);
    await app.register(tokenRoutes);
    await app.register(revokeRoutes);
    await app.register(userinfoRoutes);
}
export default async function oauthPlugin(app) {
    await app.register(metadataRoutes);
    await app.register(authorizeRoutes);
    await app.register(oauthJsonEndpoints);
}
//# sourceMappingURL=oauth.plugin.js.map
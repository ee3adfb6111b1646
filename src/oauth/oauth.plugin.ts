// The OAuth 2.0 authorization server (docs/interface.md §10), encapsulated so
// its form parsing and error rendering stay here: the JSON endpoints answer
// RFC 6749 §5.2 errors, the authorization endpoint answers with pages or
// redirects. Metadata needs neither.
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { Csrf } from '../crypto/csrf.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import authorizeRoutes from './authorize.route.ts';
import metadataRoutes from './metadata.route.ts';
import { installOAuthErrorHandler } from './oauth-errors.plugin.ts';
import registerRoutes from './public-clients/register.route.ts';
import revokeRoutes from './revoke.route.ts';
import tokenRoutes from './token.route.ts';
import userinfoRoutes from './userinfo.route.ts';

async function oauthJsonEndpoints(app: FastifyInstance, options: { refreshSuccessors: SecretBox }) {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  installOAuthErrorHandler(app);
  await app.register(tokenRoutes, options);
  await app.register(revokeRoutes);
  await app.register(userinfoRoutes);
  if (app.config.oauthDynamicRegistration) await app.register(registerRoutes);
}

export default async function oauthPlugin(app: FastifyInstance, options: { csrf: Csrf; refreshSuccessors: SecretBox }) {
  await app.register(metadataRoutes);
  await app.register(authorizeRoutes, { csrf: options.csrf });
  await app.register(oauthJsonEndpoints, { refreshSuccessors: options.refreshSuccessors });
}

// GET /.well-known/oauth-authorization-server (RFC 8414 §3): issuer = BASE_URL.
import type { FastifyInstance } from 'fastify';
import { SUPPORTED_GRANT_TYPES } from './checks/check-grant-type.ts';
import { MetadataSchema } from './oauth.schemas.ts';
import { SUPPORTED_SCOPES } from './scopes.ts';

export function authorizationServerMetadata(
  issuer: string,
  options: { dynamicRegistration: boolean; metadataDocuments: boolean } = { dynamicRegistration: false, metadataDocuments: false },
) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    userinfo_endpoint: `${issuer}/oauth/userinfo`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    // RFC 7591 §3 and the Client ID Metadata Document draft §5: how public clients register themselves.
    ...(options.dynamicRegistration ? { registration_endpoint: `${issuer}/oauth/register` } : {}),
    client_id_metadata_document_supported: options.metadataDocuments,
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...SUPPORTED_GRANT_TYPES],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  };
}

export default async function metadataRoutes(app: FastifyInstance) {
  const metadata = authorizationServerMetadata(app.config.baseUrl, {
    dynamicRegistration: app.config.oauthDynamicRegistration,
    metadataDocuments: app.config.oauthClientMetadataDocuments,
  });
  app.get(
    '/.well-known/oauth-authorization-server',
    {
      schema: { tags: ['oauth'], summary: 'Authorization server metadata (RFC 8414)', response: { 200: MetadataSchema } },
    },
    async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(metadata),
  );
}

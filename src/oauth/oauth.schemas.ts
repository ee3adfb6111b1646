// OpenAPI shapes of the OAuth endpoints. Request parameters are documented
// here but validated by the named checks in checks/, which answer in RFC 6749
// §5.2 form rather than problem+json.
import { Type } from '@sinclair/typebox';

export const OAuthErrorSchema = Type.Object(
  { error: Type.String(), error_description: Type.Optional(Type.String()) },
  { description: 'RFC 6749 §5.2 error response' },
);

export const TokenRequestBody = Type.Object(
  {
    grant_type: Type.Optional(Type.String({ enum: ['authorization_code', 'refresh_token'] })),
    code: Type.Optional(Type.String()),
    redirect_uri: Type.Optional(Type.String()),
    code_verifier: Type.Optional(Type.String()),
    refresh_token: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    client_secret: Type.Optional(Type.String()),
    resource: Type.Optional(Type.String({ description: 'RFC 8707: the resource the tokens are for; for public clients {BASE_URL}/mcp' })),
  },
  {
    description:
      'application/x-www-form-urlencoded (or JSON). Client authentication: HTTP Basic or client_id + client_secret; a public client sends client_id alone (none).',
  },
);

export const TokenResponseSchema = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  refresh_token: Type.String(),
  scope: Type.String(),
});

export const RevokeRequestBody = Type.Object({
  token: Type.Optional(Type.String()),
  token_type_hint: Type.Optional(Type.String({ enum: ['access_token', 'refresh_token'] })),
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String()),
});

export const UserinfoSchema = Type.Object({
  sub: Type.String({ format: 'uuid' }),
  email: Type.String(),
  name: Type.String(),
  organization: Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }),
});

export const MetadataSchema = Type.Object(
  {
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    userinfo_endpoint: Type.String(),
    revocation_endpoint: Type.String(),
    registration_endpoint: Type.Optional(
      Type.String({ description: 'RFC 7591 dynamic registration (absent when OAUTH_DYNAMIC_REGISTRATION=false)' }),
    ),
    client_id_metadata_document_supported: Type.Boolean({
      description: 'a client_id may be the https URL of a Client ID Metadata Document (OAUTH_CLIENT_METADATA_DOCUMENTS)',
    }),
    scopes_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String()),
    response_modes_supported: Type.Array(Type.String()),
    grant_types_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
    code_challenge_methods_supported: Type.Array(Type.String()),
    authorization_response_iss_parameter_supported: Type.Boolean(),
  },
  { description: 'RFC 8414 authorization server metadata' },
);

export const ProtectedResourceMetadataSchema = Type.Object(
  {
    resource: Type.String(),
    authorization_servers: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
    bearer_methods_supported: Type.Array(Type.String()),
    resource_name: Type.String(),
    resource_documentation: Type.String(),
  },
  { description: 'RFC 9728 protected resource metadata of {BASE_URL}/mcp' },
);

export const RegistrationRequestSchema = Type.Object(
  {
    redirect_uris: Type.Array(Type.String(), { minItems: 1, maxItems: 10 }),
    token_endpoint_auth_method: Type.Optional(Type.Literal('none')),
    grant_types: Type.Optional(Type.Array(Type.String({ enum: ['authorization_code', 'refresh_token'] }))),
    response_types: Type.Optional(Type.Array(Type.Literal('code'))),
    client_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { description: 'RFC 7591 §2 client metadata; public clients only. Other fields are ignored (RFC 7591 §2).', additionalProperties: true },
);

export const RegistrationResponseSchema = Type.Object(
  {
    client_id: Type.String(),
    client_id_issued_at: Type.Integer(),
    client_name: Type.String(),
    redirect_uris: Type.Array(Type.String()),
    token_endpoint_auth_method: Type.Literal('none'),
    grant_types: Type.Array(Type.String()),
    response_types: Type.Array(Type.String()),
  },
  { description: 'RFC 7591 §3.2.1 client information response (no secret: a public client)' },
);

export const RegistrationErrorSchema = Type.Object(
  { error: Type.String(), error_description: Type.Optional(Type.String()) },
  { description: 'RFC 7591 §3.2.2 error response' },
);

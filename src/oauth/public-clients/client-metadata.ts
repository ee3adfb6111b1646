// The client metadata a public client states about itself, in a Client ID
// Metadata Document (draft-ietf-oauth-client-id-metadata-document §4) or an
// RFC 7591 §2 registration request: one reading of it for both. Fields this
// server does not use are ignored (RFC 7591 §2: "MUST ignore any client
// metadata sent by the client that it does not understand").
import { NAME_MAX_LENGTH } from '../../http/schemas.ts';
import { redirectUriProblem } from '../redirect-uri.ts';

/** Enough for a native app's loopback URI and a web callback or two. */
export const MAX_REDIRECT_URIS = 10;

export interface PublicClientMetadata {
  name: string | undefined;
  redirectUris: string[];
}

export type MetadataReading = { ok: true; metadata: PublicClientMetadata } | { ok: false; field: string; problem: string };

function refuse(field: string, problem: string): MetadataReading {
  return { ok: false, field, problem };
}

function listOf(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;
}

/**
 * `authMethodRequired`: a metadata document must state token_endpoint_auth_method
 * none (the draft's §4.1); a registration that omits it gets none (RFC 7591
 * §3.2.1 lets the server replace a default it does not support).
 */
export function readClientMetadata(body: unknown, options: { authMethodRequired: boolean }): MetadataReading {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return refuse('body', 'must be a JSON object');
  const doc = body as Record<string, unknown>;
  const method = doc.token_endpoint_auth_method;
  if (method !== 'none' && (options.authMethodRequired || method !== undefined)) {
    return refuse('token_endpoint_auth_method', 'must be none: only public clients register themselves, and they use PKCE');
  }
  const redirectUris = listOf(doc.redirect_uris);
  if (!redirectUris || redirectUris.length === 0) return refuse('redirect_uris', 'must list at least one redirect URI');
  if (redirectUris.length > MAX_REDIRECT_URIS) return refuse('redirect_uris', `must list at most ${MAX_REDIRECT_URIS} redirect URIs`);
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) return refuse('redirect_uris', `"${uri.slice(0, 100)}" ${problem}`);
  }
  const grantTypes = doc.grant_types === undefined ? ['authorization_code'] : listOf(doc.grant_types);
  if (!grantTypes?.includes('authorization_code') || grantTypes.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
    return refuse('grant_types', 'must include authorization_code, and nothing but authorization_code and refresh_token');
  }
  const responseTypes = doc.response_types === undefined ? ['code'] : listOf(doc.response_types);
  if (!responseTypes || responseTypes.some((r) => r !== 'code')) return refuse('response_types', 'must be ["code"]');
  const name = doc.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.trim().length < 1 || name.trim().length > NAME_MAX_LENGTH)) {
    return refuse('client_name', `must be text of 1 to ${NAME_MAX_LENGTH} characters`);
  }
  return { ok: true, metadata: { name: typeof name === 'string' ? name.trim() : undefined, redirectUris: [...new Set(redirectUris)] } };
}

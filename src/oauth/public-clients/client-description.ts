// What the consent page says about who is asking: a self-registered client's
// name is whatever it chose, so the page also shows where it lives (the host
// of its metadata document, or of its redirect) and that nobody vetted it.
import type { OAuthClient } from '../clients.queries.ts';
import { isLoopbackRedirect } from '../redirect-uri.ts';

/** Who is asking, in the words the consent page uses (web/pages/consent.page.ts). */
export interface ClientDescription {
  name: string;
  /** Where the client's document or redirect lives: a host, or "an app on this computer" for a loopback redirect. */
  from: string;
  /** Self-registered (a metadata document or RFC 7591): nobody has vetted it. */
  verified: boolean;
}

export const LOOPBACK_DESCRIPTION = 'an app on this computer';

export function describeClient(client: Pick<OAuthClient, 'name' | 'kind' | 'client_id'>, redirectUri: string): ClientDescription {
  const redirectHost = isLoopbackRedirect(redirectUri) ? LOOPBACK_DESCRIPTION : new URL(redirectUri).host;
  if (client.kind === 'metadata_document') return { name: client.name, from: new URL(client.client_id).host, verified: false };
  return { name: client.name, from: redirectHost, verified: client.kind === 'platform' };
}
